// The shipped Grafana dashboard answered by a real Prometheus (issue 33, items 3 and 4) on real
// components: etcd, kube-apiserver, kube-controller-manager (resource claim controller),
// kube-scheduler, Metacontroller with our hook server and manifests, Kueue's CRDs, the admission
// checker and one real agent per Node on the fake NVML; Prometheus 2.42 (the distribution's package).
//
// Prometheus' scrape targets come from the chart as rendered with serviceMonitor.enabled=true: each
// ServiceMonitor/PodMonitor's selector picks the chart's workload (through its Service for a
// ServiceMonitor), the monitor's port name picks that workload's container port, and the monitor's
// path is scraped there. Our processes run with the chart's own args on those ports, on 127.0.0.1
// (one agent on the DaemonSet's port: the others would need Pod IPs of their own). A monitor whose
// selector, port name or path stops matching what the chart ships fails here.
//
// Then every query of charts/gpustack-operator/dashboards/gpustack-cards.json, with its `pool`
// variable filled as Grafana fills "All" (the values of its label_values() query, as a regex), is
// asked of Prometheus' HTTP API and printed with its answer; each must return series and equal what
// this test computes from the live ResourceSlices and ResourceClaims. A cordon shows as
// gpustack_card_cordoned = 1 within one scrape interval of the checker exporting it; uncordon
// removes it. Detection failing on a node shows its cards unhealthy.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

import {
  attributeOf,
  nvidiaMachine,
  waitPool,
  type FakeAgent,
  type NvidiaProduct,
  type SliceDevice,
} from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient } from '../../harness/e2e/apply.js';
import { liveCards, type ExpectedCard } from '../../harness/e2e/cards.js';
import { REPO_ROOT, ensureComponents } from '../../harness/e2e/components.js';
import { createHelm } from '../../harness/e2e/helm.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import { log } from '../../harness/e2e/log.js';
import { monitorTargets, type MonitorTarget } from '../../harness/e2e/monitors.js';
import { startProcess } from '../../harness/e2e/processes.js';
import { startPrometheus, type Prometheus, type Sample } from '../../harness/e2e/prometheus.js';
import { claimTemplate, createReadyNode, pod, waitBound } from '../../harness/e2e/scheduling.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const run = promisify(execFile);
const NVIDIA = 'nvidia.gpustack.ai';
const CONVERGE_MS = 120_000;
const SCRAPE_SECONDS = 2;
const NODES: Record<string, [NvidiaProduct, number]> = {
  'dash-h100': ['NVIDIA H100 80GB HBM3', 4],
  'dash-h200': ['NVIDIA H200', 2],
};
const DASHBOARD = path.join(REPO_ROOT, 'charts', 'gpustack-operator', 'dashboards', 'gpustack-cards.json');

interface Dashboard {
  panels: { title: string; targets?: { expr?: string; refId?: string }[] }[];
  templating: { list: { name: string; query?: unknown }[] };
}

let client: KubeClient;
let kubeconfig = '';
let prometheus: Prometheus;
let checkerMetrics = '';

/** The chart's monitors resolved against its workloads (helm is built by the suite's global set-up). */
const targets: MonitorTarget[] = (() => {
  const charts = createHelm(ensureComponents(['helm']).helm);
  try {
    return monitorTargets(charts.template({ set: { 'serviceMonitor.enabled': 'true' } }));
  } finally {
    charts.dispose();
  }
})();
const agents = new Map<string, FakeAgent>();
const productKeys = new Map<string, string>();

const target = (job: string): MonitorTarget => {
  const found = targets.find((t) => t.job === job);
  if (!found) throw new Error(`the chart renders no ${job}; it renders ${targets.map((t) => t.job).join(', ')}`);
  return found;
};

/** The dashboard's queries, `$pool` filled with `pool`. */
function dashboardQueries(pool: string): { panel: string; expr: string }[] {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  return dashboard.panels.flatMap((p) =>
    (p.targets ?? []).flatMap((t) => (t.expr ? [{ panel: p.title, expr: t.expr.replaceAll('$pool', pool) }] : [])),
  );
}

/** Grafana's "All" of a multi-value regex variable: every value of `label_values(gpustack_pool_cards, pool)`, escaped. */
async function allPools(): Promise<string> {
  const response = await fetch(`${prometheus.url}/api/v1/label/pool/values?match[]=gpustack_pool_cards`);
  const values = ((await response.json()) as { data: string[] }).data;
  return `(${values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\\\$&')).join('|')})`;
}

const key = (s: Sample, ...labels: string[]): string => labels.map((l) => s.metric[l] ?? '').join('/');
const asMap = (samples: readonly Sample[], ...labels: string[]): Record<string, number> =>
  Object.fromEntries(
    samples.map((s) => [key(s, ...labels), s.value]).sort(([a], [b]) => String(a).localeCompare(String(b))),
  );
const sorted = (entries: [string, number][]): Record<string, number> =>
  Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));

/**
 * Every dashboard query this test checks, by the start of its expression, with the labels its
 * answer is keyed by; `expectedAnswers` must give an answer for each (the type holds it to these).
 */
const ANSWER_LABELS = {
  'gpustack_pool_cards_free{': ['pool'],
  'gpustack_pool_cards{': ['pool'],
  'sum(gpustack_pool_cards_cordoned': [],
  'sum(gpustack_pool_cards_unhealthy': [],
  'sum(gpustack_pool_cards_shared': [],
  'topk(10, gpustack_holder_memory_promised_bytes)': ['namespace', 'pod'],
  'gpustack_card_memory_promised_bytes / gpustack_card_memory_bytes': ['node', 'card'],
  'sum by (node) (gpustack_card_memory_promised_bytes': ['node'],
  'gpustack_card_cordoned *': ['node', 'card'],
  'gpustack_card_unhealthy *': ['node', 'card'],
  'gpustack_card_overcommitted *': ['node', 'card'],
} as const satisfies Record<string, readonly string[]>;
type AnswerPrefix = keyof typeof ANSWER_LABELS;

/** What every dashboard query must answer, computed from the live objects and the cordons/failures this test made. */
function expectedAnswers(
  cards: readonly ExpectedCard[],
  holders: ReadonlyMap<string, number>,
  cordoned: ReadonlySet<string>,
  unhealthyNodes: ReadonlySet<string>,
): Record<AnswerPrefix, Record<string, number>> {
  const inPool = cards.filter((c) => c.pool !== null);
  const pools = [...new Set(inPool.map((c) => c.pool as string))];
  const count = (pred: (c: ExpectedCard) => boolean) =>
    sorted(pools.map((p) => [p, inPool.filter((c) => c.pool === p && pred(c)).length]));
  const isCordoned = (c: ExpectedCard) => cordoned.has(`${c.node}/${c.card}`);
  const isUnhealthy = (c: ExpectedCard) => unhealthyNodes.has(c.node);
  const total = (pred: (c: ExpectedCard) => boolean) => ({ '': inPool.filter(pred).length });
  const nodes = [...new Set(inPool.map((c) => c.node))];
  const cardIndex = (c: ExpectedCard) => c.card.replace(/^card-/, '');
  const top = [...holders.entries()].sort(([, a], [, b]) => b - a).slice(0, 10);
  return {
    'gpustack_pool_cards_free{': count((c) => c.state === 'free' && !isCordoned(c) && !isUnhealthy(c)),
    'gpustack_pool_cards{': count(() => true),
    'sum(gpustack_pool_cards_cordoned': total(isCordoned),
    'sum(gpustack_pool_cards_unhealthy': total(isUnhealthy),
    'sum(gpustack_pool_cards_shared': total((c) => c.state === 'shared'),
    'topk(10, gpustack_holder_memory_promised_bytes)': sorted(top.map(([h, m]) => [h, m])),
    'gpustack_card_memory_promised_bytes / gpustack_card_memory_bytes': sorted(
      inPool.map((c) => [`${c.node}/${cardIndex(c)}`, c.promisedMemory / c.memoryBytes]),
    ),
    'sum by (node) (gpustack_card_memory_promised_bytes': sorted(
      nodes.map((n) => {
        const mine = inPool.filter((c) => c.node === n);
        return [n, mine.reduce((s, c) => s + c.promisedMemory, 0) / mine.reduce((s, c) => s + c.memoryBytes, 0)];
      }),
    ),
    'gpustack_card_cordoned *': sorted(inPool.filter(isCordoned).map((c) => [`${c.node}/${cardIndex(c)}`, 1])),
    'gpustack_card_unhealthy *': sorted(inPool.filter(isUnhealthy).map((c) => [`${c.node}/${cardIndex(c)}`, 1])),
    // The scheduler keeps every card within its counters here: the panel of issue 46 stays empty.
    'gpustack_card_overcommitted *': {},
  };
}

/** The labels a query's answer is keyed by. */
function answerKey(expr: string): { prefix: AnswerPrefix; labels: readonly string[] } {
  const prefix = (Object.keys(ANSWER_LABELS) as AnswerPrefix[]).find((p) => expr.startsWith(p));
  if (!prefix) throw new Error(`a dashboard query this test does not know how to check: ${expr}`);
  return { prefix, labels: ANSWER_LABELS[prefix] };
}

/** Asks every query; returns the differences from the expected answers (empty when all agree) and the answers. */
async function askDashboard(
  cordoned: ReadonlySet<string>,
  unhealthyNodes: ReadonlySet<string>,
): Promise<{ diff: string[]; answers: { panel: string; expr: string; answer: Record<string, number> }[] }> {
  const { cards, holders } = await liveCards(client, NVIDIA);
  const expected = expectedAnswers(cards, holders, cordoned, unhealthyNodes);
  const pool = await allPools();
  const diff: string[] = [];
  const answers = [];
  for (const { panel, expr } of dashboardQueries(pool)) {
    const { prefix, labels } = answerKey(expr);
    const answer = asMap(await prometheus.query(expr), ...labels);
    answers.push({ panel, expr, answer });
    const want = expected[prefix];
    const close = (a: number | undefined, b: number | undefined) =>
      a !== undefined && b !== undefined && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
    const keys = new Set([...Object.keys(want), ...Object.keys(answer)]);
    for (const k of keys) if (!close(answer[k], want[k])) diff.push(`${expr} [${k}]: ${answer[k]} (want ${want[k]})`);
  }
  return { diff, answers };
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--kubeconfig', kubeconfig]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

useCluster({
  scheduler: true,
  // The chain emits Kueue objects and the checker watches Workloads: Kueue's CRDs, not its manager.
  kueue: 'crds',
  deviceTaintRules: true,
  // The hook server where the chart's Service sends its monitor's scrapes.
  hooks: { port: target('ServiceMonitor/gpustack-operator').port },
  components: ['helm'],
  setup: async (c) => {
    client = c.client;
    kubeconfig = c.kubeconfig;
    log(
      `scrape targets from the chart's monitors:\n${targets.map((t) => `  ${t.job} → ${t.workload} port ${t.portName} (${t.port}) ${t.path}`).join('\n')}`,
    );
    // The checker exactly as the chart runs it, plus where the API server is.
    const checker = target('PodMonitor/gpustack-admission');
    c.manage(
      startProcess(
        'admission-checker',
        process.execPath,
        [CLI, ...checker.args, '--kubeconfig', kubeconfig],
        c.logsDir,
      ),
    );
    checkerMetrics = `http://127.0.0.1:${checker.port}${checker.path}`;

    const agentPort = target('PodMonitor/gpustack-agent').port;
    let first = true;
    for (const [node, [product, count]] of Object.entries(NODES)) {
      await createReadyNode(client, { name: node });
      // One agent on the DaemonSet's port: the others would need Pod IPs of their own.
      const agent = await c.startAgent(node, nvidiaMachine(product, count), first ? { healthPort: agentPort } : {});
      first = false;
      agents.set(node, agent);
      const pool = await waitPool(
        client,
        agent,
        NVIDIA,
        (p) => p.devices.filter((d) => attributeOf(d, NVIDIA, 'mode')?.string === 'whole').length === count,
        `the agent publishes ${count} whole cards on ${node}`,
      );
      productKeys.set(node, attributeOf(pool.devices[0] as SliceDevice, NVIDIA, 'productKey')?.string ?? '');
    }
    await waitFor(
      async () => (await client.list('worker.gpustack.ai/v1alpha1', 'InstanceType')).length >= productKeys.size,
      CONVERGE_MS,
      'the chain emits an InstanceType per pool',
    );

    prometheus = await startPrometheus({
      logsDir: c.logsDir,
      scrapeIntervalSeconds: SCRAPE_SECONDS,
      jobs: targets.map((t) => ({ job: t.job.replace('/', '-'), address: `127.0.0.1:${t.port}`, path: t.path })),
    });
    c.manage(prometheus.process);
    log(`prometheus ${prometheus.component.version} (${prometheus.component.module})`);
    await prometheus.waitTargetsUp();
  },
});

/** Waits until Prometheus answers every dashboard query as the live state says; prints them. */
async function dashboardAgrees(what: string, cordoned: ReadonlySet<string>, unhealthy: ReadonlySet<string>) {
  let last: Awaited<ReturnType<typeof askDashboard>> = { diff: ['not asked yet'], answers: [] };
  await waitFor(
    async () => ((last = await askDashboard(cordoned, unhealthy)).diff.length === 0 ? true : undefined),
    60_000,
    `${what}: Prometheus answers every dashboard query as the live objects say`,
    1000,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${last.diff.join('\n')}`);
  });
  log(
    `dashboard, ${what}:\n${last.answers.map((a) => `  [${a.panel}] ${a.expr}\n    → ${JSON.stringify(a.answer)}`).join('\n')}`,
  );
  return last.answers;
}

describe('the shipped dashboard answered by a real Prometheus', () => {
  const h100 = () => productKeys.get('dash-h100') as string;
  const h200 = () => productKeys.get('dash-h200') as string;

  it('scrapes the hook server, the checker and an agent where the chart monitors say, all up', async () => {
    expect(targets.map((t) => t.job).sort()).toEqual([
      'PodMonitor/gpustack-admission',
      'PodMonitor/gpustack-agent',
      'ServiceMonitor/gpustack-operator',
    ]);
    const up = await prometheus.query('up');
    expect(asMap(up, 'job')).toEqual({
      'PodMonitor-gpustack-admission': 1,
      'PodMonitor-gpustack-agent': 1,
      'ServiceMonitor-gpustack-operator': 1,
    });
    // Each process's own series reached Prometheus through its monitor's target.
    for (const [job, metric] of [
      ['ServiceMonitor-gpustack-operator', 'gpustack_hook_requests_total'],
      ['PodMonitor-gpustack-admission', 'gpustack_card_info'],
      ['PodMonitor-gpustack-agent', 'process_cpu_seconds_total'],
    ] as const)
      await waitFor(
        async () => ((await prometheus.query(`${metric}{job="${job}"}`)).length > 0 ? true : undefined),
        30_000,
        `${metric} scraped from ${job}`,
      );
  });

  it('with whole and shared claims allocated by the scheduler: every query answers the live state', async () => {
    await client.applyObject(claimTemplate('whole-h100', `gpustack-${h100()}`, {}));
    await client.applyObject(claimTemplate('two-h200', `gpustack-${h200()}`, { count: 2 }));
    await client.applyObject(claimTemplate('share-20', `gpustack-${h100()}-shared`, { capacity: { memory: '20Gi' } }));
    await client.applyObject(claimTemplate('share-30', `gpustack-${h100()}-shared`, { capacity: { memory: '30Gi' } }));
    for (const [name, tmpl] of [
      ['train-a', 'whole-h100'],
      ['train-big', 'two-h200'],
      ['infer-a', 'share-20'],
      ['infer-b', 'share-30'],
    ] as const) {
      await client.applyObject(pod(name, 'default', { claims: [{ name: 'cards', template: tmpl }] }));
      await waitBound(client, 'default', name);
    }
    await waitFor(
      async () => ((await liveCards(client, NVIDIA)).holders.size === 4 ? true : undefined),
      30_000,
      'every claim reserved for its Pod',
    );
    const answers = await dashboardAgrees('claims allocated', new Set(), new Set());
    // Every query returns series (the per-card cordon and health panels: only once something is cordoned or unhealthy,
    // below; the over-committed panel: never here, the scheduler keeps every card within its counters).
    for (const a of answers.filter((x) => !/gpustack_card_(cordoned|unhealthy|overcommitted)/.test(x.expr)))
      expect(Object.keys(a.answer).length, a.expr).toBeGreaterThan(0);
    // The point, stated: 6 cards in 2 pools; the H200 pool has none free, the H100 pool 4 − 1 whole − shared ones.
    const { cards } = await liveCards(client, NVIDIA);
    const free = answers.find((a) => a.expr.startsWith('gpustack_pool_cards_free'))?.answer ?? {};
    expect(Object.values(free).reduce((s, v) => s + v, 0)).toBe(cards.filter((c) => c.state === 'free').length);
    expect(free[`gpustack-${h200()}-linux-amd64`]).toBe(0);
    const top = answers.find((a) => a.expr.startsWith('topk'))?.answer ?? {};
    expect(Object.keys(top).sort()).toEqual([
      'default/infer-a',
      'default/infer-b',
      'default/train-a',
      'default/train-big',
    ]);
    expect(top['default/train-big']).toBe(
      cards.filter((c) => c.node === 'dash-h200').reduce((s, c) => s + c.memoryBytes, 0),
    );
  });

  it('a cordon shows as gpustack_card_cordoned = 1 within one scrape interval, and uncordon removes it', async () => {
    const { cards } = await liveCards(client, NVIDIA);
    const spare = cards.find((c) => c.node === 'dash-h100' && c.state === 'free');
    if (!spare) throw new Error('no free H100 card left to cordon');
    // The CLI names a card `<node>/<index>`; the cordon and health sets here key cards by `<node>/card-<index>`.
    const index = spare.card.replace(/^card-/, '');
    const name = `${spare.node}/${index}`;
    const result = await cli('cards', 'cordon', name, '--reason', 'e2e dashboard');
    expect(result.code, result.stderr).toBe(0);
    const series = `gpustack_card_cordoned{node="${spare.node}",card="${spare.card.replace(/^card-/, '')}"}`;
    // The checker exports it first (its own pass); from then, Prometheus has it within one scrape interval.
    await waitFor(
      async () => ((await (await fetch(checkerMetrics)).text()).includes(`${series} 1`) ? true : undefined),
      60_000,
      `the checker exports ${series} 1`,
      200,
    );
    const exported = Date.now();
    await waitFor(
      async () => ((await prometheus.query(series)).some((s) => s.value === 1) ? true : undefined),
      10_000,
      `Prometheus has ${series} = 1`,
      100,
    );
    const seconds = (Date.now() - exported) / 1000;
    log(
      `cordon of ${name}: in Prometheus ${seconds.toFixed(1)} s after the checker exported it (scrape interval ${SCRAPE_SECONDS} s)`,
    );
    expect(seconds).toBeLessThanOrEqual(SCRAPE_SECONDS + 1);
    const answers = await dashboardAgrees('one card cordoned', new Set([`${spare.node}/${spare.card}`]), new Set());
    expect(answers.find((a) => a.expr.startsWith('gpustack_card_cordoned'))?.answer).toEqual({
      [`${spare.node}/${spare.card.replace(/^card-/, '')}`]: 1,
    });

    const back = await cli('cards', 'uncordon', name);
    expect(back.code, back.stderr).toBe(0);
    await waitFor(
      async () => ((await prometheus.query(series)).length === 0 ? true : undefined),
      60_000,
      `${series} gone from Prometheus after uncordon`,
      500,
    );
    await dashboardAgrees('uncordoned', new Set(), new Set());
  });

  it('detection failing on a node shows its cards unhealthy, and healthy again when it recovers', async () => {
    const agent = agents.get('dash-h200') as FakeAgent;
    const [product, count] = NODES['dash-h200'] as [NvidiaProduct, number];
    const healthy = nvidiaMachine(product, count);
    // NVML's init answers an error: the agent keeps the cards published, tainted gpustack.ai/unhealthy.
    agent.setMachine({ ...healthy, lib: { nvidia: { ...healthy.lib?.nvidia, init: 999 } } });
    const answers = await dashboardAgrees('detection failing on dash-h200', new Set(), new Set(['dash-h200']));
    expect(Object.keys(answers.find((a) => a.expr.startsWith('gpustack_card_unhealthy'))?.answer ?? {})).toHaveLength(
      count,
    );
    agent.setMachine(healthy);
    await dashboardAgrees('dash-h200 healthy again', new Set(), new Set());
  });
});
