// `gpustack-operator cards` and the checker's per-card metrics (issue 25, items 1-3 and 5) on real
// components: etcd, kube-apiserver, kube-controller-manager (the resource claim controller),
// kube-scheduler, Metacontroller with our hook server and manifests (the chain emits the
// InstanceTypes and DeviceClasses), Kueue's CRDs (the checker watches Workloads; no Kueue manager
// is needed here), the admission checker, and one real agent per Node on the fake NVML. The real
// scheduler allocates whole cards and shares; the CLI's JSON is compared with the ResourceClaims
// and ResourceSlices read here independently (not through src/dra), and so are the checker's
// metrics. `kubectl gpustack cards` runs through kubectl's plugin lookup. Kubernetes 1.37 serves
// DeviceTaintRule; 1.36 serves none without a gate and --runtime-config: the CLI then says so once.
//
// E2E_CARD_METRICS_OUT=FILE also writes the metrics sampled over the run (scripts/plot-card-metrics.py draws them).
import { chmodSync, copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

import { parseQuantity } from '../../src/k8s/index.js';
import { attributeOf, nvidiaMachine, waitPool, type SliceDevice } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import {
  RESOURCE_API,
  createReadyNode,
  deletePodNow,
  pod,
  waitBound,
  type ResourceClaim,
  claimTemplate,
} from '../../harness/e2e/scheduling.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const NVIDIA = 'nvidia.gpustack.ai';
const TEAM_B = 'team-b';
const CONVERGE_MS = 120_000;
const H100_NODE = 'cards-h100';
const H200_NODE = 'cards-h200';

let client: KubeClient;
let metricsUrl = '';
let pluginDir = '';
const productKeys = new Map<string, string>();
const samples: Sample[] = [];
let sampler: NodeJS.Timeout | undefined;
const startedAt = Date.now();

/** One card as this test computes it from the live objects. */
interface ExpectedCard {
  node: string;
  card: string;
  model: string;
  pool: string | null;
  memoryBytes: number;
  units: number;
  state: 'free' | 'whole' | 'shared';
  claims: string[];
  holders: string[];
  promisedMemory: number;
  promisedUnits: number;
}

/** What the CLI prints per card (`-o json`), the fields compared. */
interface CliCard {
  node: string;
  card: string;
  model: string | null;
  pool: string | null;
  memoryBytes: number | null;
  units: number | null;
  state: string;
  claims: { namespace: string; name: string }[];
  holders: string[];
  promised: { memoryBytes: number; units: number };
  cordoned: boolean;
}

interface Sample {
  t: number;
  pools: Record<string, Record<string, number>>;
  cards: Record<string, Record<string, number>>;
}

function quantity(text: string | number | undefined): number {
  const value = typeof text === 'number' ? text : text === undefined ? undefined : parseQuantity(text);
  if (value === undefined) throw new Error(`not a quantity: ${String(text)}`);
  return value;
}

type Slice = KubeObject & {
  spec: {
    driver: string;
    nodeName?: string;
    devices?: (SliceDevice & { capacity?: Record<string, { value: string }> })[];
  };
};

/** Every card of our slices and what the live claims hold of it, computed here from the objects alone. */
async function expectedCards(): Promise<ExpectedCard[]> {
  const slices = (await client.list<Slice>(RESOURCE_API, 'ResourceSlice')).filter((s) => s.spec.driver === NVIDIA);
  const claims = await client.list<ResourceClaim>(RESOURCE_API, 'ResourceClaim');
  const types = await client.list<KubeObject & { spec: { acceleratorGroup?: string } }>(
    'worker.gpustack.ai/v1alpha1',
    'InstanceType',
  );
  const cards = new Map<string, ExpectedCard>();
  for (const slice of slices) {
    for (const device of slice.spec.devices ?? []) {
      if (!device.name.endsWith('-shared')) continue;
      const model = attributeOf(device, NVIDIA, 'productKey')?.string ?? '';
      const node = slice.spec.nodeName ?? '';
      const card = device.name.replace(/-shared$/, '');
      cards.set(`${node}/${card}`, {
        node,
        card,
        model,
        pool: types.find((t) => t.spec.acceleratorGroup === model)?.metadata.name ?? null,
        memoryBytes: quantity(device.capacity?.['memory']?.value),
        units: quantity(device.capacity?.['units']?.value),
        state: 'free',
        claims: [],
        holders: [],
        promisedMemory: 0,
        promisedUnits: 0,
      });
    }
  }
  for (const claim of claims) {
    const id = `${claim.metadata.namespace}/${claim.metadata.name}`;
    for (const result of claim.status?.allocation?.devices?.results ?? []) {
      if (result.driver !== NVIDIA) continue;
      const card = cards.get(`${result.pool}/${result.device.replace(/-shared$/, '')}`);
      if (card === undefined) throw new Error(`claim ${id} holds ${result.pool}/${result.device}, in no slice`);
      if (!card.claims.includes(id)) card.claims.push(id);
      for (const r of claim.status?.reservedFor ?? []) {
        const holder = `${claim.metadata.namespace}/${r.name}`;
        if (!card.holders.includes(holder)) card.holders.push(holder);
      }
      if (result.device.endsWith('-shared')) {
        card.state = 'shared';
        card.promisedMemory += quantity(result.consumedCapacity?.['memory']);
        card.promisedUnits += quantity(result.consumedCapacity?.['units']);
      } else {
        card.state = 'whole';
        card.promisedMemory = card.memoryBytes;
        card.promisedUnits = card.units;
      }
    }
  }
  return [...cards.values()]
    .map((c) => ({ ...c, claims: c.claims.sort(), holders: c.holders.sort() }))
    .sort((a, b) => `${a.node}/${a.card}`.localeCompare(`${b.node}/${b.card}`, 'en', { numeric: true }));
}

/** The CLI's rows in the shape of `ExpectedCard`. */
function comparable(rows: readonly CliCard[]): ExpectedCard[] {
  return rows.map((r) => ({
    node: r.node,
    card: r.card,
    model: r.model ?? '',
    pool: r.pool,
    memoryBytes: r.memoryBytes ?? -1,
    units: r.units ?? -1,
    state: r.state as ExpectedCard['state'],
    claims: r.claims.map((c) => `${c.namespace}/${c.name}`).sort(),
    holders: r.holders,
    promisedMemory: r.promised.memoryBytes,
    promisedUnits: r.promised.units,
  }));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function cards(...args: string[]): Promise<Run> {
  return run(process.execPath, [CLI, 'cards', '--kubeconfig', cluster.kubeconfig, ...args]);
}

async function cardsJson(...args: string[]): Promise<CliCard[]> {
  const result = await cards('-o', 'json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { cards: CliCard[] }).cards;
}

/** The per-card and per-pool samples of the checker's /metrics, by `node/card` and by pool. */
async function scrape(): Promise<Omit<Sample, 't'>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Omit<Sample, 't'> = { pools: {}, cards: {} };
  for (const line of text.split('\n')) {
    const match = /^(gpustack_(?:card|pool)_[a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, labelText, value] = match as unknown as [string, string, string, string];
    const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (name.startsWith('gpustack_pool_')) (out.pools[labels['pool'] ?? ''] ??= {})[name] = Number(value);
    else if (name !== 'gpustack_card_info')
      (out.cards[`${labels['node']}/card-${labels['card']}`] ??= {})[name] = Number(value);
  }
  return out;
}

const cluster = useCluster({
  scheduler: true,
  // The chain emits Kueue objects and the checker watches Workloads: Kueue's CRDs, not its manager.
  kueue: 'crds',
  hooks: true,
  checker: true,
  components: ['kubectl'],
  setup: async (c) => {
    client = c.client;
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: TEAM_B } });

    metricsUrl = `${c.checker?.url}/metrics`;

    const machines = {
      [H100_NODE]: nvidiaMachine('NVIDIA H100 80GB HBM3', 4),
      [H200_NODE]: nvidiaMachine('NVIDIA H200', 2),
    };
    for (const [node, machine] of Object.entries(machines)) {
      await createReadyNode(client, { name: node });
      const agent = await c.startAgent(node, machine);
      const count = machine.devices?.nvidia?.length ?? 0;
      const slicePool = await waitPool(
        client,
        agent,
        NVIDIA,
        (p) => p.devices.filter((d) => attributeOf(d, NVIDIA, 'mode')?.string === 'whole').length === count,
        `the agent publishes ${count} whole cards`,
      );
      productKeys.set(node, attributeOf(slicePool.devices[0] as SliceDevice, NVIDIA, 'productKey')?.string ?? '');
    }
    const classes = [...productKeys.values()].flatMap((k) => [`gpustack-${k}`, `gpustack-${k}-shared`]);
    await waitFor(
      async () => {
        const names = (await client.list(RESOURCE_API, 'DeviceClass')).map((c) => c.metadata.name);
        const types = (await client.list('worker.gpustack.ai/v1alpha1', 'InstanceType')).length;
        return classes.every((c) => names.includes(c)) && types >= productKeys.size;
      },
      CONVERGE_MS,
      'the chain emits our DeviceClasses and InstanceTypes',
    );

    // kubectl finds plugins on PATH by name: the built CLI under the name the package installs.
    pluginDir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-plugin-'));
    chmodSync(CLI, 0o755);
    symlinkSync(CLI, path.join(pluginDir, 'kubectl-gpustack'));
    symlinkSync(c.components.kubectl?.binary ?? '', path.join(pluginDir, 'kubectl'));
    sampler = setInterval(() => {
      scrape().then(
        (s) => samples.push({ t: (Date.now() - startedAt) / 1000, ...s }),
        () => undefined,
      );
    }, 1000);
  },
  teardown: (c) => {
    if (sampler) clearInterval(sampler);
    if (samples.length > 0) {
      const file = path.join(c.logsDir, 'card-metrics.json');
      writeFileSync(file, `${JSON.stringify({ productKeys: Object.fromEntries(productKeys), samples }, null, 1)}\n`);
      const out = process.env['E2E_CARD_METRICS_OUT'];
      if (out) copyFileSync(file, out);
      log(`card metrics sampled ${samples.length} times: ${out ?? file}`);
    }
    if (pluginDir) rmSync(pluginDir, { recursive: true, force: true });
  },
});

/** Where the checker's metrics stand against the expected cards; empty when they agree. */
async function metricsDiff(expected: readonly ExpectedCard[]): Promise<string[]> {
  const { cards: byCard } = await scrape();
  const out: string[] = [];
  for (const c of expected) {
    const m = byCard[`${c.node}/${c.card}`] ?? {};
    const want: Record<string, number | undefined> = {
      gpustack_card_memory_bytes: c.memoryBytes,
      gpustack_card_units: c.units,
      gpustack_card_memory_promised_bytes: c.promisedMemory,
      gpustack_card_units_promised: c.promisedUnits,
      gpustack_card_claims: c.claims.length,
      gpustack_card_whole: c.state === 'whole' ? 1 : undefined,
    };
    for (const [name, value] of Object.entries(want))
      if (m[name] !== value) out.push(`${c.node}/${c.card} ${name}: ${m[name]} (want ${value})`);
  }
  return out;
}

describe('gpustack-operator cards on a live cluster', () => {
  const h100 = () => productKeys.get(H100_NODE) as string;
  const h200 = () => productKeys.get(H200_NODE) as string;

  it('before any claim: every published card free, in its pool; a DeviceTaintRule not served is said once', async () => {
    const result = await cards('-o', 'json');
    expect(result.code, result.stderr).toBe(0);
    // 1.37 serves DeviceTaintRule (nothing to say); 1.36 without the gate does not (said once).
    expect(result.stderr.match(/DeviceTaintRule/g) ?? [], result.stderr).toHaveLength(cluster.deviceTaintRules ? 0 : 1);
    const rows = (JSON.parse(result.stdout) as { cards: CliCard[] }).cards;
    expect(rows).toHaveLength(6);
    expect(comparable(rows)).toEqual(await expectedCards());
    expect(rows.every((r) => r.state === 'free' && r.pool !== null && !r.cordoned)).toBe(true);
  });

  it('with whole and shared claims allocated by the scheduler: the CLI and the metrics match the live claims exactly', async () => {
    await client.applyObject(claimTemplate('whole-h100', `gpustack-${h100()}`));
    await client.applyObject(claimTemplate('two-h200', `gpustack-${h200()}`, { count: 2 }));
    await client.applyObject(claimTemplate('share', `gpustack-${h100()}-shared`, { capacity: { memory: '20Gi' } }));
    await client.applyObject(
      claimTemplate('share', `gpustack-${h100()}-shared`, { namespace: TEAM_B, capacity: { memory: '30Gi' } }),
    );
    const pods: [string, string, string][] = [
      ['train-a', 'default', 'whole-h100'],
      ['infer-a', 'default', 'share'],
      ['infer-b', TEAM_B, 'share'],
      ['train-big', 'default', 'two-h200'],
    ];
    for (const [name, namespace, tmpl] of pods) {
      await client.applyObject(pod(name, namespace, { claims: [{ name: 'cards', template: tmpl }] }));
      await waitBound(client, namespace, name);
      // Room for the sampler to see each step.
      await new Promise((resolve) => setTimeout(resolve, 4000));
    }
    let expected: ExpectedCard[] = [];
    // reservedFor is written by the scheduler as it binds: read once every bound Pod shows there.
    await waitFor(
      async () => {
        expected = await expectedCards();
        return expected.flatMap((c) => c.holders).length >= 4;
      },
      30_000,
      'every claim reserved for its Pod',
    );
    const rows = await cardsJson();
    expect(comparable(rows)).toEqual(expected);
    // The point of the scenario, stated: one whole H100, shares summing 50Gi, two whole H200.
    expect(expected.filter((c) => c.state === 'whole').map((c) => c.node)).toEqual([H100_NODE, H200_NODE, H200_NODE]);
    const shared = expected.filter((c) => c.state === 'shared');
    expect(shared.map((c) => c.node)).toEqual(shared.map(() => H100_NODE));
    // 20Gi and 30Gi asked: what the request policy rounds them to, never less.
    expect(shared.reduce((n, c) => n + c.promisedMemory, 0)).toBeGreaterThanOrEqual(50 * 2 ** 30);
    expect(expected.flatMap((c) => c.holders).sort()).toEqual([
      'default/infer-a',
      'default/train-a',
      'default/train-big',
      'default/train-big',
      `${TEAM_B}/infer-b`,
    ]);

    let diff: string[] = [];
    await waitFor(
      async () => (diff = await metricsDiff(expected)).length === 0,
      60_000,
      'the checker metrics agree with the claims',
    ).catch((error: Error) => {
      throw new Error(`${error.message}:\n  ${diff.join('\n  ')}`, { cause: error });
    });

    const table = await cards();
    const wide = await cards('-o', 'wide');
    log(`$ gpustack-operator cards\n${table.stdout}\n$ gpustack-operator cards -o wide\n${wide.stdout}`);
    expect(table.stdout.split('\n')[0]).toMatch(
      /^NODE\s+CARD\s+MODEL\s+MEMORY\s+STATE\s+PROMISED\s+HOLDERS\s+CORDONED\s+HEALTH$/,
    );
    expect(table.stdout).toMatch(
      new RegExp(`^${H100_NODE}\\s+\\d\\s+${h100()}\\s+\\S+\\s+whole\\s.*default/train-a`, 'm'),
    );
  });

  it('filters by node, pool and namespace; an unknown node is one line and exit 1', async () => {
    const all = comparable(await cardsJson());
    expect(comparable(await cardsJson('--node', H200_NODE))).toEqual(all.filter((c) => c.node === H200_NODE));
    const pool = all.find((c) => c.node === H100_NODE)?.pool as string;
    expect(comparable(await cardsJson('--pool', pool))).toEqual(all.filter((c) => c.pool === pool));
    const teamB = comparable(await cardsJson('--namespace', TEAM_B));
    expect(teamB).toEqual(all.filter((c) => c.claims.some((claim) => claim.startsWith(`${TEAM_B}/`))));
    expect(teamB).toHaveLength(1);
    const unknown = await cards('--node', 'no-such-node');
    expect(unknown.code).toBe(1);
    expect(
      unknown.stderr
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('error:')),
    ).toEqual(['error: node "no-such-node" publishes no cards of ours (no ResourceSlice of our drivers names it)']);
  });

  it('kubectl finds kubectl-gpustack on PATH and runs `kubectl gpustack cards` against the cluster', async () => {
    const env = {
      ...process.env,
      // The plugin's shebang runs `node`: the Node.js this suite runs on (24) first on PATH.
      PATH: `${pluginDir}:${path.dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      KUBECONFIG: cluster.kubeconfig,
    };
    const kubectl = path.join(pluginDir, 'kubectl');
    const list = await run(kubectl, ['plugin', 'list'], env);
    expect(list.stdout).toContain(path.join(pluginDir, 'kubectl-gpustack'));
    const help = await run(kubectl, ['gpustack', 'cards', '--help'], env);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/cards\s+Print every card of the cluster/);
    const viaKubectl = await run(kubectl, ['gpustack', 'cards', '-o', 'json'], env);
    expect(viaKubectl.code, viaKubectl.stderr).toBe(0);
    expect(comparable((JSON.parse(viaKubectl.stdout) as { cards: CliCard[] }).cards)).toEqual(await expectedCards());
  });

  it('releasing the claims frees the cards in the CLI and the metrics', async () => {
    for (const [name, namespace] of [
      ['infer-b', TEAM_B],
      ['train-a', 'default'],
      ['infer-a', 'default'],
      ['train-big', 'default'],
    ] as const) {
      await deletePodNow(client, namespace, name);
      await new Promise((resolve) => setTimeout(resolve, 4000));
    }
    await waitFor(
      async () => (await client.list(RESOURCE_API, 'ResourceClaim')).length === 0,
      60_000,
      'the claims of the deleted Pods are deleted',
    );
    const expected = await expectedCards();
    expect(expected.every((c) => c.state === 'free')).toBe(true);
    expect(comparable(await cardsJson())).toEqual(expected);
    await waitFor(async () => (await metricsDiff(expected)).length === 0, 60_000, 'the metrics free every card');
    const { pools } = await scrape();
    for (const counts of Object.values(pools))
      expect(counts['gpustack_pool_cards_free']).toBe(counts['gpustack_pool_cards']);
    await new Promise((resolve) => setTimeout(resolve, 3000));
  });
});
