// `npm run bench`'s report (bench/hooks/report.ts) on a recorded run: the targets it judged then are
// judged the same now, a change of one median moves exactly its target, and the tables and the plot
// hold every size; the README section it wrote is what it writes now.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  costPerNodeSvg,
  judge,
  readmeSection,
  tables,
  TARGET_NODES,
  type BenchResults,
  type Target,
} from '../../bench/hooks/report.js';

const recorded = JSON.parse(
  readFileSync(new URL('../../bench/results/2026-12-03.json', import.meta.url), 'utf8'),
) as BenchResults;

describe('bench/hooks/report.ts', () => {
  it('judges the recorded run as it was judged when it ran', () => {
    expect(judge(recorded.sizes, recorded.load)).toEqual(recorded.targets);
  });

  it('moves the in-process target when the chain hook gets twice as slow as its floor', () => {
    const sizes = recorded.sizes.map((size) => {
      if (size.nodes !== TARGET_NODES) return size;
      const chain = size.hooks['scheduling-chain/sync'];
      const inProcessMs = { ...chain.inProcessMs, median: chain.floorMs.median * 2 };
      return { ...size, hooks: { ...size.hooks, 'scheduling-chain/sync': { ...chain, inProcessMs } } };
    });
    const name = `in-process / floor at ${TARGET_NODES} nodes`;
    const target = judge(sizes, recorded.load).find((t) => t.name === name);
    expect(target).toEqual({ name, limit: '≤ 1.5', measured: '2.00', met: false });
    // Every other target stays as recorded, but those that read the same median (the per-node spread).
    const others = (targets: readonly Target[]) =>
      targets.filter((t) => t.name !== name && !t.name.includes('per node'));
    expect(others(judge(sizes, recorded.load))).toEqual(others(recorded.targets));
  });

  it('wrote bench/README-section.md: regenerated from the run it names, it is the same', () => {
    const section = readFileSync(new URL('../../bench/README-section.md', import.meta.url), 'utf8');
    const date = /Run of (\d{4}-\d{2}-\d{2})/.exec(section)?.[1];
    const run = JSON.parse(
      readFileSync(new URL(`../../bench/results/${date}.json`, import.meta.url), 'utf8'),
    ) as BenchResults;
    expect(readmeSection(run)).toBe(section);
  });

  it('writes a row per size in the chain table and draws every size', () => {
    const text = tables(recorded);
    for (const size of recorded.sizes) expect(text).toContain(`| ${size.nodes.toLocaleString('en-US')} |`);
    const svg = costPerNodeSvg(recorded.sizes);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  });
});
