/**
 * @module `npm run bench:dra`: DRA allocation throughput of the real kube-scheduler on our ResourceSlices
 * (issue 27 part 4): v1.36.3 by default, another with E2E_KUBERNETES_VERSION (the whole control plane is
 * of that version; runs are kept apart by the version the scheduler reports). For each size and layout it
 * starts the e2e control plane (etcd, kube-apiserver, kube-controller-manager with the resource claim
 * controller; no kubelet), creates the DeviceClasses the chain emits, N Ready Nodes of 8 cards and each
 * Node's slices (`ours`: what the agent publishes, from `desiredSlices`; `baseline`: one plain device per
 * card). Per workload it creates every ResourceClaim and Pod with no scheduler running, then starts
 * kube-scheduler (client qps/burst 5000, as upstream's scheduler_perf) and times the binds it logs
 * (`-v=2`): Pods bound per second from the first bind to the last, until the cards are full, the run's
 * window is bound or `--max-seconds` have passed, and the scheduler's CPU seconds (/proc/<pid>/stat) and
 * RSS over the same span.
 * Results: `bench/results/dra-<date>.json` (runs of the same date are merged by scheduler version,
 * size, layout and workload), `bench/results/dra-throughput.svg` and the bench:dra section of `bench/RESULTS.md`.
 * Options: `--nodes 50,500` (default 500,2000,5000), `--window 4000` (the most Pods one run creates: a
 * fill that needs more is cut to its first `window` Pods), `--layouts ours,baseline`, `--workloads
 * whole,share`, `--profile-seconds 20` (a CPU profile of the scheduler from its first bind; its top
 * functions go into the results), `--max-seconds 240` (a run is cut this long after its first bind),
 * `--first-bind-seconds 150` (how long a run waits for its first bind), `--no-write`, `--report` (no runs:
 * the section and the plot again from the day's results file).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { sleep, waitFor, type KubeClient } from '../harness/e2e/apply.js';
import { ensureComponents } from '../harness/e2e/components.js';
import { DRA_CONTROLLERS, startControlPlane, type ControlPlane } from '../harness/e2e/control-plane.js';
import { assertRunning, freePorts, startProcess, type ManagedProcess } from '../harness/e2e/processes.js';
import { BENCH_DIR } from './child.js';
import { bindStats, cpuAt, parseBinds, type Bind, type CpuSample } from './dra-binds.js';
import {
  DRA_SECTION_END,
  DRA_SECTION_START,
  draMarkdown,
  draSvg,
  mergeRuns,
  spliceDraSection,
  type DraResult,
  type DraRun,
} from './dra-report.js';
import {
  CARDS_PER_NODE,
  LAYOUTS,
  WORKLOADS,
  benchDeviceClasses,
  claimObject,
  layoutSlices,
  nodeName,
  nodeObject,
  podObject,
  runPlan,
  workloadsOf,
  type Layout,
  type Workload,
} from './dra-workloads.js';
import { commitOf } from './results-header.js';

const RESOURCE = '/apis/resource.k8s.io/v1';
/** Upstream scheduler_perf's client rate limit (test/integration/scheduler_perf/util.go: QPS 5000, Burst 5000). */
export const SCHEDULER_QPS = 5000;
export const SCHEDULER_BURST = 5000;
/** Requests the driver keeps in flight while it creates objects. */
const CONCURRENCY = 16;
interface Options {
  window: number;
  maxSeconds: number;
  firstBindSeconds: number;
  profileSeconds: number;
}

/** No bind for this long ends a run: what is left is unschedulable (the cards are full). */
const STALL_MS = 30_000;

function argument(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return undefined;
  const arg = args[at] as string;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1];
}

function list<T extends string>(name: string, all: readonly T[], fallback: readonly T[]): T[] {
  const value = argument(name);
  if (value === undefined) return [...fallback];
  const items = value.split(',');
  const bad = items.filter((i) => !all.includes(i as T));
  if (bad.length > 0) throw new Error(`--${name}: ${bad.join(', ')} is not one of ${all.join(', ')}`);
  return items as T[];
}

function positive(name: string, fallback: number): number {
  const value = argument(name);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: a non-negative integer, not ${value}`);
  return n;
}

function log(message: string): void {
  process.stderr.write(`[bench:dra ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** CPU seconds (user + system, all threads), RSS and peak RSS of a live process, from /proc. */
function processUse(pid: number): { cpuSeconds: number; rssMB: number; peakRssMB: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { cpuSeconds: ticks / 100, rssMB: kb('VmRSS') / 1024, peakRssMB: kb('VmHWM') / 1024 };
  } catch {
    return { cpuSeconds: 0, rssMB: 0, peakRssMB: 0 };
  }
}

/** MemAvailable of /proc/meminfo in MB (what "free" means for a new process). */
function availableMB(): number {
  const text = readFileSync('/proc/meminfo', 'utf8');
  return Math.round(Number(/^MemAvailable:\s+(\d+)/m.exec(text)?.[1] ?? 0) / 1024);
}

/** Runs `work(item)` over `items` with CONCURRENCY in flight. */
async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function post(client: KubeClient, urlPath: string, object: unknown): Promise<void> {
  await client.request('POST', urlPath, JSON.stringify(object));
}

/** The scheduler's own counters we keep: attempts by result, and the time its attempts took. */
async function schedulerMetrics(port: number): Promise<Record<string, number>> {
  const text = await new Promise<string>((resolve) => {
    const request = https.get(
      { host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, timeout: 10_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      },
    );
    request.on('error', () => resolve(''));
    request.on('timeout', () => request.destroy());
  });
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const attempts = /^scheduler_schedule_attempts_total\{.*result="([a-z]+)".*\} (\S+)$/.exec(line);
    if (attempts) out[`attempts ${attempts[1]}`] = (out[`attempts ${attempts[1]}`] ?? 0) + Number(attempts[2]);
    const duration = /^scheduler_scheduling_attempt_duration_seconds_(sum|count)\{.*result="scheduled".*\} (\S+)$/.exec(
      line,
    );
    if (duration)
      out[`attempt seconds ${duration[1]}`] = (out[`attempt seconds ${duration[1]}`] ?? 0) + Number(duration[2]);
  }
  if (Object.keys(out).length === 0) log(`no scheduler metrics in: ${text.slice(0, 200)}`);
  return out;
}

/** A CPU profile of the scheduler for `seconds`, summarised by `go tool pprof -top` (empty if either fails). */
async function profileTop(port: number, seconds: number, file: string): Promise<string> {
  const body = await new Promise<Buffer>((resolve) => {
    const request = https.get(
      {
        host: '127.0.0.1',
        port,
        path: `/debug/pprof/profile?seconds=${seconds}`,
        rejectUnauthorized: false,
        timeout: (seconds + 60) * 1000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => resolve(response.statusCode === 200 ? Buffer.concat(chunks) : Buffer.alloc(0)));
      },
    );
    request.on('error', () => resolve(Buffer.alloc(0)));
  });
  if (body.length === 0) return '';
  writeFileSync(file, body);
  try {
    return execFileSync('go', ['tool', 'pprof', '-top', '-nodecount=25', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return '';
  }
}

interface Scheduler {
  proc: ManagedProcess;
  port: number;
  /** What the binary reports (E2E_KUBERNETES_VERSION picks the one built). */
  version: string;
}

/**
 * kube-scheduler from a KubeSchedulerConfiguration: the default profile, no leader election, the
 * client rate limit of scheduler_perf, /metrics and /debug/pprof open to anonymous requests on a
 * loopback port (always-allow paths: nothing else can reach it).
 */
async function startScheduler(plane: ControlPlane, name: string): Promise<Scheduler> {
  const { 'kube-scheduler': component } = ensureComponents(['kube-scheduler']);
  const [port] = (await freePorts(1)) as [number];
  const config = path.join(plane.dir, `${name}.yaml`);
  writeFileSync(
    config,
    [
      'apiVersion: kubescheduler.config.k8s.io/v1',
      'kind: KubeSchedulerConfiguration',
      'clientConnection:',
      `  kubeconfig: ${plane.kubeconfig}`,
      `  qps: ${SCHEDULER_QPS}`,
      `  burst: ${SCHEDULER_BURST}`,
      'leaderElection:',
      '  leaderElect: false',
      'enableProfiling: true',
      '',
    ].join('\n'),
  );
  const proc = startProcess(
    name,
    component.binary,
    [
      `--config=${config}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      '--authentication-skip-lookup',
      '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*',
      // -v=2: one line per bind, stamped by the scheduler: what the bench measures.
      '-v=2',
    ],
    plane.logsDir,
  );
  return { proc, port, version: component.version };
}

async function count(client: KubeClient, urlPath: string): Promise<number> {
  const page = await client.request<{ items: unknown[]; metadata: { remainingItemCount?: number } }>(
    'GET',
    `${urlPath}?limit=1`,
  );
  return page.items.length + (page.metadata.remainingItemCount ?? 0);
}

/**
 * Deletes every Pod (no grace: no kubelet) and claim of the namespace and waits until the claims are
 * gone. The scheduler put its finalizer on every allocated claim; the resource claim controller
 * would drop it once the Pod is gone, at kube-controller-manager's client rate (20 qps: minutes for
 * thousands of claims), so the bench drops it itself: the next run starts on free cards either way.
 */
async function clear(client: KubeClient, namespace: string): Promise<number> {
  const started = performance.now();
  const claims = `${RESOURCE}/namespaces/${namespace}/resourceclaims`;
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  // A collection of thousands outlasts the client's 30 s timeout on a loaded machine: the API server
  // goes on deleting, and the next request takes up what is left.
  await waitFor(
    async () => {
      await client.raw('DELETE', `${pods}?gracePeriodSeconds=0`).catch(() => undefined);
      return (await count(client, pods)) === 0;
    },
    10 * 60_000,
    `the Pods of ${namespace} are deleted`,
    1000,
  );
  await waitFor(
    async () => (await client.raw('DELETE', claims).catch(() => undefined)) !== undefined,
    10 * 60_000,
    `the claims of ${namespace} are marked for deletion`,
    1000,
  );
  const left = await client.request<{ items: { metadata: { name: string } }[] }>('GET', claims);
  await pool(
    left.items.map((c) => c.metadata.name),
    async (name) => {
      const response = await client.raw(
        'PATCH',
        `${claims}/${name}`,
        JSON.stringify({ metadata: { finalizers: null } }),
        'application/merge-patch+json',
      );
      if (response.status !== 200 && response.status !== 404)
        throw new Error(`PATCH claim ${name}: ${response.status} ${JSON.stringify(response.body).slice(0, 200)}`);
    },
  );
  await waitFor(
    async () => (await count(client, claims)) === 0,
    10 * 60_000,
    `the claims of ${namespace} are deleted`,
    500,
  );
  return (performance.now() - started) / 1000;
}

async function runWorkload(
  plane: ControlPlane,
  size: number,
  layout: Layout,
  workload: Workload,
  options: Options,
): Promise<DraRun> {
  const { client } = plane;
  const namespace = `bench-${workload}`;
  await post(client, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const { kinds, fill } = runPlan(workload, size, options.window);
  const names = kinds.map((_, i) => String(i).padStart(6, '0'));
  log(`${size} Nodes, ${layout}, ${workload}: creating ${kinds.length} claims and Pods (${fill ? 'fill' : 'window'})`);
  const createStarted = performance.now();
  await pool(
    names.map((n, i) => [n, kinds[i]] as const),
    ([n, kind]) =>
      post(
        client,
        `${RESOURCE}/namespaces/${namespace}/resourceclaims`,
        claimObject(`c-${n}`, namespace, kind ?? 'whole', layout),
      ),
  );
  await pool(names, (n) =>
    post(client, `/api/v1/namespaces/${namespace}/pods`, podObject(`p-${n}`, namespace, `c-${n}`)),
  );
  const createSeconds = (performance.now() - createStarted) / 1000;

  const pid = (name: string): number => plane.processes.find((p) => p.name === name)?.pid ?? -1;
  const others = {
    'kube-apiserver': pid('kube-apiserver'),
    etcd: pid('etcd'),
    'kube-controller-manager': pid('kube-controller-manager'),
  };
  const snapshot = (schedulerPid: number): Record<string, number> => ({
    'kube-scheduler': processUse(schedulerPid).cpuSeconds,
    ...Object.fromEntries(Object.entries(others).map(([n, p]) => [n, processUse(p).cpuSeconds])),
    'bench driver': (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
  });

  const loadStart = os.loadavg();
  const availableStart = availableMB();
  const samples: CpuSample[] = [];
  let scheduler: Scheduler | undefined;
  try {
    const spawned = Date.now();
    scheduler = await startScheduler(plane, `kube-scheduler-${layout}-${workload}`);
    const current = scheduler;
    const year = new Date().getFullYear();
    let binds: Bind[] = [];
    let profiling: Promise<string> | undefined;
    let capped = false;
    while (binds.length < kinds.length) {
      assertRunning(current.proc);
      samples.push({ at: Date.now(), cpu: snapshot(current.proc.pid) });
      binds = parseBinds(readFileSync(current.proc.logFile, 'utf8'), year);
      const firstAt = binds[0]?.at;
      const lastAt = binds.at(-1)?.at ?? spawned;
      if (Date.now() - lastAt > (binds.length === 0 ? options.firstBindSeconds * 1000 : STALL_MS)) break;
      if (firstAt !== undefined && Date.now() - firstAt > options.maxSeconds * 1000) {
        capped = true;
        break;
      }
      if (options.profileSeconds > 0 && profiling === undefined && binds.length > 0)
        profiling = profileTop(
          current.port,
          options.profileSeconds,
          path.join(plane.dir, `profile-${size}-${layout}-${workload}.pb.gz`),
        );
      await sleep(200);
    }
    samples.push({ at: Date.now(), cpu: snapshot(current.proc.pid) });
    const profile = (await profiling) ?? '';
    const metrics = await schedulerMetrics(current.port);
    const use = processUse(current.proc.pid);
    await current.proc.stop();
    binds = parseBinds(readFileSync(current.proc.logFile, 'utf8'), year);
    const stats = bindStats(binds);
    const firstAt = binds[0]?.at ?? spawned;
    const lastAt = binds.at(-1)?.at ?? spawned;
    const [from, to] = [cpuAt(samples, firstAt), cpuAt(samples, lastAt)];
    const cpu = Object.fromEntries(
      Object.keys(to).map((k) => [k, Math.round(((to[k] ?? 0) - (from[k] ?? 0)) * 100) / 100]),
    );
    const run: DraRun = {
      kubeScheduler: current.version,
      nodes: size,
      layout,
      workload,
      fill,
      ...(capped ? { maxSeconds: options.maxSeconds } : {}),
      created: kinds.length,
      bound: stats.bound,
      createSeconds: Math.round(createSeconds * 10) / 10,
      schedulerStartupSeconds: Math.round((firstAt - spawned) / 100) / 10,
      runSeconds: Math.round((Date.now() - spawned) / 100) / 10,
      spanSeconds: Math.round(stats.spanSeconds * 100) / 100,
      podsPerSecond: stats.podsPerSecond,
      secondHalfPodsPerSecond: stats.secondHalfPodsPerSecond,
      sampleMeanPodsPerSecond: stats.sampleMeanPodsPerSecond,
      meanEvaluatedNodes: Math.round(stats.meanEvaluatedNodes),
      schedulerCpuSeconds: cpu['kube-scheduler'] ?? 0,
      schedulerCpuSecondsTotal: Math.round(use.cpuSeconds * 100) / 100,
      schedulerRssMB: Math.round(use.rssMB),
      schedulerPeakRssMB: Math.round(use.peakRssMB),
      cpu,
      schedulerMetrics: metrics,
      loadAverageStart: loadStart,
      loadAverageEnd: os.loadavg(),
      availableMBStart: availableStart,
      availableMBEnd: availableMB(),
      ...(profile ? { profileTop: profile.split('\n').slice(0, 40).join('\n') } : {}),
    };
    log(
      `${current.version}, ${size} Nodes, ${layout}, ${workload}: ${run.bound}/${run.created} bound in ${run.spanSeconds} s = ` +
        `${run.podsPerSecond.toFixed(1)} Pods/s; scheduler ${run.schedulerCpuSeconds} CPU s ` +
        `(${((run.schedulerCpuSeconds / Math.max(1, run.bound)) * 1000).toFixed(1)} ms/Pod), RSS ${run.schedulerRssMB} MB, ` +
        `${run.meanEvaluatedNodes} Nodes evaluated per Pod; load ${loadStart.map((l) => l.toFixed(1)).join(' ')}`,
    );
    const cleared = await clear(client, namespace);
    log(`${size} Nodes, ${layout}, ${workload}: cleared in ${cleared.toFixed(1)} s`);
    return run;
  } finally {
    await scheduler?.proc.stop();
  }
}

async function runLayout(
  size: number,
  layout: Layout,
  workloads: readonly Workload[],
  options: Options,
): Promise<DraRun[]> {
  const plane = await startControlPlane({
    controllerManager: true,
    extraControllers: DRA_CONTROLLERS,
    // A created Node keeps the status it was created with; without this plugin it gets no not-ready taint.
    apiserverArgs: ['--disable-admission-plugins=TaintNodesByCondition'],
  });
  let failed = true;
  try {
    const { client } = plane;
    for (const deviceClass of benchDeviceClasses()) await post(client, `${RESOURCE}/deviceclasses`, deviceClass);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const names = Array.from({ length: size }, (_, i) => nodeName(i));
    const started = performance.now();
    await pool(names, (n) => post(client, '/api/v1/nodes', nodeObject(n, now)));
    const slices = names.flatMap((n) => layoutSlices(layout, n));
    await pool(slices, (s) => post(client, `${RESOURCE}/resourceslices`, s));
    log(
      `${size} Nodes, ${layout}: ${size} Nodes and ${slices.length} slices (${slices.length / size} per Node) ` +
        `created in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    const runs: DraRun[] = [];
    for (const workload of workloads.filter((w) => workloadsOf(layout).includes(w)))
      runs.push(await runWorkload(plane, size, layout, workload, options));
    failed = false;
    return runs;
  } finally {
    await plane.stop({ failed });
  }
}

async function main(): Promise<void> {
  const sizes = (argument('nodes') ?? '500,2000,5000').split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--nodes: a comma-separated list of Node counts, not ${argument('nodes')}`);
  const layouts = list('layouts', LAYOUTS, ['ours', 'baseline']);
  const workloads = list('workloads', WORKLOADS, WORKLOADS);
  const options = {
    window: positive('window', 4000),
    maxSeconds: positive('max-seconds', 240),
    firstBindSeconds: positive('first-bind-seconds', 150),
    profileSeconds: positive('profile-seconds', 0),
  };
  const write = !process.argv.includes('--no-write');
  const started = performance.now();
  const runs: DraRun[] = [];
  // --report: no runs, the section and the plot again from the day's results.
  if (!process.argv.includes('--report'))
    for (const size of sizes)
      for (const layout of layouts) runs.push(...(await runLayout(size, layout, workloads, options)));
  const date = new Date().toISOString().slice(0, 10);
  const resultsDir = path.join(BENCH_DIR, 'results');
  const file = path.join(resultsDir, `dra-${date}.json`);
  const previous = write && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DraResult) : undefined;
  const cpus = os.cpus();
  const result: DraResult = {
    date,
    commit: runs.length === 0 && previous ? previous.commit : commitOf(['src/dra', 'bench']),
    durationSeconds: Math.round((performance.now() - started) / 1000) + (previous?.durationSeconds ?? 0),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      memoryMB: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
    },
    cardsPerNode: CARDS_PER_NODE,
    window: options.window,
    schedulerQps: SCHEDULER_QPS,
    schedulerBurst: SCHEDULER_BURST,
    maxSeconds: options.maxSeconds,
    runs: mergeRuns(previous?.runs ?? [], runs),
  };
  process.stdout.write(`${draMarkdown(result)}\n`);
  if (!write) return;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(path.join(resultsDir, 'dra-throughput.svg'), draSvg(result));
  const resultsFile = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(resultsFile, spliceDraSection(readFileSync(resultsFile, 'utf8'), draMarkdown(result)));
  log(
    `wrote bench/results/dra-${date}.json, bench/results/dra-throughput.svg, the ${DRA_SECTION_START}…${DRA_SECTION_END} section of bench/RESULTS.md`,
  );
}

await main();
