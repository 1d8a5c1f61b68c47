/**
 * @module One way to serialise desired state: children sorted by (apiVersion, kind,
 * namespace, name), object keys sorted, `null`/`undefined` dropped (cdk8s `sanitizeValue`).
 * Same input, byte-identical output — Metacontroller compares what we send with what it sees.
 */

export interface ObjectIdentity {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders objects by apiVersion, kind, namespace, name (plain code-unit order, locale-free). */
export function compareObjects(a: ObjectIdentity, b: ObjectIdentity): number {
  return (
    compareText(a.apiVersion ?? '', b.apiVersion ?? '') ||
    compareText(a.kind ?? '', b.kind ?? '') ||
    compareText(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compareText(a.metadata.name, b.metadata.name)
  );
}

/** Returns a new array of `objects` in canonical order. */
export function sortObjects<T extends ObjectIdentity>(objects: readonly T[]): T[] {
  return [...objects].sort(compareObjects);
}

/** Locale-free string comparison for `Array.prototype.sort`. */
export const byText = compareText;

/**
 * Deep copy with object keys sorted and `null`/`undefined` members removed.
 * `keepNull` keeps `null` map values where they mean "delete this key" (decorator labels).
 * A `__proto__` key is copied as a plain member (plain assignment would drop it, or set the
 * copy's prototype). Recursive: callers bound the depth of what they pass (`EchoedValueSchema`).
 */
export function canonicalize(value: unknown, options: { readonly keepNull?: boolean } = {}): unknown {
  const keepNull = options.keepNull ?? false;
  if (Array.isArray(value)) {
    return value.filter((v) => v !== undefined && v !== null).map((v) => canonicalize(v, options));
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort(compareText)) {
      const member = (value as Record<string, unknown>)[key];
      if (member === undefined) continue;
      if (member === null && !keepNull) continue;
      const copy = member === null ? null : canonicalize(member, options);
      if (key === '__proto__')
        Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
      else out[key] = copy;
    }
    return out;
  }
  return value;
}
