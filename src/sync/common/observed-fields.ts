/** @module Reading observed objects we keep loose (Kueue's, whose schemas we do not own) and listing their names in a condition. */

/** Names listed in a message; the rest are counted (a status must stay small at any cluster size). */
const MAX_NAMES = 5;

/** Sorted names, the first few listed and the rest counted. */
export function listedNames(names: readonly string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, MAX_NAMES).join(', ');
  return sorted.length > MAX_NAMES ? `${shown} and ${sorted.length - MAX_NAMES} more` : shown;
}

/** The value at `path` in a loosely typed object; undefined where any step is missing. */
export function fieldAt(object: unknown, ...path: string[]): unknown {
  let at: unknown = object;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The Topology an observed ResourceFlavor names, if any. */
export function topologyNameOf(flavor: unknown): string | undefined {
  const name = fieldAt(flavor, 'spec', 'topologyName');
  return typeof name === 'string' && name !== '' ? name : undefined;
}
