// When a shard's profiles are still arriving, read from their creation times: what the hook server
// paces shard syncs by (src/server/pacing.ts).
import { describe, expect, it } from 'vitest';
import type { NodeProfile } from '../../../src/k8s/index.js';
import { ARRIVAL_GAP_SECONDS, ARRIVING_WITHIN_SECONDS, shardArrival } from '../../../src/sync/index.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
const profile = (name: string, createdAt: number | undefined): NodeProfile =>
  ({
    apiVersion: 'worker.gpustack.ai/v1alpha1',
    kind: 'NodeProfile',
    metadata: { name, ...(createdAt === undefined ? {} : { creationTimestamp: at(createdAt) }) },
    spec: { labels: {} },
  }) as NodeProfile;

describe('shardArrival', () => {
  it('is undefined for a shard whose newest profile is older than the arrival window', () => {
    const profiles = [profile('a', 0), profile('b', 100)];

    expect(shardArrival(profiles, at(100 + ARRIVING_WITHIN_SECONDS + 1))).toBeUndefined();
    expect(shardArrival([], at(0))).toBeUndefined();
  });

  it('measures a first install: every profile created within the gap of the next one', () => {
    // A profile every 3 s from 0 to 300 s, the last one 1 s before now.
    const profiles = Array.from({ length: 101 }, (_, i) => profile(`n${i}`, i * 3));

    expect(shardArrival(profiles, at(301))).toBe(300);
  });

  it('counts one Node joining a settled shard as an arrival of 0 s', () => {
    const profiles = [profile('old-1', 0), profile('old-2', 50), profile('new', 50 + ARRIVAL_GAP_SECONDS + 40)];

    expect(shardArrival(profiles, at(50 + ARRIVAL_GAP_SECONDS + 41))).toBe(0);
  });

  it('ends the arrival at the first gap wider than ARRIVAL_GAP_SECONDS', () => {
    const profiles = [profile('a', 0), profile('b', 100), profile('c', 100 + ARRIVAL_GAP_SECONDS), profile('d', 120)];

    expect(shardArrival(profiles, at(120))).toBe(20);
  });

  it('ignores profiles without a creation time, and a now that is not a time', () => {
    expect(shardArrival([profile('a', undefined), profile('b', 10)], at(11))).toBe(0);
    expect(shardArrival([profile('a', 10)], 'not a time')).toBeUndefined();
  });
});
