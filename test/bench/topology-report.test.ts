// `npm run bench:topology`'s tables (issue 44): each size and hook with topology off and on, the
// ratios, and how each request grows from the smallest to the largest cluster.
import { describe, expect, it } from 'vitest';
import type { TopologyHook } from '../../bench/hooks/topology-bodies.js';
import { ratio, topologyTables, type TopologyCase } from '../../bench/hooks/topology-report.js';

const summary = (median: number) => ({ median, min: median, max: median, cv: 0, n: 7 });

function scene(nodes: number, topology: boolean, chainBytes: number, chainMs: number): TopologyCase {
  const hook = (name: TopologyHook, bytes: number, ms: number) => ({
    hook: name,
    requestBytes: bytes,
    inProcessMs: summary(ms),
    cpuMs: summary(ms * 0.9),
    batch: 3,
  });
  return {
    nodes,
    topology,
    flavors: 16,
    topologies: topology ? 1 : 0,
    summaryGroups: 330,
    shards: 32,
    hooks: [hook('scheduling-chain', chainBytes, chainMs), hook('node-profile', 25_600, 0.3)],
  };
}

const cases = [
  scene(1000, false, 200 * 1024, 10),
  scene(1000, true, 260 * 1024, 12),
  scene(10_000, false, 400 * 1024, 20),
  scene(10_000, true, 520 * 1024, 25),
];

describe('bench/hooks/topology-report.ts', () => {
  it('writes on / off ratios, and a dash where a side is missing', () => {
    expect(ratio(12, 10)).toBe('1.20×');
    expect(ratio(undefined, 10)).toBe('—');
    expect(ratio(3, 0)).toBe('—');
  });

  it('puts a row per size and hook with bytes and medians off → on', () => {
    const lines = topologyTables(cases).split('\n');
    expect(lines).toContain('| 1,000 | scheduling-chain | 200 → 260 | 1.30× | 10 → 12 | 1.20× | 9 → 10.8 | 7 × 3 |');
    expect(lines).toContain('| 10,000 | node-profile | 25 → 25 | 1.00× | 0.3 → 0.3 | 1.00× | 0.27 → 0.27 | 7 × 3 |');
  });

  it('says how each request grows from the smallest to the largest cluster, per mode', () => {
    const lines = topologyTables(cases).split('\n');
    expect(lines).toContain('| hook | topology | request KB at 1,000 → 10,000 nodes | growth (nodes × 10) |');
    expect(lines).toContain('| scheduling-chain | off | 200 → 400 | 2.00× |');
    expect(lines).toContain('| scheduling-chain | on | 260 → 520 | 2.00× |');
  });

  it('lists the flavors, Topologies and summary groups of each case', () => {
    expect(topologyTables(cases).split('\n')).toContain('| 10,000 | on | 16 | 1 | 32 | 330 |');
  });
});
