// The pieces of `npm run bench:cluster` that can be checked without a control plane: the Nodes it
// creates, the card change it makes, and how its section lives beside `npm run bench`'s in RESULTS.md.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { cardLabelPatch, generateNodes } from '../../bench/shared/cluster-nodes.js';
import { generateCluster } from '../../bench/shared/cluster.js';
import {
  clusterScaleSvg,
  clusterSectionOf,
  keptSectionsOf,
  spliceClusterSection,
} from '../../bench/cluster/control-plane-report.js';

describe('bench:cluster Nodes', () => {
  it('are the Nodes of generateCluster without node-profile labels', () => {
    const raw = generateNodes(40);
    const profiled = generateNodes(40, undefined, true);
    expect(raw.map((n) => n.metadata.name)).toEqual(profiled.map((n) => n.metadata.name));
    expect(raw.some((n) => 'gpustack.ai/managed' in (n.metadata.labels ?? {}))).toBe(false);
    expect(profiled.every((n) => n.metadata.labels?.['gpustack.ai/managed'] === 'true')).toBe(true);
    // generateCluster's chain request carries the NodeProfiles of the same (profiled) Nodes, no Node.
    const body = JSON.parse(generateCluster(40).bodies['scheduling-chain/sync']) as {
      related: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(body.related['NodeProfile.worker.gpustack.ai/v1alpha1'] ?? {}).sort()).toEqual(
      profiled.map((n) => n.metadata.name).sort(),
    );
    expect(body.related['Node.v1']).toEqual({});
  });

  it('lose a card by their count labels, and CPU-only Nodes have none to lose', () => {
    const nodes = generateNodes(40);
    const h100 = nodes.find((n) => n.metadata.name.startsWith('h100-8x-'));
    const cpu = nodes.find((n) => n.metadata.name.startsWith('cpu-'));
    expect(h100 && cpu).toBeTruthy();
    expect(cardLabelPatch(h100!, 7)).toEqual({
      'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count': '7',
      'nvidia.com/gpu.count': '7',
    });
    expect(cardLabelPatch(cpu!, 1)).toBeUndefined();
  });
});

describe('the bench:cluster section of RESULTS.md', () => {
  const section = '<!-- bench:cluster start -->\n## cluster\n<!-- bench:cluster end -->';

  it('is appended once, then replaced in place', () => {
    const first = spliceClusterSection('# Benchmark results\n\ntables\n', section);
    expect(first).toBe(`# Benchmark results\n\ntables\n\n${section}\n`);
    const second = spliceClusterSection(first, section.replace('## cluster', '## cluster again'));
    expect(second).toContain('## cluster again');
    expect(second).not.toContain('## cluster\n');
    expect(second.startsWith('# Benchmark results\n\ntables\n')).toBe(true);
  });

  it('is found for npm run bench to keep, and absent from a file without it', () => {
    expect(clusterSectionOf(`# x\n\n${section}\n`)).toBe(section);
    expect(clusterSectionOf('# x\n')).toBeUndefined();
  });
});

describe('the bench:cluster plot', () => {
  it('draws convergence and reaction p90, this run and before, from the committed results', () => {
    const result = JSON.parse(
      readFileSync(new URL('../../bench/results/cluster-2026-12-03.json', import.meta.url), 'utf8'),
    );
    const svg = clusterScaleSvg(result);
    // Per panel: this run, issue 18's before and (when recorded) the whole-Nodes run.
    const series = 2 + (((result as { wholeNodes?: unknown[] }).wholeNodes ?? []).length > 0 ? 1 : 0);
    expect(svg.match(/<polyline/g)).toHaveLength(2 * series);
    expect(svg).toContain('converged after the first Node (s)');
    expect(svg).toContain('reaction to one card change, p90 (s)');
  });
});

describe('keptSectionsOf', () => {
  it("keeps every other bench's marked section, in order, and nothing outside the markers", () => {
    const admission = '<!-- bench:admission start -->\n## Admission\n| a |\n<!-- bench:admission end -->';
    const cluster = '<!-- bench:cluster start -->\n## Cluster\n<!-- bench:cluster end -->';
    const text = `# Results\n\n| floor |\n\n${admission}\n\nstray text\n\n${cluster}\n`;
    expect(keptSectionsOf(text)).toEqual([admission, cluster]);
    expect(keptSectionsOf('# Results\n')).toEqual([]);
    // An unterminated section is not kept (it would swallow the rest of the file).
    expect(keptSectionsOf('<!-- bench:admission start -->\n## Admission\n')).toEqual([]);
  });
});
