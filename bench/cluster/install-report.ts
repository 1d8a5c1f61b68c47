/**
 * @module The first-install benchmark's report (`npm run bench:cluster -- --install`): a table per
 * run file, and the before/after section of bench/RESULTS.md with the issue-35 targets.
 * `npx tsx bench/cluster/install-report.ts --before B.json --after A.json --intro I.md [--outro O.md]`
 * writes that section.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { RequestSizes } from '../../harness/e2e/hook-proxy.js';
import { readRunFile } from '../shared/run-file.js';
import type { ClusterRun } from './control-plane-report.js';
import type { InstallPacing } from './replicas.js';

/**
 * One first install: N Nodes present before the manifests, timed from applying them to convergence.
 * What it shares with a `bench:cluster` run means the same (its `createSeconds`: the Nodes, created
 * before the install; its `processes`' convergence CPU: from applying the manifests).
 */
export interface InstallRun extends Pick<
  ClusterRun,
  | 'nodes'
  | 'loadAverageStart'
  | 'loadAverageEnd'
  | 'createSeconds'
  | 'processes'
  | 'reactions'
  | 'connectionResets'
  | 'metacontroller'
> {
  /** Manifests applied → every owned object and every Node's labels equal `render`'s. */
  readonly installSeconds: number;
  /** Metacontroller's `--client-go-qps`. */
  readonly qps: number;
  /** Writes the API server answered during the install, per resource (its `apiserver_request_total`). */
  readonly writes: Readonly<Record<string, number>>;
  /** Hook answers per route during the install (our server's counter). */
  readonly calls: Readonly<Record<string, number>>;
  /** Hook requests per route during the install, as the proxy saw them. */
  readonly requests: Readonly<Record<string, RequestSizes>>;
  /** JSON of every NodeProfile as the API server serves them (what Metacontroller sends of them). */
  readonly profileBytes: number;
  /** Absent without changes. */
  readonly reaction: ClusterRun['reaction'] | undefined;
  /** What the hook server replicas held of the paced syncs (absent before `--replicas`: one server). */
  readonly pacing?: InstallPacing;
  /** Hook answers per route so far, every 2 s from applying the manifests (where the install's time goes). */
  readonly timeline?: readonly { readonly seconds: number; readonly calls: Readonly<Record<string, number>> }[];
}

export interface InstallFile {
  readonly date: string;
  readonly commit: string;
  readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly node: string };
  readonly changes: number;
  readonly metacontrollerWorkers: number;
  readonly runs: readonly InstallRun[];
}

/** The targets of issue 35. */
export const INSTALL_TARGETS = {
  /** Install time over the floor Metacontroller's client rate sets at two writes per joining Node. */
  floorRatio: 1.5,
  writesPerNode: 2,
  /** All hook request bytes of the install over the bytes of every NodeProfile. */
  bytesRatio: 3,
  changeNodes: 5000,
  largestChangeRequestBytes: 1_000_000,
  reactionP90Seconds: 1.07,
} as const;

const AGGREGATING = ['node-shard/', 'scheduling-chain/'];

/** Seconds Metacontroller needs at its client rate to write two objects per Node: the install's floor. */
export function floorSeconds(run: InstallRun): number {
  return (INSTALL_TARGETS.writesPerNode * run.nodes) / run.qps;
}

const sum = (values: Iterable<number>): number => [...values].reduce((a, b) => a + b, 0);

/** Hook request bytes of the install: all routes, and only those that summarise many Nodes (shards, chain). */
export function installBytes(run: InstallRun): { all: number; aggregating: number } {
  const entries = Object.entries(run.requests);
  return {
    all: sum(entries.map(([, r]) => r.totalBytes)),
    aggregating: sum(
      entries.filter(([route]) => AGGREGATING.some((p) => route.startsWith(p))).map(([, r]) => r.totalBytes),
    ),
  };
}

/** Writes per Node to Nodes and NodeProfiles (labels, status, profiles), the writes that grow with N. */
export function writesPerNode(run: InstallRun): number {
  const perNode = sum(
    Object.entries(run.writes)
      .filter(([resource]) => ['nodes', 'nodeprofiles'].includes(resource.split('/')[0] as string))
      .map(([, n]) => n),
  );
  return perNode / run.nodes;
}

/**
 * When the first hook call came after the manifests were applied (the 2 s sample that first counted
 * one): Metacontroller starts a controller only once its discovery, every `--discovery-interval`
 * (20 s in its manifests), has seen the new CRDs. Undefined without a timeline.
 */
export function firstCallSeconds(run: InstallRun): number | undefined {
  return run.timeline?.find((sample) => Object.values(sample.calls).some((n) => n > 0))?.seconds;
}

/** The largest hook request of any card change after the install. */
export function largestChangeRequest(run: InstallRun): number {
  return Math.max(0, ...run.reactions.flatMap((r) => Object.values(r.largestRequestBytes ?? {})));
}

const mb = (bytes: number): string => (bytes >= 10e6 ? (bytes / 1e6).toFixed(0) : (bytes / 1e6).toFixed(1));
const s1 = (seconds: number): string => `${seconds.toFixed(1)} s`;
const thousands = (n: number): string => n.toLocaleString('en-US');

function callsOf(run: InstallRun, route: string): number {
  return run.calls[route] ?? 0;
}

function row(label: string | undefined, run: InstallRun): string {
  const floor = floorSeconds(run);
  const bytes = installBytes(run);
  const cells = [
    ...(label === undefined ? [] : [label]),
    thousands(run.nodes),
    run.loadAverageStart.map((n) => n.toFixed(1)).join(' / '),
    s1(run.installSeconds),
    firstCallSeconds(run) === undefined ? '—' : `≤ ${s1(firstCallSeconds(run) as number)}`,
    s1(floor),
    (run.installSeconds / floor).toFixed(2),
    writesPerNode(run).toFixed(2),
    ['node-profile/sync', 'node-shard/sync', 'scheduling-chain/sync']
      .map((route) => thousands(callsOf(run, route)))
      .join(' / '),
    `${mb(bytes.all)} MB`,
    (bytes.all / run.profileBytes).toFixed(1),
    (bytes.aggregating / run.profileBytes).toFixed(2),
    run.reaction ? `${run.reaction.p50.toFixed(2)} / ${run.reaction.p90.toFixed(2)} s` : '—',
    run.reactions.length > 0 ? `${(largestChangeRequest(run) / 1e6).toFixed(3)} MB` : '—',
  ];
  return `| ${cells.join(' | ')} |`;
}

const HEADER = [
  'Nodes',
  'load avg at start',
  'install',
  'first hook call',
  'floor (2 writes per Node)',
  '× floor',
  'writes per Node',
  'sync calls: node-profile / node-shard / chain',
  'hook request bytes',
  '÷ NodeProfile bytes',
  'shard + chain bytes ÷ NodeProfile bytes',
  'reaction p50 / p90',
  'largest request of any change',
];

function table(runs: readonly { label?: string; run: InstallRun }[]): string {
  const labelled = runs.some((r) => r.label !== undefined);
  const header = labelled ? ['run', ...HEADER] : HEADER;
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((_, i) => (i < (labelled ? 1 : 0) ? '---' : '---:')).join('|')}|`,
    ...runs.map(({ label, run }) => row(labelled ? (label ?? '') : undefined, run)),
  ].join('\n');
}

/** One run file's table (what `--install` prints). */
export function installTable(runs: readonly InstallRun[]): string {
  return table(runs.map((run) => ({ run })));
}

function processTable(before: InstallFile, after: InstallFile): string {
  const lines = ['| run | Nodes | process | CPU s, install | peak RSS MB |', '|---|---:|---|---:|---:|'];
  for (const [label, file] of [
    ['before', before],
    ['after', after],
  ] as const)
    for (const run of file.runs)
      for (const [name, use] of Object.entries(run.processes))
        if (name !== 'bench driver')
          lines.push(
            `| ${label} | ${thousands(run.nodes)} | ${name} | ${use.cpuSecondsConvergence.toFixed(1)} | ${use.peakRssMB} |`,
          );
  return lines.join('\n');
}

interface Target {
  readonly nodes: number;
  readonly what: string;
  readonly limit: string;
  readonly before: string;
  readonly after: string;
  readonly met: boolean;
}

/** Each target at each size of the after run, beside the before run of the same size. */
export function installTargets(before: InstallFile, after: InstallFile): Target[] {
  const targets: Target[] = [];
  for (const run of after.runs) {
    const was = before.runs.find((r) => r.nodes === run.nodes);
    const ratio = (r: InstallRun | undefined): string =>
      r ? `${(r.installSeconds / floorSeconds(r)).toFixed(2)}×` : '—';
    const bytes = (r: InstallRun | undefined): string =>
      r
        ? `${(installBytes(r).all / r.profileBytes).toFixed(1)}× (shard + chain ${(installBytes(r).aggregating / r.profileBytes).toFixed(2)}×)`
        : '—';
    targets.push({
      nodes: run.nodes,
      what: `install time ÷ floor (${s1(floorSeconds(run))})`,
      limit: `≤ ${INSTALL_TARGETS.floorRatio}×`,
      before: ratio(was),
      after: ratio(run),
      met: run.installSeconds / floorSeconds(run) <= INSTALL_TARGETS.floorRatio,
    });
    targets.push({
      nodes: run.nodes,
      what: 'hook request bytes ÷ NodeProfile bytes',
      limit: `≤ ${INSTALL_TARGETS.bytesRatio}×`,
      before: bytes(was),
      after: bytes(run),
      met: installBytes(run).all / run.profileBytes <= INSTALL_TARGETS.bytesRatio,
    });
    if (run.nodes === INSTALL_TARGETS.changeNodes && run.reaction) {
      targets.push({
        nodes: run.nodes,
        what: 'largest request of any change',
        limit: '≤ 1 MB',
        before: was && was.reactions.length > 0 ? `${(largestChangeRequest(was) / 1e6).toFixed(3)} MB` : '—',
        after: `${(largestChangeRequest(run) / 1e6).toFixed(3)} MB`,
        met: largestChangeRequest(run) <= INSTALL_TARGETS.largestChangeRequestBytes,
      });
      targets.push({
        nodes: run.nodes,
        what: 'reaction p90',
        limit: `≤ ${INSTALL_TARGETS.reactionP90Seconds} s`,
        before: was?.reaction ? `${was.reaction.p90.toFixed(2)} s` : '—',
        after: `${run.reaction.p90.toFixed(2)} s`,
        met: run.reaction.p90 <= INSTALL_TARGETS.reactionP90Seconds,
      });
    }
  }
  return targets;
}

/** Least squares of y = a + b·x (+ c·x² with `quadratic`): the coefficients, lowest power first. */
export function fit(xs: readonly number[], ys: readonly number[], quadratic = false): number[] {
  const k = quadratic ? 3 : 2;
  // Normal equations, solved by Gaussian elimination (k ≤ 3).
  const m = Array.from({ length: k }, (_, i) =>
    Array.from({ length: k + 1 }, (_, j) =>
      j < k ? sum(xs.map((x) => x ** (i + j))) : sum(xs.map((x, n) => (ys[n] ?? 0) * x ** i)),
    ),
  );
  for (let col = 0; col < k; col++) {
    const pivot = m[col] as number[];
    for (let row = col + 1; row < k; row++) {
      const r = m[row] as number[];
      const f = (r[col] ?? 0) / (pivot[col] ?? 1);
      for (let j = col; j <= k; j++) r[j] = (r[j] ?? 0) - f * (pivot[j] ?? 0);
    }
  }
  const out = new Array<number>(k).fill(0);
  for (let row = k - 1; row >= 0; row--) {
    const r = m[row] as number[];
    let v = r[k] ?? 0;
    for (let j = row + 1; j < k; j++) v -= (r[j] ?? 0) * (out[j] ?? 0);
    out[row] = v / (r[row] ?? 1);
  }
  return out;
}

const evaluate = (coefficients: readonly number[], x: number): number =>
  coefficients.reduce((total, c, power) => total + c * x ** power, 0);

export interface InstallModelRow {
  readonly nodes: number;
  readonly run: 'before' | 'after';
  readonly installSeconds: number;
  readonly requestBytes: number;
  /** The shards' and the chain's request bytes over the profiles' (after: simulated holds). */
  readonly aggregatingRatio: number;
  readonly metacontrollerRssMB: number;
  readonly apiServerRssMB: number;
}

/** The sizes the model is asked about: large clusters in use today and the largest offered. */
export const MODEL_SIZES = [20_000, 65_000, 100_000] as const;

/**
 * A shard's request bytes over an arrival of `arrivalSeconds`, in units of its final profiles, under
 * join pacing (src/server/join-pacing.ts): a sync at time t sends the t / arrival of its profiles
 * that have come, and is held min(max, max(1, t / 2)) s; one last sync sends them all. Linear in N
 * while the holds are under the cap (2 × the cap of arrival), growing with the arrival past it.
 */
export function pacedBytesRatio(arrivalSeconds: number, maxHoldSeconds = 60): number {
  let t = 0;
  let sent = 0;
  for (;;) {
    t += Math.min(maxHoldSeconds, Math.max(1, t / 2));
    if (t >= arrivalSeconds) break;
    sent += t / arrivalSeconds;
  }
  return sent + 1;
}

/**
 * Install time, hook request bytes and peak RSS at `MODEL_SIZES`, fitted on the runs. Before, time
 * and bytes as a + b·N + c·N² (every joining Node re-syncs a shard of N / nodeShards profiles).
 * After, time as a + b·N; bytes as node-profile's (a + b·N: whole Nodes) plus the profiles' (a + b·N)
 * times `pacedBytesRatio` of an arrival at the floor's pace (2 writes per Node at the client rate).
 * RSS as a + b·N in both: Metacontroller and kube-apiserver cache every Node whole.
 */
export function installModel(before: InstallFile, after: InstallFile): InstallModelRow[] {
  const rows: InstallModelRow[] = [];
  for (const [label, file] of [
    ['before', before],
    ['after', after],
  ] as const) {
    const runs = file.runs;
    const xs = runs.map((r) => r.nodes);
    const quadratic = label === 'before' && xs.length >= 3;
    const time = fit(
      xs,
      runs.map((r) => r.installSeconds),
      quadratic,
    );
    const bytes = fit(
      xs,
      runs.map((r) => installBytes(r).all),
      quadratic,
    );
    const nodeProfile = fit(
      xs,
      runs.map((r) => installBytes(r).all - installBytes(r).aggregating),
    );
    const profiles = fit(
      xs,
      runs.map((r) => r.profileBytes),
    );
    // Before, a shard's request per joining Node grows with N: the ratio, linearly.
    const ratio = fit(
      xs,
      runs.map((r) => installBytes(r).aggregating / r.profileBytes),
    );
    const rss = (name: string): number[] =>
      fit(
        xs,
        runs.map((r) => r.processes[name]?.peakRssMB ?? 0),
      );
    const [mc, api] = [rss('metacontroller'), rss('kube-apiserver')];
    const qps = runs[0]?.qps ?? 100;
    for (const nodes of MODEL_SIZES) {
      const paced = pacedBytesRatio((INSTALL_TARGETS.writesPerNode * nodes) / qps);
      rows.push({
        nodes,
        run: label,
        installSeconds: evaluate(time, nodes),
        requestBytes:
          label === 'before'
            ? evaluate(bytes, nodes)
            : evaluate(nodeProfile, nodes) + paced * evaluate(profiles, nodes),
        aggregatingRatio: label === 'before' ? evaluate(ratio, nodes) : paced,
        metacontrollerRssMB: evaluate(mc, nodes),
        apiServerRssMB: evaluate(api, nodes),
      });
    }
  }
  return rows;
}

function modelTable(before: InstallFile, after: InstallFile): string {
  const minutes = (seconds: number): string => `${(seconds / 60).toFixed(1)} min`;
  return [
    '| Nodes | run | install | hook request bytes | shard + chain bytes ÷ NodeProfile bytes | Metacontroller peak RSS | kube-apiserver peak RSS |',
    '|---:|---|---:|---:|---:|---:|---:|',
    ...installModel(before, after)
      .sort((a, b) => a.nodes - b.nodes)
      .map(
        (r) =>
          `| ${thousands(r.nodes)} | ${r.run} | ${minutes(r.installSeconds)} | ${(r.requestBytes / 1e9).toFixed(1)} GB | ${r.aggregatingRatio.toFixed(1)} | ${(r.metacontrollerRssMB / 1024).toFixed(1)} GiB | ${(r.apiServerRssMB / 1024).toFixed(1)} GiB |`,
      ),
  ].join('\n');
}

const START = '<!-- bench:install start -->';
const END = '<!-- bench:install end -->';

/** The before/after section of bench/RESULTS.md. */
export function installSection(before: InstallFile, after: InstallFile, intro: string, outro = ''): string {
  const targets = installTargets(before, after);
  return [
    START,
    '## First install on a cluster that has its Nodes (issue 35)',
    '',
    intro,
    '',
    `Before = \`${before.commit}\`, after = \`${after.commit}\`; ${after.machine.cpus} × ${after.machine.cpuModel}, Node ${after.machine.node}; Metacontroller ${after.runs[0]?.metacontroller ?? '?'} with \`--workers=${after.metacontrollerWorkers}\` and \`--client-go-qps=${after.runs[0]?.qps ?? '?'}\`; ${after.changes} card changes after each install.`,
    '',
    '| Nodes | target | limit | before | after | met |',
    '|---:|---|---|---:|---:|---|',
    ...targets.map(
      (t) =>
        `| ${thousands(t.nodes)} | ${t.what} | ${t.limit} | ${t.before} | ${t.after} | ${t.met ? 'yes' : '**no**'} |`,
    ),
    '',
    table(
      [
        ...before.runs.map((run) => ({ label: 'before', run })),
        ...after.runs.map((run) => ({ label: 'after', run })),
      ].sort((a, b) => a.run.nodes - b.run.nodes),
    ),
    '',
    '**CPU seconds (from applying the manifests to convergence) and peak RSS per process**:',
    '',
    processTable(before, after),
    '',
    '**The model** (fitted on the runs above; see `installModel`):',
    '',
    modelTable(before, after),
    ...(outro ? ['', outro] : []),
    END,
  ].join('\n');
}

/** Replaces the install section of RESULTS.md, or appends it. */
export function spliceInstallSection(results: string, section: string): string {
  const start = results.indexOf(START);
  const end = results.indexOf(END);
  if (start === -1 || end === -1) return `${results.trimEnd()}\n\n${section}\n`;
  return `${results.slice(0, start)}${section}${results.slice(end + END.length)}`;
}

async function main(): Promise<void> {
  const flag = (name: string): string => {
    const i = process.argv.indexOf(`--${name}`);
    const value = i === -1 ? undefined : process.argv[i + 1];
    if (value === undefined) throw new Error(`--${name} FILE is required`);
    return value;
  };
  const read = (file: string): InstallFile => readRunFile(file) as InstallFile;
  const before = read(flag('before'));
  const after = read(flag('after'));
  const intro = readFileSync(flag('intro'), 'utf8').trim();
  const outroFile = process.argv.includes('--outro') ? flag('outro') : undefined;
  const outro = outroFile ? readFileSync(outroFile, 'utf8').trim() : '';
  const results = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'RESULTS.md');
  writeFileSync(
    results,
    spliceInstallSection(readFileSync(results, 'utf8'), installSection(before, after, intro, outro)),
  );
  process.stdout.write(`${installSection(before, after, intro, outro)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
