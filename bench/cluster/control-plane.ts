/**
 * @module `npm run bench:cluster`: the whole chain on a real control plane at scale. For each N it
 * starts the e2e components (etcd, kube-apiserver, Metacontroller from the e2e cache, our server from
 * dist), applies the shipped CRDs and controllers, creates N realistic Nodes (`generateNodes`: NFD,
 * agent and GFD labels, kubelet-like status with images and conditions) and measures initial
 * convergence, the reaction to one Node's card change (20 changes), hook calls per route per change,
 * the chain request's bytes (what it reads of the Nodes: bench/cluster/chain-request.ts) and a NodeProfile's
 * bytes per Node, CPU seconds and peak RSS of each process and connection resets.
 * Results: `bench/results/cluster-<date>.json`, `bench/results/cluster-scale.svg`, a section of
 * `bench/RESULTS.md` and `bench/README-cluster-section.md`.
 * Options: `--nodes 500,2000,5000`, `--changes 20`, `--replicas N` (hook server processes behind a
 * round-robin proxy, as the chart's Service spreads the calls; default: the chart's `server.replicas`),
 * `--slim-at 5000` (the request-size experiment),
 * `--status-reports` (one kubelet status report per Node, node-profile syncing on it and not: what
 * `ignoreStatusChanges: false` costs; Metacontroller v4 only, given as E2E_METACONTROLLER_BIN), `--no-write`,
 * `--out FILE` (each run's result as soon as it ends).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { parse } from 'yaml';

import type { Node } from '../../src/k8s/index.js';
import { renderChain, type RenderedObject } from '../../src/render/index.js';
import { sleep, waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { diffObjects, idOf, ourManifests } from '../../harness/e2e/chain.js';
import { ensureCrds } from '../../harness/e2e/components.js';
import { startControlPlane, startMetacontroller, type ControlPlane } from '../../harness/e2e/control-plane.js';
import type { RequestSizes } from '../../harness/e2e/hook-proxy.js';
import { freePorts, startProcess, type ManagedProcess } from '../../harness/e2e/processes.js';
import { BENCH_DIR, ROOT, SERVER_V8_FLAGS } from '../shared/child.js';
import { argument, logger, processUse } from '../shared/process.js';
import { cardLabelPatch, generateNodes } from '../shared/cluster-nodes.js';
import { chainRequestSizes } from './chain-request.js';
import { chartReplicas, installPacing, pacingTable, type PacedCall } from './replicas.js';
import {
  BEFORE,
  WHOLE_NODES,
  clusterMarkdown,
  clusterReadmeSection,
  clusterScaleSvg,
  spliceClusterSection,
  type ClusterRun,
  type ProcessUse,
  type Reaction,
  type StatusReport,
} from './control-plane-report.js';
import { installTable, type InstallFile, type InstallRun } from './install-report.js';
import { commitOf } from '../shared/results-header.js';
import { writeRunFile } from '../shared/run-file.js';
import { quantile } from '../shared/stats.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const MANAGED = 'gpustack.ai/managed';
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** The kinds a card change can touch; LocalQueues follow pools, which a card change does not add. */
const REACTION_KINDS = ['ResourceFlavor', 'ClusterQueue', 'InstanceType'] as const;
const OWNED: Record<string, { apiVersion: string; labelSelector?: string; prefix?: string }> = {
  ResourceFlavor: { apiVersion: KUEUE, labelSelector: 'resource.gpustack.ai/type=nodes' },
  ClusterQueue: { apiVersion: KUEUE, labelSelector: 'resource.gpustack.ai/type=instancetypes' },
  InstanceType: { apiVersion: GPUSTACK },
  LocalQueue: { apiVersion: KUEUE, prefix: 'gpustack-fnv64-' },
  AdmissionCheck: { apiVersion: KUEUE, prefix: 'gpustack-node-devices' },
  ChainSettings: { apiVersion: GPUSTACK },
  NodeProfile: { apiVersion: GPUSTACK },
  NodeShard: { apiVersion: GPUSTACK },
  // Emitted once main's DRA part 1 is in; none before, on either side of the comparison.
  DeviceClass: { apiVersion: 'resource.k8s.io/v1', labelSelector: 'resource.gpustack.ai/type=deviceclasses' },
};
/** `--metacontroller-workers N`: Metacontroller's sync workers per controller (its default: 5). */
const WORKERS = ((): number | undefined => {
  const value = argument('metacontroller-workers');
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--metacontroller-workers: a positive integer, not ${value}`);
  return n;
})();
/** `--replicas N`: hook server processes behind the round-robin proxy; the chart's count by default. */
const REPLICAS = ((): number => {
  const value = argument('replicas');
  if (value === undefined) return chartReplicas();
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--replicas: a positive integer, not ${value}`);
  return n;
})();
/** Namespaces besides the API server's own: teams that get LocalQueues, as in a shared cluster. */
const TEAM_NAMESPACES = 10;
const HOOK_ROUTES = [
  'node-profile/customize',
  'node-profile/sync',
  'node-shard/customize',
  'node-shard/sync',
  'scheduling-chain/customize',
  'scheduling-chain/sync',
  'instance-type/customize',
  'instance-type/sync',
  'node-devices-check/sync',
] as const;

const log = logger('cluster');

/** Per process name its pid, or the pids of its replicas (the hook server's): their CPU summed, their largest RSS. */
type Pids = Record<string, number | readonly number[]>;

const pidsOf = (pid: number | readonly number[]): readonly number[] => (typeof pid === 'number' ? [pid] : pid);
type CpuSnapshot = Record<string, number>;

function cpuSnapshot(pids: Pids): CpuSnapshot {
  const out: CpuSnapshot = {};
  for (const [name, pid] of Object.entries(pids))
    out[name] =
      name === 'bench driver'
        ? process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6
        : pidsOf(pid).reduce((sum, one) => sum + processUse(one).cpuSeconds, 0);
  return out;
}

const cpuBetween = (a: CpuSnapshot, b: CpuSnapshot): CpuSnapshot =>
  Object.fromEntries(Object.keys(b).map((k) => [k, Math.round(((b[k] ?? 0) - (a[k] ?? 0)) * 100) / 100]));

/** Answers our server's replicas have given per route, by their own counters (every status code), summed. */
async function hookCounts(serverUrls: readonly string[]): Promise<Record<string, number>> {
  const texts = await Promise.all(
    serverUrls.map(async (url) => (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text()),
  );
  const counts: Record<string, number> = Object.fromEntries(HOOK_ROUTES.map((r) => [r, 0]));
  for (const line of texts.join('\n').split('\n')) {
    if (!line.startsWith('gpustack_hook_requests_total{')) continue;
    const controller = /controller="([^"]+)"/.exec(line)?.[1];
    const hook = /hook="([^"]+)"/.exec(line)?.[1];
    const route = `${controller}/${hook}`;
    counts[route] = (counts[route] ?? 0) + Number(line.split(' ').at(-1));
  }
  return counts;
}

const countsBetween = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.keys(b).map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]));

/** Our server as its Deployment runs it (`serve`, NODE_OPTIONS of the manifest), from dist; its log `<name>.log`. */
async function startServer(logsDir: string, name: string): Promise<{ url: string; proc: ManagedProcess }> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const [port] = (await freePorts(1)) as [number];
  const url = `http://127.0.0.1:${port}`;
  const proc = startProcess(
    name,
    process.execPath,
    [CLI, 'serve', '--host', '127.0.0.1', '--port', String(port)],
    logsDir,
    { env: { ...process.env, NODE_OPTIONS: SERVER_V8_FLAGS.join(' ') } },
  );
  await waitFor(
    async () => {
      if (!proc.running()) throw new Error(`${name} exited: ${proc.tail()}`);
      return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) })).ok;
    },
    30_000,
    `hook server did not become ready on ${url}`,
  );
  return { url, proc };
}

/** The recording proxy in its own process (bench/cluster/hook-proxy-process.ts), read over its control port. */
interface ProxyProcess {
  readonly url: string;
  readonly pid: number;
  sizes(): Promise<Record<string, RequestSizes>>;
  /** Per route, the calls each replica answered. */
  answeredBy(): Promise<Record<string, number[]>>;
  takeMax(): Promise<Record<string, number>>;
  /** Every paced call so far (`--calls`), in the order their answers went back. */
  pacedCalls(): PacedCall[];
}

async function startProxyProcess(plane: ControlPlane, targets: readonly string[]): Promise<ProxyProcess> {
  const [port, controlPort] = (await freePorts(2)) as [number, number];
  const callsFile = path.join(plane.logsDir, 'paced-calls.jsonl');
  const proc = startProcess(
    'hook-proxy',
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(BENCH_DIR, 'cluster', 'hook-proxy-process.ts'),
      '--targets',
      targets.join(','),
      '--calls',
      callsFile,
      '--port',
      String(port),
      '--control-port',
      String(controlPort),
    ],
    plane.logsDir,
  );
  plane.adopt({ name: 'hook-proxy', stop: () => proc.stop() });
  const control = `http://127.0.0.1:${controlPort}`;
  const call = async <T>(method: string, route: string): Promise<T> =>
    (await (await fetch(`${control}${route}`, { method, signal: AbortSignal.timeout(10_000) })).json()) as T;
  await waitFor(
    async () => {
      if (!proc.running()) throw new Error(`hook proxy exited: ${proc.tail()}`);
      return (await fetch(`${control}/sizes`, { signal: AbortSignal.timeout(1000) })).ok;
    },
    30_000,
    'hook proxy did not start',
  );
  return {
    url: `http://127.0.0.1:${port}`,
    pid: proc.pid,
    sizes: () => call('GET', '/sizes'),
    answeredBy: () => call('GET', '/answered-by'),
    takeMax: () => call('POST', '/take-max'),
    pacedCalls: () =>
      existsSync(callsFile)
        ? readFileSync(callsFile, 'utf8')
            .split('\n')
            .filter((line) => line.trim() !== '')
            .map((line) => JSON.parse(line) as PacedCall)
        : [],
  };
}

/** Writes (POST, PUT, PATCH, DELETE, APPLY) the API server has answered, per resource, by its own counter. */
async function apiServerWrites(client: KubeClient): Promise<Record<string, number>> {
  const { body } = await client.raw('GET', '/metrics');
  const writes: Record<string, number> = {};
  for (const line of String(body).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /[{,]verb="([^"]+)"/.exec(line)?.[1] ?? '';
    if (!['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY'].includes(verb)) continue;
    const resource = /[{,]resource="([^"]*)"/.exec(line)?.[1] ?? '';
    const subresource = /[{,]subresource="([^"]*)"/.exec(line)?.[1] ?? '';
    const key = subresource ? `${resource}/${subresource}` : resource;
    writes[key] = (writes[key] ?? 0) + Number(line.split(' ').at(-1));
  }
  return writes;
}

/**
 * Our manifests as the chain e2e applies them (hook URLs to our server), but with the resync
 * periods the manifests ship, not the e2e's short ones.
 */
async function installManifests(client: KubeClient, hookUrl: string): Promise<void> {
  const shipped = new Map<string, number | undefined>();
  const controllers = path.join(ROOT, 'manifests', 'compositecontrollers');
  for (const file of readdirSync(controllers).filter((f) => f.endsWith('.yaml'))) {
    const doc = parse(readFileSync(path.join(controllers, file), 'utf8')) as {
      metadata: { name: string };
      spec: { resyncPeriodSeconds?: number };
    };
    shipped.set(doc.metadata.name, doc.spec.resyncPeriodSeconds);
  }
  const objects = ourManifests(hookUrl).map((object) => {
    if (!shipped.has(object.metadata.name)) return object;
    const { resyncPeriodSeconds: _e2e, ...spec } = object['spec'] as Record<string, unknown>;
    const period = shipped.get(object.metadata.name);
    return { ...object, spec: period === undefined ? spec : { ...spec, resyncPeriodSeconds: period } };
  });
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  for (const crd of crds) await client.applyObject(crd);
  await client.waitForCrds(crds.map((c) => c.metadata.name));
  const workloads = new Set(['Deployment', 'DaemonSet', 'Service', 'PodDisruptionBudget']);
  for (const object of objects.filter((o) => o.kind !== 'CustomResourceDefinition' && !workloads.has(o.kind)))
    await client.applyObject(object);
}

/** Creates a Node as a kubelet registers it: the object, then its whole status on the subresource. */
async function createNode(client: KubeClient, node: Node): Promise<void> {
  const { name, labels, annotations } = node.metadata;
  await client.request(
    'POST',
    '/api/v1/nodes',
    JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels, annotations }, spec: node.spec }),
  );
  await client.request(
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    JSON.stringify({ status: node.status }),
    'application/merge-patch+json',
  );
}

async function listOwned(client: KubeClient, kinds: readonly string[]): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  for (const kind of kinds) {
    const owned = OWNED[kind] as (typeof OWNED)[string];
    const list = await client.list(
      owned.apiVersion,
      kind,
      owned.labelSelector ? { labelSelector: owned.labelSelector } : {},
    );
    for (const object of list)
      if (!owned.prefix || object.metadata.name.startsWith(owned.prefix)) out.set(idOf(object), object);
  }
  return out;
}

/** Differences between the live objects of `kinds` and render's (same set; our labels, annotations and spec). */
function diffKinds(
  expected: readonly RenderedObject[],
  live: Map<string, KubeObject>,
  kinds: readonly string[],
): string[] {
  return diffObjects(
    expected.filter((o) => kinds.includes(o.kind)),
    live,
  );
}

function render(nodes: readonly Node[], namespaces: readonly string[]) {
  const result = renderChain({ nodes, namespaces }, { now: '2026-01-01T00:00:00Z' });
  if (!result.ok) throw new Error(`render refused the bench's nodes: ${result.error.message}`);
  return result;
}

/** Node labels render wants that the live Node lacks (null = must be absent). */
function nodeLabelDiff(want: Record<string, string | null>, have: Record<string, string>): string[] {
  return Object.entries(want)
    .filter(([key, value]) => (value === null ? key in have : have[key] !== value))
    .map(([key, value]) => `label ${key}: want ${value}, have ${have[key]}`);
}

function applyLabelPatch(node: Node, patch: Record<string, string | null>): Node {
  const labels = { ...node.metadata.labels };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete labels[key];
    else labels[key] = value;
  }
  return { ...node, metadata: { ...node.metadata, labels } };
}

/** Bytes of hook requests our server's replicas are reading or answering now (their gauges, summed). */
async function inflightBytes(serverUrls: readonly string[]): Promise<number> {
  let bytes = 0;
  for (const url of serverUrls) {
    const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    const line = text.split('\n').find((l) => l.startsWith('gpustack_hook_inflight_bytes'));
    bytes += Number(line?.split(' ').at(-1) ?? 0);
  }
  return bytes;
}

/**
 * Waits until no hook has answered for `quietMs`, none is in flight and Metacontroller is idle (under
 * 0.1 CPU s per second: at 5,000 Nodes it spends seconds marshalling a chain request before our server
 * sees a byte), at most `limitMs`; returns the counts then.
 */
async function quiet(
  serverUrls: readonly string[],
  metacontrollerPid: number,
  quietMs: number,
  limitMs: number,
): Promise<Record<string, number>> {
  let last = await hookCounts(serverUrls);
  let since = Date.now();
  let cpu = processUse(metacontrollerPid).cpuSeconds;
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    await sleep(500);
    const now = await hookCounts(serverUrls);
    const cpuNow = processUse(metacontrollerPid).cpuSeconds;
    const busy = cpuNow - cpu > 0.05 || (await inflightBytes(serverUrls)) > 0;
    cpu = cpuNow;
    if (busy || JSON.stringify(now) !== JSON.stringify(last)) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) break;
  }
  return last;
}

function resets(plane: ControlPlane, servers: readonly string[]): number {
  const text = ['metacontroller', ...servers]
    .map((name) => path.join(plane.logsDir, `${name}.log`))
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  return text.split('\n').filter((line) => /connection reset|broken pipe|ECONNRESET|EPIPE/i.test(line)).length;
}

/**
 * One status report per Node (see `StatusReport`), after node-profile is set to `ignoreStatusChanges`
 * with its resync put off (Metacontroller restarts the controller, re-syncing every Node once, before
 * the hooks go quiet), so that only the syncs the reports cause are counted.
 */
async function statusReport(
  client: KubeClient,
  nodes: readonly Node[],
  serverUrls: readonly string[],
  pids: Pids,
  ignoreStatusChanges: boolean,
): Promise<StatusReport> {
  await client.mergePatch('metacontroller.k8s.io/v1alpha1', 'DecoratorController', 'gpustack-node-profile', {
    spec: { resyncPeriodSeconds: 3600, resources: [{ apiVersion: 'v1', resource: 'nodes', ignoreStatusChanges }] },
  });
  await sleep(5000);
  const before = await quiet(serverUrls, pids['metacontroller'] as number, 5000, 600_000);
  const cpuBefore = cpuSnapshot(pids);
  const heartbeat = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const started = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < nodes.length) {
      const node = nodes[next++] as Node;
      const conditions = (node.status as { conditions?: Record<string, unknown>[] }).conditions ?? [];
      await client.request(
        'PATCH',
        `/api/v1/nodes/${node.metadata.name}/status`,
        JSON.stringify({ status: { conditions: conditions.map((c) => ({ ...c, lastHeartbeatTime: heartbeat })) } }),
        'application/merge-patch+json',
      );
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const writeSeconds = (performance.now() - started) / 1000;
  const after = await quiet(serverUrls, pids['metacontroller'] as number, 5000, 600_000);
  const report = {
    ignoreStatusChanges,
    writes: nodes.length,
    writeSeconds,
    calls: countsBetween(before, after),
    cpu: cpuBetween(cpuBefore, cpuSnapshot(pids)),
  };
  log(`status reports, ignoreStatusChanges ${ignoreStatusChanges}: ${JSON.stringify(report)}`);
  return report;
}

/**
 * The request-size experiment (issue 18 item 4): the same Nodes without what the chain never reads
 * and a kubelet writes (images, conditions, nodeInfo, addresses), so the chain's
 * request shrinks while the number of Nodes, labels and hook calls stay the same.
 */
function slim(node: Node): Node {
  const status = node.status as { capacity?: unknown; allocatable?: unknown };
  return { ...node, status: { capacity: status.capacity, allocatable: status.allocatable } } as Node;
}

/** The running bench: a control plane with Kueue's CRDs, our server behind the size proxy, Metacontroller and our manifests. */
interface Bench {
  readonly plane: ControlPlane;
  readonly client: KubeClient;
  readonly serverUrls: readonly string[];
  /** The replicas' process names: their logs are `<name>.log` in the plane's logs directory. */
  readonly servers: readonly string[];
  readonly proxy: ProxyProcess;
  readonly metacontroller: Awaited<ReturnType<typeof startMetacontroller>>;
  readonly pids: Pids;
}

/** What an install started from: the moment the manifests were applied and every counter then. */
interface InstallStart {
  readonly at: number;
  readonly cpu: CpuSnapshot;
  readonly calls: Record<string, number>;
  readonly sizes: Record<string, RequestSizes>;
  readonly writes: Record<string, number>;
  readonly createSeconds: number;
  /** `at` on the wall clock (the paced calls' times are). */
  readonly wallMs: number;
}

/**
 * The control plane with Kueue's CRDs, namespaces and Metacontroller (what a cluster runs before
 * ours), then our server behind the proxy and our manifests. With `preexisting`, those Nodes are
 * created before anything of ours, and the install is timed from the moment the manifests are applied.
 */
async function startBench(
  plane: ControlPlane,
  preexisting?: readonly Node[],
): Promise<{ bench: Bench; install?: InstallStart }> {
  const { client } = plane;
  const kueue = ensureCrds('kueue');
  await client.installCrds(
    execFileSync('ls', [kueue.dir], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => f.startsWith('kueue.x-k8s.io_') && f.endsWith('.yaml'))
      .map((f) => path.join(kueue.dir, f)),
  );
  for (let i = 0; i < TEAM_NAMESPACES; i++)
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `team-${i}` } });
  // Metacontroller's own manifest's discovery interval (20 s), not the e2e's 1 s: no CRD appears mid-run.
  const metacontroller = await startMetacontroller({
    kubeconfig: plane.kubeconfig,
    logsDir: plane.logsDir,
    plane,
    discoveryInterval: '20s',
    ...(WORKERS !== undefined ? { args: [`--workers=${WORKERS}`] } : {}),
  });
  let createSeconds = 0;
  if (preexisting) {
    log(`creating ${preexisting.length} Nodes before the install`);
    const created = await createNodes(client, preexisting);
    createSeconds = (created.last - created.first) / 1000;
  }
  const names = Array.from({ length: REPLICAS }, (_, i) => `hook-server-${i}`);
  const servers = await Promise.all(names.map((name) => startServer(plane.logsDir, name)));
  names.forEach((name, i) => plane.adopt({ name, stop: () => (servers[i] as { proc: ManagedProcess }).proc.stop() }));
  const serverUrls = servers.map((server) => server.url);
  // Metacontroller calls the hooks through the proxy, which records each request's size per route
  // and sends each to the next replica in turn, as the chart's Service spreads them.
  const proxy = await startProxyProcess(plane, serverUrls);
  log(`${REPLICAS} hook server replica(s) behind the proxy ${proxy.url}`);
  const pids: Pids = {
    'our server': servers.map((server) => server.proc.pid),
    metacontroller: metacontroller.process.pid,
    'kube-apiserver': plane.processes.find((p) => p.name === 'kube-apiserver')?.pid ?? -1,
    etcd: plane.processes.find((p) => p.name === 'etcd')?.pid ?? -1,
    'hook proxy': proxy.pid,
    'bench driver': process.pid,
  };
  const bench: Bench = { plane, client, serverUrls, servers: names, proxy, metacontroller, pids };
  const install = preexisting && {
    cpu: cpuSnapshot(pids),
    calls: await hookCounts(serverUrls),
    sizes: await proxy.sizes(),
    writes: await apiServerWrites(client),
    createSeconds,
    at: performance.now(),
    wallMs: Date.now(),
  };
  await installManifests(client, proxy.url);
  if (install) return { bench, install };
  await waitFor(
    async () => (await client.get(GPUSTACK, 'ChainSettings', 'default')) !== undefined,
    120_000,
    'the chain wrote no ChainSettings',
    500,
  );
  return { bench };
}

/** Creates every Node, 16 at a time (a fleet joining); performance.now() of the first and last creation. */
async function createNodes(client: KubeClient, nodes: readonly Node[]): Promise<{ first: number; last: number }> {
  let next = 0;
  let first = 0;
  const worker = async (): Promise<void> => {
    while (next < nodes.length) {
      const node = nodes[next++] as Node;
      await createNode(client, node);
      if (first === 0) first = performance.now();
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return { first, last: performance.now() };
}

/**
 * Polls cheaply (owned objects, "any Node without managed?") until the live chain equals render's,
 * confirmed with every Node's labels; performance.now() of the poll that saw it.
 */
async function waitForConvergence(
  client: KubeClient,
  size: number,
  expected: ReturnType<typeof render>,
  kinds: readonly string[],
): Promise<number> {
  let lastDiff: string[] = [];
  const deadline = Date.now() + 40 * 60_000;
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`N = ${size}: no convergence in 40 min: ${lastDiff.slice(0, 5).join('; ')}`);
    const at = performance.now();
    const unmanaged = await client.request<{ items: unknown[] }>(
      'GET',
      `/api/v1/nodes?labelSelector=!${MANAGED}&limit=1`,
    );
    lastDiff =
      unmanaged.items.length > 0
        ? ['Nodes without managed']
        : diffKinds(expected.objects, await listOwned(client, kinds), kinds);
    if (lastDiff.length === 0) {
      const live = new Map((await client.list('v1', 'Node')).map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
      lastDiff = expected.nodes.flatMap((n) =>
        nodeLabelDiff(n.labels, live.get(n.name) ?? {}).map((d) => `${n.name} ${d}`),
      );
      if (lastDiff.length === 0) return at;
    }
    await sleep(500);
  }
}

/** The chain request's bytes of the Nodes as it is now (see chain-request.ts), and every NodeProfile's. */
async function measureChainRequest(client: KubeClient, withShards: boolean) {
  const items = async (url: string): Promise<KubeObject[]> =>
    (await client.request<{ items: KubeObject[] }>('GET', url)).items;
  return chainRequestSizes({
    profiles: await items(`/apis/${GPUSTACK}/nodeprofiles`),
    shards: withShards ? await items(`/apis/${GPUSTACK}/nodeshards`) : [],
    nodes: await items(`/api/v1/nodes?labelSelector=${MANAGED}%3Dtrue,!gpustack.ai%2Fprofiled`),
  });
}

/** The card count label of a Node's accelerator. */
function cardCount(node: Node): number | undefined {
  const entry = Object.entries(node.metadata.labels ?? {}).find(
    ([k]) => k.endsWith('.count') && k.startsWith('acceleratable'),
  );
  return entry === undefined ? undefined : Number(entry[1]);
}

/** One Node loses a card; the time until the live chain equals render's, and what it cost. */
async function followChange(
  bench: Bench,
  label: string,
  target: Node,
  want: ReturnType<typeof render>,
  patch: Record<string, string | null>,
): Promise<Reaction> {
  const { client, serverUrls, proxy, pids } = bench;
  const metacontrollerPid = bench.metacontroller.process.pid;
  const wantLabels = want.nodes.find((n) => n.name === target.metadata.name)?.labels ?? {};
  const before = await quiet(serverUrls, metacontrollerPid, 2000, 60_000);
  const cpuBefore = cpuSnapshot(pids);
  await proxy.takeMax();
  const started = performance.now();
  await client.mergePatch('v1', 'Node', target.metadata.name, { metadata: { labels: patch } });
  let done = 0;
  let diff: string[] = [];
  while (done === 0) {
    if (performance.now() - started > 300_000)
      throw new Error(`${label} not followed in 5 min: ${diff.slice(0, 5).join('; ')}`);
    const at = performance.now();
    const live = await client.get('v1', 'Node', target.metadata.name);
    diff = nodeLabelDiff(wantLabels, live?.metadata.labels ?? {});
    if (diff.length === 0) diff = diffKinds(want.objects, await listOwned(client, REACTION_KINDS), REACTION_KINDS);
    if (diff.length === 0) done = at;
    else await sleep(100);
  }
  const after = await quiet(serverUrls, metacontrollerPid, 3000, 60_000);
  return {
    node: target.metadata.name,
    seconds: (done - started) / 1000,
    calls: countsBetween(before, after),
    cpu: cpuBetween(cpuBefore, cpuSnapshot(pids)),
    largestRequestBytes: await proxy.takeMax(),
  };
}

/** `changes` card changes on Nodes spread over the fleet, one at a time; the Nodes as they end. */
async function runReactions(
  bench: Bench,
  size: number,
  changes: number,
  start: readonly Node[],
  namespaces: readonly string[],
): Promise<{ reactions: Reaction[]; nodes: Node[] }> {
  let nodes = [...start];
  const candidates = nodes.filter((n) => cardLabelPatch(n, 1) !== undefined && (cardCount(n) ?? 0) >= 2);
  const reactions: Reaction[] = [];
  for (let i = 0; i < changes && i < candidates.length; i++) {
    const target = candidates[Math.floor((i * candidates.length) / changes)] as Node;
    const count = cardCount(target) as number;
    const patch = cardLabelPatch(target, count - 1) as Record<string, string | null>;
    nodes = nodes.map((n) => (n.metadata.name === target.metadata.name ? applyLabelPatch(n, patch) : n));
    const reaction = await followChange(bench, `N = ${size}: change ${i}`, target, render(nodes, namespaces), patch);
    reactions.push(reaction);
    log(
      `N = ${size}: change ${i + 1} (${target.metadata.name} ${count} → ${count - 1} cards) followed in ${reaction.seconds.toFixed(2)} s`,
    );
  }
  return { reactions, nodes };
}

/** CPU seconds of each process in convergence and in the reactions, and its peak RSS (of replicas: the largest one's). */
function processUses(
  pids: Pids,
  [start, converged, reactStart, end]: readonly CpuSnapshot[],
): Record<string, ProcessUse> {
  const processes: Record<string, ProcessUse> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const use =
      name === 'bench driver'
        ? { peakRssMB: process.resourceUsage().maxRSS / 1024 }
        : { peakRssMB: Math.max(...pidsOf(pid).map((one) => processUse(one).peakRssMB)) };
    processes[name] = {
      cpuSecondsConvergence: cpuBetween(start ?? {}, converged ?? {})[name] ?? 0,
      cpuSecondsReactions: cpuBetween(reactStart ?? {}, end ?? {})[name] ?? 0,
      peakRssMB: Math.round(use.peakRssMB),
    };
  }
  return processes;
}

async function statusReports(bench: Bench, nodes: readonly Node[]): Promise<StatusReport[]> {
  const reports: StatusReport[] = [];
  for (const ignore of [false, true])
    reports.push(await statusReport(bench.client, nodes, bench.serverUrls, bench.pids, ignore));
  return reports;
}

async function runOnce(
  size: number,
  changes: number,
  slimNodes = false,
  withStatusReports = false,
): Promise<ClusterRun> {
  const loadStart = os.loadavg();
  log(`N = ${size}: generating and rendering`);
  const nodes = slimNodes ? generateNodes(size).map(slim) : generateNodes(size);
  const plane = await startControlPlane({ controllerManager: false });
  try {
    const { bench } = await startBench(plane);
    const { client, serverUrls, proxy, pids } = bench;
    const namespaces = (await client.list('v1', 'Namespace')).map((n) => n.metadata.name);
    const expected = render(nodes, namespaces);
    // NodeShards only where render emits them (a release before them has no such kind).
    const withShards = expected.objects.some((o) => o.kind === 'NodeShard');
    const allKinds = Object.keys(OWNED).filter((k) => k !== 'NodeShard' || withShards);

    log(`N = ${size}: creating Nodes`);
    const cpuStart = cpuSnapshot(pids);
    const callsStart = await hookCounts(serverUrls);
    await proxy.takeMax();
    const created = await createNodes(client, nodes);
    log(`N = ${size}: created in ${((created.last - created.first) / 1000).toFixed(1)} s; waiting for convergence`);
    const converged = await waitForConvergence(client, size, expected, allKinds);
    const cpuConverged = cpuSnapshot(pids);
    const callsConverged = await hookCounts(serverUrls);
    const largestConvergence = await proxy.takeMax();
    const { chainRequestBytes, profileBytes } = await measureChainRequest(client, withShards);
    log(`N = ${size}: converged ${((converged - created.last) / 1000).toFixed(1)} s after the last Node`);

    await quiet(serverUrls, bench.metacontroller.process.pid, 3000, 120_000);
    const cpuReactStart = cpuSnapshot(pids);
    const after = await runReactions(bench, size, changes, nodes, namespaces);
    const processes = processUses(pids, [cpuStart, cpuConverged, cpuReactStart, cpuSnapshot(pids)]);
    const reports = withStatusReports ? await statusReports(bench, after.nodes) : [];
    const seconds = after.reactions.map((r) => r.seconds);
    return {
      nodes: size,
      namespaces: namespaces.length,
      loadAverageStart: loadStart,
      loadAverageEnd: os.loadavg(),
      createSeconds: (created.last - created.first) / 1000,
      convergedAfterFirstSeconds: (converged - created.first) / 1000,
      convergedAfterLastSeconds: (converged - created.last) / 1000,
      convergenceCalls: countsBetween(callsStart, callsConverged),
      reaction: { p50: quantile(seconds, 0.5), p90: quantile(seconds, 0.9), max: Math.max(...seconds) },
      reactions: after.reactions,
      chainRequestBytes,
      largestRequestBytesConvergence: largestConvergence,
      requestSizes: await proxy.sizes(),
      bytesPerNode: profileBytes / size,
      flavors: expected.objects.filter((o) => o.kind === 'ResourceFlavor').length,
      processes,
      connectionResets: resets(plane, bench.servers),
      metacontroller: bench.metacontroller.component.version,
      slim: slimNodes,
      ...(reports.length > 0 ? { statusReports: reports } : {}),
    };
  } finally {
    await plane.stop();
  }
}

/** Metacontroller's client rate as the harness starts it (`--client-go-qps`, docs/install.md's recommendation). */
const METACONTROLLER_QPS = 100;

/**
 * The first install on a cluster that has its Nodes (`--install`): N Nodes created and reporting
 * status before the CRDs, our server and the controllers, then timed from applying the manifests
 * until the cluster equals `render` of its Nodes; then the same card changes as `runOnce`.
 */
async function runInstall(size: number, changes: number): Promise<InstallRun> {
  const loadStart = os.loadavg();
  log(`N = ${size}: generating and rendering (install on existing Nodes)`);
  const nodes = generateNodes(size);
  const plane = await startControlPlane({ controllerManager: false });
  try {
    const { bench, install } = await startBench(plane, nodes);
    if (!install) throw new Error('startBench did not time the install');
    const { client, serverUrls, proxy, pids } = bench;
    const namespaces = (await client.list('v1', 'Namespace')).map((n) => n.metadata.name);
    const expected = render(nodes, namespaces);
    const withShards = expected.objects.some((o) => o.kind === 'NodeShard');
    const allKinds = Object.keys(OWNED).filter((k) => k !== 'NodeShard' || withShards);
    log(`N = ${size}: manifests applied; waiting for convergence`);
    const timeline: { seconds: number; calls: Record<string, number> }[] = [];
    const sampler = setInterval(() => {
      const seconds = Math.round((performance.now() - install.at) / 100) / 10;
      void hookCounts(serverUrls).then(
        (counts) => timeline.push({ seconds, calls: countsBetween(install.calls, counts) }),
        () => undefined,
      );
    }, 2000);
    const converged = await waitForConvergence(client, size, expected, allKinds).finally(() => clearInterval(sampler));
    const convergedWallMs = Date.now() - (performance.now() - converged);
    const cpuConverged = cpuSnapshot(pids);
    const calls = countsBetween(install.calls, await hookCounts(serverUrls));
    const requests = requestsBetween(install.sizes, await proxy.sizes());
    const writes = countsBetween(install.writes, await apiServerWrites(client));
    const installSeconds = (converged - install.at) / 1000;
    const { profileBytes } = await measureChainRequest(client, withShards);
    log(`N = ${size}: installed in ${installSeconds.toFixed(1)} s: ${JSON.stringify(calls)}`);

    await quiet(serverUrls, bench.metacontroller.process.pid, 3000, 120_000);
    const pacing = installPacing(
      proxy.pacedCalls(),
      bench.servers.map((name) => readFileSync(path.join(plane.logsDir, `${name}.log`), 'utf8')),
      install.wallMs,
      convergedWallMs,
    );
    log(`N = ${size}: pacing ${JSON.stringify({ ...pacing, chain: undefined })}`);
    for (const call of pacing.chain) log(`N = ${size}: chain sync ${JSON.stringify(call)}`);
    const cpuReactStart = cpuSnapshot(pids);
    const after = await runReactions(bench, size, changes, nodes, namespaces);
    const processes = processUses(pids, [install.cpu, cpuConverged, cpuReactStart, cpuSnapshot(pids)]);
    const seconds = after.reactions.map((r) => r.seconds);
    return {
      nodes: size,
      loadAverageStart: loadStart,
      loadAverageEnd: os.loadavg(),
      createSeconds: install.createSeconds,
      installSeconds,
      qps: METACONTROLLER_QPS,
      writes,
      calls,
      requests,
      profileBytes,
      processes,
      reaction:
        seconds.length > 0
          ? { p50: quantile(seconds, 0.5), p90: quantile(seconds, 0.9), max: Math.max(...seconds) }
          : undefined,
      reactions: after.reactions,
      connectionResets: resets(plane, bench.servers),
      metacontroller: bench.metacontroller.component.version,
      pacing,
      timeline,
    };
  } finally {
    await plane.stop();
  }
}

/** Requests per route between two readings of the proxy: count, bytes, and the largest of all since the start. */
function requestsBetween(
  before: Record<string, RequestSizes>,
  after: Record<string, RequestSizes>,
): Record<string, RequestSizes> {
  return Object.fromEntries(
    Object.entries(after).map(([route, entry]) => {
      const was = before[route] ?? { count: 0, totalBytes: 0, maxBytes: 0 };
      return [
        route,
        { count: entry.count - was.count, totalBytes: entry.totalBytes - was.totalBytes, maxBytes: entry.maxBytes },
      ];
    }),
  );
}

/** `--install`: the first-install runs, each written to `--out` (default bench/results/install-<date>.json.gz) as it ends. */
async function mainInstall(sizes: readonly number[], changes: number): Promise<void> {
  const date = new Date().toISOString().slice(0, 10);
  const out = argument('out') ?? path.join(BENCH_DIR, 'results', `install-${date}.json.gz`);
  const cpus = os.cpus();
  const runs: InstallRun[] = [];
  for (const size of sizes) {
    runs.push(await runInstall(size, changes));
    const file: InstallFile = {
      date,
      commit: commitOf(['src', 'manifests']),
      machine: { cpus: cpus.length, cpuModel: cpus[0]?.model.trim() ?? 'unknown', node: process.version },
      changes,
      metacontrollerWorkers: WORKERS ?? 5,
      runs,
    };
    writeRunFile(out, file);
  }
  process.stdout.write(`${installTable(runs)}\n\n${pacingTable(runs)}\n`);
  log(`wrote ${out}`);
}

async function main(): Promise<void> {
  const sizes = (argument('nodes') ?? '500,2000,5000').split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--nodes: a comma-separated list of Node counts, not ${argument('nodes')}`);
  const changes = Number(argument('changes') ?? 20);
  if (process.argv.includes('--install')) return mainInstall(sizes, changes);
  const write = !process.argv.includes('--no-write');
  const started = performance.now();
  const runs: ClusterRun[] = [];
  const statusReports = process.argv.includes('--status-reports');
  // `--out FILE`: every run is written there as soon as it ends, so a later size that fails (or is
  // stopped on a busy machine) keeps the earlier ones (bench/cluster/shards-report.ts reads these files).
  const out = argument('out');
  for (const size of sizes) {
    runs.push(await runOnce(size, changes, false, statusReports));
    if (out)
      writeRunFile(out, { commit: commitOf(['src', 'manifests']), changes, metacontrollerWorkers: WORKERS ?? 5, runs });
  }
  const slimAt = argument('slim-at');
  const slimRuns: ClusterRun[] = [];
  for (const size of slimAt ? slimAt.split(',').map(Number) : []) slimRuns.push(await runOnce(size, changes, true));
  const cpus = os.cpus();
  const result = {
    date: new Date().toISOString().slice(0, 10),
    commit: commitOf(['src', 'manifests']),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    machine: { cpus: cpus.length, cpuModel: cpus[0]?.model.trim() ?? 'unknown', node: process.version },
    changes,
    metacontrollerWorkers: WORKERS ?? 5,
    runs,
    slimRuns,
    before: BEFORE,
    wholeNodes: WHOLE_NODES,
  };
  process.stdout.write(`${clusterMarkdown(result)}\n`);
  if (!write) return;
  const resultsDir = path.join(BENCH_DIR, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(path.join(resultsDir, `cluster-${result.date}.json`), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, 'cluster-scale.svg'), clusterScaleSvg(result));
  const resultsFile = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(resultsFile, spliceClusterSection(readFileSync(resultsFile, 'utf8'), clusterMarkdown(result)));
  writeFileSync(path.join(BENCH_DIR, 'README-cluster-section.md'), clusterReadmeSection(result));
  log(
    `wrote bench/results/cluster-${result.date}.json, bench/results/cluster-scale.svg, bench/RESULTS.md, bench/README-cluster-section.md`,
  );
}

await main();
