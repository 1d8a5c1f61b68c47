// `npm run bench:admission`'s tables on the recorded run: one row per pass and per store, each with
// the numbers of its measurement.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StoreMemory } from '../../bench/admission/memory.js';
import type { PassTiming } from '../../bench/admission/pass.js';
import { admissionTables } from '../../bench/admission/report.js';

const recorded = JSON.parse(
  readFileSync(new URL('../../bench/results/admission-2026-12-03.json', import.meta.url), 'utf8'),
) as { passes: PassTiming[]; memory: StoreMemory[] };

describe('bench/admission/report.ts', () => {
  it('writes a row per pass and per store', () => {
    const rows = admissionTables(recorded.passes, recorded.memory)
      .split('\n')
      .filter((line) => /^\| [\d,a-z]/.test(line) && !line.startsWith('| nodes') && !line.startsWith('| stores'));
    expect(rows).toHaveLength(recorded.passes.length + recorded.memory.length);
  });

  it("puts a pass's median, its Workloads and its samples in its row", () => {
    const [pass] = recorded.passes.slice(0, 1);
    if (pass === undefined) throw new Error('the recorded run has no pass');
    const one = admissionTables([{ ...pass, passMs: { ...pass.passMs, median: 12.345, n: 7 } }], []);
    const row = one.split('\n')[2] ?? '';
    expect(row.startsWith(`| ${pass.nodes.toLocaleString('en-US')} | ${pass.pods.toLocaleString('en-US')} |`)).toBe(
      true,
    );
    expect(row).toContain(`| ${pass.awaiting} (${pass.dra.awaitingWithClaims}) / ${pass.workloads} | 12.3`);
    expect(row.endsWith('| 7 |')).toBe(true);
  });
});
