/**
 * The chart's Grafana dashboard (charts/gpustack-operator/dashboards/gpustack-cards.json) queries
 * only metrics the admission checker exports: every PromQL expression is parsed for metric names,
 * which must be among the names the checker's registry serves after a pass with cards.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createAdmissionMetrics } from '../../src/admission/index.js';
import { buildCardRows, buildDeviceLedger } from '../../src/dra/index.js';
import { allocatedClaim, nodePool } from '../dra/builders.js';

const CHART = fileURLToPath(new URL('../../charts/gpustack-operator', import.meta.url));
const dashboard = JSON.parse(readFileSync(join(CHART, 'dashboards', 'gpustack-cards.json'), 'utf8')) as Dashboard;

interface Dashboard {
  panels: { title: string; targets?: { expr?: string }[] }[];
  templating: { list: { name: string; type: string; definition?: string }[] };
}

/** Words PromQL reserves: aggregation modifiers, binary keywords, vector matching. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
  // Aggregations, which may precede `by (…)` instead of their parenthesis.
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);

/**
 * The metric names in one PromQL expression: identifiers that are neither functions nor
 * aggregations (followed by `(`), keywords, label names (inside `{…}` or the parentheses after
 * by/without/on/ignoring/group_left/group_right), strings nor durations. `label_values(m, l)` of a
 * template variable counts `m`.
 */
export function metricNames(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""') // strings
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1') // label lists
    .replace(/\[[^\]]*\]/g, '') // range selectors and subqueries
    .replace(/(?<![A-Za-z0-9_:])\d+(?:\.\d+)?(?:e[+-]?\d+|[smhdwy]+)?/gi, ''); // numbers and durations
  const names = new Set<string>();
  for (const match of text.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const after = text.slice((match.index ?? 0) + word.length).trimStart();
    if (after.startsWith('(') || KEYWORDS.has(word.toLowerCase())) continue;
    if (/^\d/.test(word)) continue;
    names.add(word);
  }
  return [...names].sort();
}

function queries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  for (const panel of dashboard.panels)
    for (const target of panel.targets ?? []) if (target.expr) out.push({ where: panel.title, expr: target.expr });
  for (const variable of dashboard.templating.list) {
    const labelValues = /^label_values\(\s*([^,)]+)/.exec(variable.definition ?? '');
    if (labelValues?.[1]) out.push({ where: `variable ${variable.name}`, expr: labelValues[1] });
  }
  return out;
}

/** The metric names the checker's registry serves once a pass has handed it cards. */
async function exported(): Promise<Set<string>> {
  const metrics = createAdmissionMetrics({ defaultMetrics: true });
  const ledger = buildDeviceLedger(nodePool('gpu-a', 2), [allocatedClaim('c', [{ node: 'gpu-a', device: 'card-0' }])]);
  metrics.cards(() => buildCardRows(ledger));
  const text = await metrics.registry.metrics();
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string));
}

describe('the Grafana dashboard', () => {
  it('reads metric names out of PromQL, and only them', () => {
    expect(
      metricNames(
        'sum by (node) (rate(gpustack_x_total{pool=~"a|b", card!="1"}[5m])) / on(node, card) group_left(model) gpustack_y offset 5m > bool 0.5',
      ),
    ).toEqual(['gpustack_x_total', 'gpustack_y']);
    expect(metricNames('topk(10, gpustack_holder_memory_promised_bytes)')).toEqual([
      'gpustack_holder_memory_promised_bytes',
    ]);
  });

  it('queries only metrics the admission checker exports, and queries the per-card, per-pool and per-holder ones', async () => {
    const names = await exported();
    const all = queries();
    expect(all.length).toBeGreaterThan(5);
    const unknown = all.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !names.has(name))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).toEqual([]);
    const used = new Set(all.flatMap(({ expr }) => metricNames(expr)));
    for (const name of [
      'gpustack_pool_cards_free',
      'gpustack_card_memory_promised_bytes',
      'gpustack_holder_memory_promised_bytes',
      'gpustack_card_cordoned',
      'gpustack_card_unhealthy',
      'gpustack_card_overcommitted',
    ])
      expect(used.has(name), name).toBe(true);
  });

  it('has the panels the issue asks for', () => {
    expect(dashboard.panels.map((p) => p.title)).toEqual(
      expect.arrayContaining([
        'Free cards per pool',
        'Promised memory per card (share of the card)',
        'Top holders by promised memory',
        'Cordoned and unhealthy cards',
        'Over-committed cards',
      ]),
    );
  });
});
