/**
 * @module Join pacing, the pure part: what a request says about Nodes arriving, and how long its
 * answer is held for it (docs/architecture.md#join-pacing). A NodeShard's request holds its
 * profiles' creation times; the shard writes the arrival it saw into its status, and the chain reads
 * its shards' statuses and the creation times of the joining Nodes it relates (managed, no profile
 * yet). Everything is read from the request and `now`, so every replica of the hook server computes
 * the same hold for the same request.
 */
import type { NodeProfile, NodeShardArrival } from '../../k8s/index.js';

/** A profile created this recently (timestamps have whole seconds) means the shard is still filling. */
export const ARRIVING_WITHIN_SECONDS = 2;
/** Profiles created further apart than this belong to different arrivals (a Node joining later). */
export const ARRIVAL_GAP_SECONDS = 10;
/**
 * How far the hook server's clock may be from the API server's (which stamps creation times) and
 * pacing still judge right: a profile seems up to this much older or newer than it is. A newest
 * profile further in the future than this means the clocks disagree: nothing is held.
 */
export const CLOCK_SKEW_SECONDS = 3;
/**
 * Nodes arriving for less than this are not held, unless there are {@link MIN_ARRIVAL_NODES} of them
 * already: one Node (or a few) joining a settled cluster.
 */
export const MIN_ARRIVAL_SECONDS = 2;
/**
 * Nodes arriving together in this number are held however short their arrival so far: a node pool
 * of 60 created within 2 s would otherwise sync its shards and the chain about once per Node, all
 * before the arrival lasted {@link MIN_ARRIVAL_SECONDS} (measured in test/e2e/shards.e2e.test.ts).
 */
export const MIN_ARRIVAL_NODES = 5;
const MIN_HOLD_SECONDS = 1;
/** A hold lasts this fraction of the arrival so far: syncs of a parent at times growing by 1.5×. */
const HOLD_FRACTION = 0.5;

/** How long a parent waits before it is answered, and the arrival that says so (both in seconds). */
export interface Pace {
  readonly arrivalSeconds: number;
  readonly holdSeconds: number;
}

function seconds(time: string | undefined): number {
  return Date.parse(time ?? '') / 1000;
}

/** What an arrival is read from: an object's creation time (a NodeProfile's, a joining Node's). */
export interface Created {
  readonly metadata: { readonly creationTimestamp?: string | undefined };
}

/**
 * The latest arrival of `objects` (a shard's profiles, the Nodes the chain relates), from their
 * creation times: its newest one, the oldest reached from it without a gap over
 * `ARRIVAL_GAP_SECONDS`, and how many are in between (one Node joining a settled cluster: the same
 * time, 1). `undefined` when none has a creation time.
 * @example profileArrival([profileCreatedAt('2026-01-01T00:00:00Z')]) // { since: '2026-01-01T00:00:00Z', newest: '2026-01-01T00:00:00Z', nodes: 1 }
 */
export function profileArrival(objects: readonly Created[]): NodeShardArrival | undefined {
  const created = objects
    .map((object) => object.metadata.creationTimestamp ?? '')
    .filter((time) => Number.isFinite(seconds(time)))
    .sort((a, b) => seconds(b) - seconds(a));
  const newest = created[0];
  if (newest === undefined) return undefined;
  let since = newest;
  let nodes = 0;
  for (const time of created) {
    if (seconds(since) - seconds(time) > ARRIVAL_GAP_SECONDS) break;
    since = time;
    nodes++;
  }
  return { since, newest, nodes };
}

/**
 * The hold for `nodes` Nodes that have been arriving `arrivalSeconds`: half of it, 1 s to
 * `maxHoldSeconds`; 0 for an arrival under 2 s of fewer than {@link MIN_ARRIVAL_NODES} Nodes.
 */
export function holdForArrival(arrivalSeconds: number, maxHoldSeconds: number, nodes = 1): number {
  if (maxHoldSeconds <= 0 || !(arrivalSeconds >= 0)) return 0;
  if (arrivalSeconds < MIN_ARRIVAL_SECONDS && !(nodes >= MIN_ARRIVAL_NODES)) return 0;
  return Math.min(maxHoldSeconds, Math.max(MIN_HOLD_SECONDS, HOLD_FRACTION * arrivalSeconds));
}

/** Seconds since the arrival's newest profile, if `now` is within the skew of it (else the clocks disagree). */
function ageOf(arrival: NodeShardArrival, now: string): number | undefined {
  const age = seconds(now) - seconds(arrival.newest);
  return Number.isFinite(age) && age >= -CLOCK_SKEW_SECONDS ? age : undefined;
}

function spanOf(arrival: NodeShardArrival): number {
  return seconds(arrival.newest) - seconds(arrival.since);
}

/** How many Nodes an arrival holds (a status written without the count: one). */
function nodesOf(arrival: NodeShardArrival): number {
  return arrival.nodes ?? 1;
}

/**
 * A shard's pace: held while its newest profile was created within `ARRIVING_WITHIN_SECONDS` of `now`
 * (give or take `CLOCK_SKEW_SECONDS`), for {@link holdForArrival} of its arrival; `undefined` when
 * nothing is arriving or the hold is 0.
 * @example shardPace(profilesCreatedEverySecondFor(30), '…', 60) // { arrivalSeconds: 30, holdSeconds: 15 }
 */
export function shardPace(profiles: readonly NodeProfile[], now: string, maxHoldSeconds: number): Pace | undefined {
  const arrival = profileArrival(profiles);
  if (arrival === undefined) return undefined;
  const age = ageOf(arrival, now);
  if (age === undefined || age > ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS) return undefined;
  const arrivalSeconds = spanOf(arrival);
  const holdSeconds = holdForArrival(arrivalSeconds, maxHoldSeconds, nodesOf(arrival));
  return holdSeconds > 0 ? { arrivalSeconds, holdSeconds } : undefined;
}

/**
 * The chain's pace, from the arrivals its shards wrote into their statuses and the arrival of the
 * Nodes it relates (`joining`: managed Nodes without a profile yet, {@link profileArrival} of them;
 * each leaves the chain's request once profiled, and every joining Node syncs the chain twice, as
 * it comes and as it leaves). A shard still counts as arriving until its own held sync would have
 * written a newer arrival (its newest profile's time, the arriving window and the shard's hold), the
 * joining Nodes while their newest is within the arriving window. The chain is held for
 * {@link holdForArrival} of the arrival over them (from the oldest `since` to the newest `newest`,
 * their Nodes summed), but not past the time the last of them stops counting: a chain sync after
 * the Nodes stopped is answered within seconds.
 */
export function chainPace(
  arrivals: readonly (NodeShardArrival | undefined)[],
  now: string,
  maxHoldSeconds: number,
  joining?: NodeShardArrival,
): Pace | undefined {
  let since = Number.POSITIVE_INFINITY;
  let newest = Number.NEGATIVE_INFINITY;
  let nodes = 0;
  let remaining = 0;
  const counted = [
    ...arrivals.map((arrival) => ({ arrival, fromShard: true })),
    { arrival: joining, fromShard: false },
  ];
  for (const { arrival, fromShard } of counted) {
    if (arrival === undefined) continue;
    const age = ageOf(arrival, now);
    if (age === undefined) continue;
    // A joining Node is in the request until it is profiled: nothing of it waits on a held sync.
    const held = fromShard ? holdForArrival(spanOf(arrival), maxHoldSeconds, nodesOf(arrival)) : 0;
    const window = ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS + held;
    if (age > window) continue;
    since = Math.min(since, seconds(arrival.since));
    newest = Math.max(newest, seconds(arrival.newest));
    nodes += nodesOf(arrival);
    remaining = Math.max(remaining, window - age);
  }
  if (!Number.isFinite(newest)) return undefined;
  const arrivalSeconds = newest - since;
  const holdSeconds = Math.min(holdForArrival(arrivalSeconds, maxHoldSeconds, nodes), remaining);
  return holdSeconds > 0 ? { arrivalSeconds, holdSeconds } : undefined;
}
