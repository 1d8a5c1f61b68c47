// Join pacing, the pure part (src/sync/node-shard/arrivals.ts): what a shard's profiles and the
// chain's shards say about Nodes arriving, and how long the hook server holds their syncs for it.
import { describe, expect, it } from 'vitest';
import type { NodeProfile } from '../../../src/k8s/index.js';
import {
  ARRIVAL_GAP_SECONDS,
  ARRIVING_WITHIN_SECONDS,
  CLOCK_SKEW_SECONDS,
  MIN_ARRIVAL_NODES,
  chainPace,
  holdForArrival,
  profileArrival,
  shardPace,
  syncNodeShard,
} from '../../../src/sync/index.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const profile = (name: string, createdAt: number | undefined): NodeProfile =>
  ({
    apiVersion: 'worker.gpustack.ai/v1alpha1',
    kind: 'NodeProfile',
    metadata: { name, ...(createdAt === undefined ? {} : { creationTimestamp: at(createdAt) }) },
    spec: { labels: {} },
  }) as NodeProfile;
/** Profiles created once a second from `from` to `to`. */
const everySecond = (from: number, to: number): NodeProfile[] =>
  Array.from({ length: to - from + 1 }, (_, i) => profile(`p${from + i}`, from + i));

describe('profileArrival', () => {
  it('spans from the newest profile back to the first gap wider than ARRIVAL_GAP_SECONDS', () => {
    const profiles = [profile('a', 0), profile('b', 100), profile('c', 100 + ARRIVAL_GAP_SECONDS), profile('d', 120)];
    expect(profileArrival(profiles)).toEqual({ since: at(100), newest: at(120), nodes: 3 });
  });

  it('is one instant for one Node joining a settled shard, and nothing without creation times', () => {
    expect(profileArrival([profile('old', 0), profile('new', 500)])).toEqual({
      since: at(500),
      newest: at(500),
      nodes: 1,
    });
    expect(profileArrival([profile('a', undefined)])).toBeUndefined();
    expect(profileArrival([])).toBeUndefined();
  });

  it('goes into the shard status the chain reads', () => {
    const profiles = Object.fromEntries(everySecond(0, 30).map((p) => [p.metadata.name, p]));
    const outcome = syncNodeShard({
      controller: {},
      parent: {
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'NodeShard',
        metadata: { name: 's0' },
        spec: { index: 0 },
      },
      children: {},
      related: { 'NodeProfile.worker.gpustack.ai/v1alpha1': profiles },
    } as never);
    expect(outcome.ok && (outcome.response.status as { arrival?: unknown }).arrival).toEqual({
      since: at(0),
      newest: at(30),
      nodes: 31,
    });
  });
});

describe('holdForArrival', () => {
  it('holds half of the arrival, at least 1 s and at most the maximum, from an arrival of 2 s', () => {
    expect(holdForArrival(0, 60)).toBe(0); // one Node joining: answered at once
    expect(holdForArrival(1.9, 60)).toBe(0);
    expect(holdForArrival(2, 60)).toBe(1);
    expect(holdForArrival(30, 60)).toBe(15);
    expect(holdForArrival(1000, 60)).toBe(60);
    expect(holdForArrival(30, 0)).toBe(0);
  });

  it(`holds ${MIN_ARRIVAL_NODES} Nodes or more arriving together from the start, for 1 s`, () => {
    expect(holdForArrival(0, 60, MIN_ARRIVAL_NODES - 1)).toBe(0); // a few Nodes joining: answered at once
    expect(holdForArrival(0, 60, MIN_ARRIVAL_NODES)).toBe(1);
    expect(holdForArrival(1, 60, 60)).toBe(1);
    expect(holdForArrival(30, 60, 60)).toBe(15);
    expect(holdForArrival(0, 0, 60)).toBe(0);
  });
});

describe('shardPace', () => {
  it('holds a shard whose newest profile is within the arriving window, for half its arrival', () => {
    expect(shardPace(everySecond(0, 30), at(31), 60)).toEqual({ arrivalSeconds: 30, holdSeconds: 15 });
  });

  it(`holds a shard whose ${MIN_ARRIVAL_NODES} newest profiles came within the same second`, () => {
    const pool = Array.from({ length: MIN_ARRIVAL_NODES }, (_, i) => profile(`pool-${i}`, 100));
    expect(shardPace(pool, at(100), 60)).toEqual({ arrivalSeconds: 0, holdSeconds: 1 });
    expect(shardPace(pool.slice(1), at(100), 60)).toBeUndefined();
  });

  it('does not hold a settled shard, nor one Node joining it', () => {
    const settled = everySecond(0, 30);
    expect(shardPace(settled, at(30 + ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS + 1), 60)).toBeUndefined();
    expect(shardPace([...settled, profile('late', 500)], at(501), 60)).toBeUndefined();
  });

  it('survives clock skew between the API server and the hook server, up to CLOCK_SKEW_SECONDS either way', () => {
    const profiles = everySecond(0, 30);
    // The hook server's clock behind: the newest profile seems created in the future.
    expect(shardPace(profiles, at(30 - CLOCK_SKEW_SECONDS), 60)?.holdSeconds).toBe(15);
    // Ahead: it seems older than it is.
    expect(shardPace(profiles, at(30 + ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS), 60)?.holdSeconds).toBe(15);
  });

  it('holds nothing when the clocks disagree by more: a profile an hour in the future is no arrival', () => {
    expect(shardPace(everySecond(3600, 3630), at(0), 60)).toBeUndefined();
  });
});

describe('chainPace', () => {
  const arrival = (since: number, newest: number, nodes?: number) => ({
    since: at(since),
    newest: at(newest),
    ...(nodes === undefined ? {} : { nodes }),
  });

  it('holds the chain over the arrival of its arriving shards, from the oldest to the newest', () => {
    const pace = chainPace([arrival(0, 40), arrival(10, 39), undefined], at(41), 60);
    expect(pace).toEqual({ arrivalSeconds: 40, holdSeconds: 20 });
  });

  it('counts a shard as arriving until its own held sync would have written a newer arrival', () => {
    // Arriving 40 s: the shard's sync was held 20 s, so its status is up to 20 s + the windows old.
    const shard = arrival(0, 40);
    const last = 40 + ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS + 20;
    expect(chainPace([shard], at(last - 1), 60)).toEqual({ arrivalSeconds: 40, holdSeconds: 1 });
    expect(chainPace([shard], at(last + 1), 60)).toBeUndefined();
  });

  it('does not hold past the time the last arriving shard stops counting', () => {
    const pace = chainPace([arrival(0, 100)], at(100 + 50), 60);
    // Half of 100 s would be 50 s; the shard stops counting 2 + 3 + 50 − 50 = 5 s from now.
    expect(pace?.holdSeconds).toBe(ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS);
  });

  it('sums the Nodes of its arriving shards: a pool split over shards is held before it lasted 2 s', () => {
    const few = MIN_ARRIVAL_NODES - 2;
    expect(chainPace([arrival(100, 100, few)], at(100), 60)).toBeUndefined();
    expect(chainPace([arrival(100, 100, few), arrival(100, 101, 2)], at(101), 60)).toEqual({
      arrivalSeconds: 1,
      holdSeconds: 1,
    });
  });

  it('holds for the Nodes joining that no shard counts yet, only while their newest is within the arriving window', () => {
    // Managed Nodes without a profile yet, in the chain's request: their own arrival (nodes counted).
    const joining = arrival(100, 100, MIN_ARRIVAL_NODES);
    expect(chainPace([undefined], at(100), 60, joining)).toEqual({ arrivalSeconds: 0, holdSeconds: 1 });
    expect(chainPace([], at(100 + ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS + 1), 60, joining)).toBeUndefined();
    // With the shards that count the first of them: the arrival runs over both.
    expect(chainPace([arrival(90, 99, 2)], at(101), 60, arrival(100, 101, 2))).toEqual({
      arrivalSeconds: 11,
      holdSeconds: 5.5,
    });
    // Nodes of an old arrival (an upgrade's unprofiled Nodes) hold nothing.
    expect(chainPace([], at(3600), 60, arrival(0, 30, 100))).toBeUndefined();
  });

  it('holds nothing for settled shards, one Node joining, or shards with no arrival', () => {
    expect(chainPace([arrival(0, 30)], at(3600), 60)).toBeUndefined();
    expect(chainPace([arrival(500, 500)], at(501), 60)).toBeUndefined();
    expect(chainPace([undefined, undefined], at(0), 60)).toBeUndefined();
    expect(chainPace([arrival(3600, 3630)], at(0), 60)).toBeUndefined(); // clocks an hour apart
  });
});
