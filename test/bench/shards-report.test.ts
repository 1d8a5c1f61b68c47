// The node-shards section of bench/RESULTS.md on small inputs: two runs of two sizes each, made up
// so that every number the report derives can be worked out here by hand.
import { describe, expect, it } from 'vitest';
import type { ClusterRun, Reaction } from '../../bench/cluster/control-plane-report.js';
import {
  shardsModel,
  shardsSection,
  spliceShardsSection,
  svg,
  type RunFile,
} from '../../bench/cluster/shards-report.js';

const START = '<!-- bench:shards start -->';
const END = '<!-- bench:shards end -->';
// Metacontroller's CPU per change is 0.4 s + 0.05 CPU s per MB of hook requests in every run: the fit must find it.
const MC_PER_BYTE = 0.05e-6;

/** A change that calls each route once, with the given largest request per route. */
function reaction(largest: Record<string, number>, seconds: number): Reaction {
  const calls = Object.fromEntries(Object.keys(largest).map((route) => [route, 1]));
  const bytes = Object.values(largest).reduce((sum, n) => sum + n, 0);
  return {
    node: 'n',
    seconds,
    calls,
    cpu: { metacontroller: 0.4 + MC_PER_BYTE * bytes, 'our server': 0.1 },
    largestRequestBytes: largest,
  };
}

function run(nodes: number, reactions: Reaction[], p90: number): ClusterRun {
  return {
    nodes,
    namespaces: 11,
    loadAverageStart: [1, 1, 1],
    loadAverageEnd: [1, 1, 1],
    createSeconds: 10,
    convergedAfterFirstSeconds: 30,
    convergedAfterLastSeconds: 20,
    convergenceCalls: { 'node-shard/sync': nodes, 'scheduling-chain/sync': 3 },
    reaction: { p50: p90 / 2, p90, max: p90 },
    reactions,
    chainRequestBytes: 0,
    bytesPerNode: 3200,
    largestRequestBytesConvergence: { 'scheduling-chain/sync': 1000 },
    flavors: 4,
    processes: {
      metacontroller: { cpuSecondsConvergence: 100, cpuSecondsReactions: 10, peakRssMB: 100 + nodes / 10 },
      'kube-apiserver': { cpuSecondsConvergence: 50, cpuSecondsReactions: 5, peakRssMB: 200 + nodes / 5 },
    },
    connectionResets: 0,
    metacontroller: 'v4.17.2',
  };
}

// Before: the chain's request holds every profile, 3,200 bytes each.
const before: RunFile = {
  commit: 'aaaaaaa',
  changes: 3,
  runs: [500, 5000].map((n) =>
    run(
      n,
      [0, 1, 2].map(() => reaction({ 'scheduling-chain/sync': 3200 * n, 'node-profile/sync': 5000 }, 0.9)),
      0.9,
    ),
  ),
};
// After: the chain's request holds 32 summaries (64 KB), a shard's N / 32 profiles.
const after: RunFile = {
  commit: 'bbbbbbb',
  changes: 3,
  runs: [500, 5000].map((n) =>
    run(
      n,
      [0, 1, 2].map(() =>
        reaction(
          { 'scheduling-chain/sync': 64_000, 'node-shard/sync': (3200 * n) / 32, 'node-profile/sync': 5000 },
          0.3,
        ),
      ),
      0.3,
    ),
  ),
};

describe('bench/cluster/shards-report.ts', () => {
  it('fits the model on both runs: bytes per profile, CPU per byte, calls per change', () => {
    const model = shardsModel(before, after);
    expect(model.bytesPerProfile).toBe(3200);
    expect(model.chainBytesAfter).toBe(64_000);
    expect(model.mcPerByte.b).toBeCloseTo(MC_PER_BYTE, 12);
    expect(model.mcPerByte.a).toBeCloseTo(0.4, 9);
    expect(model.chainCallsBefore).toBe(1);
    expect(model.shardCallsAfter).toBe(1);
    expect(model.mcRssPerNode.b).toBeCloseTo(0.1, 9);
  });

  it('writes the section: markers, the targets met or not, a row per run and size, the sources', () => {
    const section = shardsSection(before, after, { before: 'b.json', after: 'a.json', remark: 'A remark.' });
    expect(section.startsWith(`${START}\n`)).toBe(true);
    expect(section.endsWith(END)).toBe(true);
    expect(section).toContain('| 5,000 | reaction p90 | < 0.5 s | 0.90 s | 0.30 s | yes |');
    expect(section).toContain('| 10,000 | reaction p90 | < 1 s | not run | not run | — |');
    // The runs' table (the process table has rows per run too, one per process).
    const rows = section
      .split('\n')
      .filter((line) => /^\| (before|after) \| [\d,]+ \| 1\.0 \/ 1\.0 \/ 1\.0 \|/.test(line));
    expect(rows.map((line) => line.split(' | ').slice(0, 2).join(' '))).toEqual([
      '| before 500',
      '| after 500',
      '| before 5,000',
      '| after 5,000',
    ]);
    // The largest request per change before: every profile of 5,000 Nodes.
    expect(section).toContain('| 16.0 MB (scheduling-chain/sync) |');
    expect(section).toContain('A remark.');
    expect(section).toContain('--before b.json --after a.json');
  });

  it('replaces the old section in RESULTS.md, or appends one', () => {
    const section = `${START}\nnew\n${END}`;
    const old = `# Results\n\n${START}\nold\n${END}\n\n## After\n`;
    expect(spliceShardsSection(old, section)).toBe(`# Results\n\n${section}\n\n## After\n`);
    expect(spliceShardsSection('# Results\n', section)).toBe(`# Results\n\n${section}\n`);
  });

  it('draws the plot as one SVG document', () => {
    const text = svg(shardsModel(before, after), before, after);
    expect(text.startsWith('<svg')).toBe(true);
    expect(text.trimEnd().endsWith('</svg>')).toBe(true);
    expect(text).toContain('before: chain request = every NodeProfile');
  });
});
