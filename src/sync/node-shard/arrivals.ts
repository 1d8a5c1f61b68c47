/**
 * @module Whether a shard's NodeProfiles are still arriving, read from their creation times: what
 * the hook server paces a shard's syncs by while many Nodes join at once (docs/architecture.md#node-shards).
 */
import type { NodeProfile } from '../../k8s/index.js';

/** A profile created this recently (timestamps have whole seconds) means the shard is still filling. */
export const ARRIVING_WITHIN_SECONDS = 2;
/** Profiles created further apart than this belong to different arrivals (a Node joining later). */
export const ARRIVAL_GAP_SECONDS = 10;

/**
 * How long the shard's profiles have been arriving, in seconds, if its newest profile was created
 * within `ARRIVING_WITHIN_SECONDS` of `now`; `undefined` when nothing is arriving. The arrival starts
 * at the oldest profile reached from the newest without a gap over `ARRIVAL_GAP_SECONDS`, so one Node
 * joining a settled cluster is an arrival of 0 s, and a first install one as long as the install.
 * @example shardArrival([{ metadata: { name: 'a', creationTimestamp: '2026-01-01T00:00:00Z' } }], '2026-01-01T00:00:01Z') // 0
 */
export function shardArrival(profiles: readonly NodeProfile[], now: string): number | undefined {
  const nowSeconds = Date.parse(now) / 1000;
  const created = profiles
    .map((profile) => Date.parse(profile.metadata.creationTimestamp ?? '') / 1000)
    .filter((seconds) => Number.isFinite(seconds))
    .sort((a, b) => b - a);
  const newest = created[0];
  if (newest === undefined || !Number.isFinite(nowSeconds) || nowSeconds - newest > ARRIVING_WITHIN_SECONDS)
    return undefined;
  let start = newest;
  for (const seconds of created) {
    if (start - seconds > ARRIVAL_GAP_SECONDS) break;
    start = seconds;
  }
  return newest - start;
}
