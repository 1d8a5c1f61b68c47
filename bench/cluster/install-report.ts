/**
 * @module The first-install benchmark's report (`npm run bench:cluster -- --install`): a table per
 * run file, and the before/after section of bench/RESULTS.md with the issue-35 targets.
 * `npx tsx bench/cluster/install-report.ts --before B.json --after A.json` writes that section.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { RequestSizes } from '../../harness/e2e/hook-proxy.js';
import type { ProcessUse, Reaction } from './control-plane-report.js';

/** One first install: N Nodes present before the manifests, timed from applying them to convergence. */
export interface InstallRun {
  readonly nodes: number;
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
  /** How long creating the Nodes took, before the install. */
  readonly createSeconds: number;
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
  /** CPU seconds from applying the manifests to convergence (`cpuSecondsConvergence`), after it, peak RSS. */
  readonly processes: Readonly<Record<string, ProcessUse>>;
  readonly reaction: { readonly p50: number; readonly p90: number; readonly max: number } | undefined;
  readonly reactions: readonly Reaction[];
  readonly connectionResets: number;
  readonly metacontroller: string;
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

const START = '<!-- bench:install start -->';
const END = '<!-- bench:install end -->';

/** The before/after section of bench/RESULTS.md. */
export function installSection(before: InstallFile, after: InstallFile, intro: string): string {
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
  const read = (file: string): InstallFile => JSON.parse(readFileSync(file, 'utf8')) as InstallFile;
  const before = read(flag('before'));
  const after = read(flag('after'));
  const intro = readFileSync(flag('intro'), 'utf8').trim();
  const results = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'RESULTS.md');
  writeFileSync(results, spliceInstallSection(readFileSync(results, 'utf8'), installSection(before, after, intro)));
  process.stdout.write(`${installSection(before, after, intro)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
