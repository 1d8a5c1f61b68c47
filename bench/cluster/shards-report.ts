/**
 * @module `npx tsx bench/cluster/shards-report.ts --before A.json --after B.json`: the node-shards section of
 * bench/RESULTS.md (issue 27) and its plot, from two `npm run bench:cluster -- --out FILE` runs of the
 * same sizes (before: the chain relating every NodeProfile; after: NodeShards), plus the 100,000-Node
 * model fitted on the measured per-byte and per-call costs of both runs.
 * Writes `bench/results/shards-scale.svg` and the `<!-- bench:shards -->` section of RESULTS.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { BENCH_DIR } from '../shared/child.js';
import { argument } from '../shared/process.js';
import { readRunFile } from '../shared/run-file.js';
import type { ClusterRun } from './control-plane-report.js';

export interface RunFile {
  readonly commit: string;
  readonly changes: number;
  readonly runs: readonly ClusterRun[];
}

const SERVER_BODY_LIMIT = 256 * 1024 * 1024;
const MODEL_NODES = 100_000;
const START = '<!-- bench:shards start -->';
const END = '<!-- bench:shards end -->';

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length === 0
    ? 0
    : sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(bytes < 1e6 ? 3 : 1)} MB`;
const s2 = (v: number): string => v.toFixed(2);
const thousands = (n: number): string => n.toLocaleString('en-US');
const load = (l: readonly number[]): string => l.map((v) => v.toFixed(1)).join(' / ');

/** Least squares y = a + b·x. */
function fit(points: readonly (readonly [number, number])[]): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const sxx = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  const b = sxx === 0 ? 0 : points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / sxx;
  return { a: my - b * mx, b };
}

/** The largest request of any hook in a change (median over the changes), and of which route. */
function largestPerChange(run: ClusterRun): { bytes: number; route: string } {
  const perChange = run.reactions.map((r): [string, number] => {
    const entries = Object.entries(r.largestRequestBytes ?? {}).sort((x, y) => y[1] - x[1]);
    return entries[0] ?? ['none', 0];
  });
  const bytes = median(perChange.map((e) => e[1]));
  const routes = perChange.map((e) => e[0]);
  const count = (route: string): number => routes.filter((r) => r === route).length;
  const route = [...routes].sort((x, y) => count(y) - count(x))[0];
  return { bytes, route: route ?? 'none' };
}

const calls = (run: ClusterRun, route: string): number => median(run.reactions.map((r) => r.calls[route] ?? 0));
const cpu = (run: ClusterRun, process: string): number => median(run.reactions.map((r) => r.cpu[process] ?? 0));

/** Σ over routes of calls × the largest request of that route in one change: the bytes a change sends to hooks (upper bound). */
function bytesOfChange(reaction: ClusterRun['reactions'][number]): number {
  return Object.entries(reaction.calls).reduce(
    (sum, [route, n]) => sum + n * (reaction.largestRequestBytes?.[route] ?? 0),
    0,
  );
}
const bytesPerChange = (run: ClusterRun): number => median(run.reactions.map(bytesOfChange));
/** The largest request of any hook in any change of the run (the target: none over 1 MB). */
const largestOfAnyChange = (run: ClusterRun): number =>
  Math.max(0, ...run.reactions.flatMap((r) => Object.values(r.largestRequestBytes ?? {})));

/** Σ over routes of bootstrap calls × that route's largest bootstrap request: the bytes the bootstrap sent to hooks (upper bound). */
const bootstrapBytes = (run: ClusterRun): number =>
  Object.entries(run.convergenceCalls).reduce(
    (sum, [route, n]) => sum + n * (run.largestRequestBytesConvergence?.[route] ?? 0),
    0,
  );

/** Rows of both runs by size, before then after. */
function pairs(before: RunFile, after: RunFile): [string, ClusterRun][] {
  const sizes = [...new Set([...before.runs, ...after.runs].map((r) => r.nodes))].sort((x, y) => x - y);
  return sizes.flatMap((n) =>
    (
      [
        ['before', before.runs.find((r) => r.nodes === n)],
        ['after', after.runs.find((r) => r.nodes === n)],
      ] as const
    ).flatMap(([label, r]): [string, ClusterRun][] => (r ? [[label, r]] : [])),
  );
}

function table(rows: readonly [string, ClusterRun][]): string[] {
  return rows.map(([label, r]) => {
    const largest = largestPerChange(r);
    const c = (route: string): string => String(calls(r, route));
    return (
      `| ${label} | ${thousands(r.nodes)} | ${load(r.loadAverageStart)} | ${r.convergedAfterFirstSeconds.toFixed(1)} s | ${r.convergedAfterLastSeconds.toFixed(1)} s` +
      ` | ${s2(r.reaction.p50)} / ${s2(r.reaction.p90)} / ${s2(r.reaction.max)} s` +
      ` | ${c('node-profile/sync')} / ${c('node-shard/sync')} / ${c('scheduling-chain/sync')} / ${c('instance-type/sync')}` +
      ` | ${mb(largest.bytes)} (${largest.route}) | ${mb(largestOfAnyChange(r))} | ${mb(bytesPerChange(r))}` +
      ` | ${mb(Math.max(...Object.values(r.largestRequestBytesConvergence ?? { none: 0 })))}` +
      ` | ${r.convergenceCalls['node-shard/sync'] ?? 0} / ${r.convergenceCalls['scheduling-chain/sync'] ?? 0} | ${mb(bootstrapBytes(r))} |`
    );
  });
}

function processTable(rows: readonly [string, ClusterRun][]): string[] {
  return rows.flatMap(([label, r]) =>
    ['our server', 'metacontroller', 'kube-apiserver', 'etcd'].map((p) => {
      const use = r.processes[p];
      return `| ${label} | ${thousands(r.nodes)} | ${p} | ${use?.cpuSecondsConvergence.toFixed(1) ?? '–'} | ${s2(cpu(r, p))} | ${use?.peakRssMB ?? '–'} |`;
    }),
  );
}

/** What the bootstrap costs with shards against before, at the largest size both runs have. */
function bootstrapNote(before: RunFile, after: RunFile): string[] {
  const n = Math.max(0, ...after.runs.filter((r) => before.runs.some((b) => b.nodes === r.nodes)).map((r) => r.nodes));
  const b = before.runs.find((r) => r.nodes === n);
  const a = after.runs.find((r) => r.nodes === n);
  if (!a || !b) return [];
  const mc = (r: ClusterRun): string => (r.processes['metacontroller']?.cpuSecondsConvergence ?? 0).toFixed(0);
  return [
    `**The bootstrap costs more with shards** (${thousands(n)} Nodes): converged ${a.convergedAfterLastSeconds.toFixed(0)} s after the last Node against ${b.convergedAfterLastSeconds.toFixed(0)} s,` +
      ` Metacontroller ${mc(a)} CPU s against ${mc(b)}. Every NodeProfile that joins re-syncs its shard (N / nodeShards profiles), and with free workers` +
      ` Metacontroller runs nearly one shard sync per joining Node (${thousands(a.convergenceCalls['node-shard/sync'] ?? 0)} for ${thousands(n)} Nodes, ≈ ${mb(bootstrapBytes(a))} of requests),` +
      ` while before the one chain parent, slow to sync, was coalesced into ${b.convergenceCalls['scheduling-chain/sync'] ?? 0} syncs (≈ ${mb(bootstrapBytes(b))}).` +
      ' Bootstrap bytes grow as N² / nodeShards with shards; a change costs less at every size measured. Not built: coalescing the shard syncs' +
      ' while Nodes arrive (a summariser outside Metacontroller, or a shard that writes its summary at most every few seconds).',
    '',
  ];
}

/** The issue's targets for the after run, with the before run's value beside. */
function targets(before: RunFile, after: RunFile): string[] {
  const at = (file: RunFile, n: number): ClusterRun | undefined => file.runs.find((r) => r.nodes === n);
  const checks: {
    n: number;
    what: string;
    limit: string;
    value: (r: ClusterRun) => number;
    show: (v: number) => string;
    ok: (v: number) => boolean;
  }[] = [
    {
      n: 5000,
      what: 'convergence from the first Node',
      limit: '< 60 s',
      value: (r) => r.convergedAfterFirstSeconds,
      show: (v) => `${v.toFixed(1)} s`,
      ok: (v) => v < 60,
    },
    {
      n: 5000,
      what: 'reaction p90',
      limit: '< 0.5 s',
      value: (r) => r.reaction.p90,
      show: (v) => `${s2(v)} s`,
      ok: (v) => v < 0.5,
    },
    {
      n: 5000,
      what: 'largest hook request in any change',
      limit: '≤ 1 MB',
      value: largestOfAnyChange,
      show: mb,
      ok: (v) => v <= 1e6,
    },
    {
      n: 10_000,
      what: 'reaction p90',
      limit: '< 1 s',
      value: (r) => r.reaction.p90,
      show: (v) => `${s2(v)} s`,
      ok: (v) => v < 1,
    },
  ];
  return checks.map((c) => {
    const b = at(before, c.n);
    const a = at(after, c.n);
    const value = a ? c.value(a) : undefined;
    return (
      `| ${thousands(c.n)} | ${c.what} | ${c.limit} | ${b ? c.show(c.value(b)) : 'not run'} | ${value === undefined ? 'not run' : c.show(value)}` +
      ` | ${value === undefined ? '—' : c.ok(value) ? 'yes' : '**no**'} |`
    );
  });
}

export interface Model {
  readonly bytesPerProfile: number;
  readonly mcPerByte: { a: number; b: number };
  readonly serverPerByte: { a: number; b: number };
  readonly mcRssPerNode: { a: number; b: number };
  readonly apiRssPerNode: { a: number; b: number };
  readonly chainBytesAfter: number;
  readonly shardsAfter: number;
  readonly chainCallsAfter: number;
  readonly shardCallsAfter: number;
  readonly chainCallsBefore: number;
}

/** Per change at N Nodes: the largest request, request bytes, and CPU seconds of Metacontroller and our server. */
function predict(model: Model, n: number, shards: number | undefined) {
  const before = shards === undefined;
  const chainBytes = before ? model.bytesPerProfile * n : model.chainBytesAfter * (shards / model.shardsAfter);
  const shardBytes = before ? 0 : (model.bytesPerProfile * n) / shards;
  const bytes = before
    ? model.chainCallsBefore * chainBytes
    : model.chainCallsAfter * chainBytes + model.shardCallsAfter * shardBytes;
  return {
    largest: Math.max(chainBytes, shardBytes),
    bytes,
    metacontroller: model.mcPerByte.a + model.mcPerByte.b * bytes,
    server: model.serverPerByte.a + model.serverPerByte.b * bytes,
    // Every Node's arrival is a change whose requests grow with the Nodes so far: Σ over n ≈ N × (cost at N/2).
    bootstrapBytes: before
      ? (model.chainCallsBefore * model.bytesPerProfile * n * n) / 2
      : n * (model.chainCallsAfter * chainBytes + (model.shardCallsAfter * model.bytesPerProfile * n) / (2 * shards)),
  };
}

export function svg(model: Model, before: RunFile, after: RunFile): string {
  const width = 760;
  const height = 440;
  const left = 80;
  const top = 50;
  const w = 620;
  const h = 320;
  const xs = [300, 1_000_000];
  const ys = [1e4, 1e10];
  const px = (x: number): number =>
    left + ((Math.log10(x) - Math.log10(xs[0] as number)) / Math.log10((xs[1] as number) / (xs[0] as number))) * w;
  const py = (y: number): number =>
    top + h - ((Math.log10(y) - Math.log10(ys[0] as number)) / Math.log10((ys[1] as number) / (ys[0] as number))) * h;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="20" y="24" font-size="14">Largest hook request per change against Nodes (log–log): measured points, model lines</text>`,
  ];
  for (const y of [1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10])
    out.push(
      `<line x1="${left}" x2="${left + w}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${y >= 1e6 ? `${y / 1e6} MB` : `${y / 1e3} KB`}</text>`,
    );
  for (const x of [500, 2000, 5000, 10_000, 100_000, 1_000_000])
    out.push(
      `<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${top}" y2="${top + h}" stroke="#eee"/>`,
      `<text x="${px(x).toFixed(1)}" y="${top + h + 16}" text-anchor="middle">${thousands(x)}</text>`,
    );
  out.push(`<text x="${left + w / 2}" y="${top + h + 34}" text-anchor="middle">Nodes</text>`);
  const line = (color: string, dash: string, f: (n: number) => number): string => {
    const points = [300, 500, 1000, 2000, 5000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
      .map((n) => [n, f(n)] as const)
      .filter(([, y]) => y >= (ys[0] as number) && y <= (ys[1] as number))
      .map(([n, y]) => `${px(n).toFixed(1)},${py(y).toFixed(1)}`);
    return `<polyline fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${points.join(' ')}"/>`;
  };
  const dot = (color: string, n: number, y: number): string =>
    `<circle cx="${px(n).toFixed(1)}" cy="${py(y).toFixed(1)}" r="4" fill="${color}"/>`;
  out.push(
    `<line x1="${left}" x2="${left + w}" y1="${py(SERVER_BODY_LIMIT).toFixed(1)}" y2="${py(SERVER_BODY_LIMIT).toFixed(1)}" stroke="#000" stroke-dasharray="2 2"/>`,
    `<text x="${left + 4}" y="${(py(SERVER_BODY_LIMIT) - 4).toFixed(1)}">server body limit 256 MiB</text>`,
    line('#777777', '6 4', (n) => predict(model, n, undefined).largest),
    line('#1f77b4', '6 4', (n) => predict(model, n, 32).largest),
    line(
      '#2ca02c',
      '6 4',
      (n) =>
        predict(
          model,
          n,
          Math.max(1, Math.round(Math.sqrt((n * model.bytesPerProfile) / (model.chainBytesAfter / 32)))),
        ).largest,
    ),
    ...before.runs.map((r) => dot('#777777', r.nodes, largestPerChange(r).bytes)),
    ...after.runs.map((r) => dot('#1f77b4', r.nodes, largestPerChange(r).bytes)),
  );
  const legend = [
    ['#777777', 'before: chain request = every NodeProfile (dots: measured)'],
    ['#1f77b4', 'shards, nodeShards 32 (dots: measured)'],
    ['#2ca02c', 'shards, nodeShards balanced ≈ √(N × profile / summary) (model)'],
  ];
  legend.forEach(([color, text], i) =>
    out.push(
      `<line x1="${left + 10}" x2="${left + 40}" y1="${top + 14 + i * 16}" y2="${top + 14 + i * 16}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${left + 46}" y="${top + 18 + i * 16}">${text}</text>`,
    ),
  );
  out.push('</svg>', '');
  return out.join('\n');
}

/** The 100,000-Node model, fitted on both runs. */
export function shardsModel(before: RunFile, after: RunFile): Model {
  const last = (file: RunFile): ClusterRun => [...file.runs].sort((x, y) => y.nodes - x.nodes)[0] as ClusterRun;
  const [beforeRun, afterRun] = [last(before), last(after)];
  const both = [...before.runs, ...after.runs];
  const model: Model = {
    // What Metacontroller sent the chain per NodeProfile (the proxy's count, not the API server's JSON).
    bytesPerProfile: median(
      before.runs.map(
        (r) => median(r.reactions.map((c) => c.largestRequestBytes?.['scheduling-chain/sync'] ?? 0)) / r.nodes,
      ),
    ),
    // CPU per change against the hook request bytes of the change, before and after together: what a byte
    // Metacontroller marshals and our server parses costs, and what a change costs besides.
    mcPerByte: fit(both.map((r) => [bytesPerChange(r), cpu(r, 'metacontroller')] as const)),
    serverPerByte: fit(both.map((r) => [bytesPerChange(r), cpu(r, 'our server')] as const)),
    mcRssPerNode: fit(both.map((r) => [r.nodes, r.processes['metacontroller']?.peakRssMB ?? 0] as const)),
    apiRssPerNode: fit(both.map((r) => [r.nodes, r.processes['kube-apiserver']?.peakRssMB ?? 0] as const)),
    chainBytesAfter: median(afterRun.reactions.map((r) => r.largestRequestBytes?.['scheduling-chain/sync'] ?? 0)),
    shardsAfter: 32,
    chainCallsAfter: calls(afterRun, 'scheduling-chain/sync'),
    shardCallsAfter: calls(afterRun, 'node-shard/sync'),
    chainCallsBefore: calls(beforeRun, 'scheduling-chain/sync'),
  };
  return model;
}

/** The model's section: what it was fitted on, its predictions at 100,000 Nodes, and what follows. */
function modelLines(model: Model, points: number): string[] {
  const at = (shards: number | undefined) => predict(model, MODEL_NODES, shards);
  const row = (label: string, shards: number | undefined): string => {
    const p = at(shards);
    return `| ${label} | ${mb(p.largest)}${p.largest > SERVER_BODY_LIMIT ? ' (**over the 256 MiB body limit**)' : ''} | ${mb(p.bytes)} | ${s2(p.metacontroller)} s | ${s2(p.server)} s | ${(p.bootstrapBytes / 1e9).toFixed(1)} GB |`;
  };
  const balanced = Math.round(
    Math.sqrt((MODEL_NODES * model.bytesPerProfile) / (model.chainBytesAfter / model.shardsAfter)),
  );
  const mcRss = model.mcRssPerNode.a + model.mcRssPerNode.b * MODEL_NODES;
  const apiRss = model.apiRssPerNode.a + model.apiRssPerNode.b * MODEL_NODES;
  return [
    '### A model for 100,000 Nodes',
    '',
    `Fitted on the runs above (before and after, ${points} points): the call counts and chain request of the largest after run,` +
      ` a NodeProfile costs **${(model.bytesPerProfile / 1024).toFixed(1)} KB** in a request (as Metacontroller serialises it: with its last-applied annotation and managed fields);` +
      ` Metacontroller spends **${(model.mcPerByte.b * 1e6).toFixed(3)} CPU s per MB** of hook requests (+ ${s2(model.mcPerByte.a)} s per change; least squares of CPU per change against request bytes per change) and our server **${(model.serverPerByte.b * 1e6).toFixed(3)} CPU s per MB**` +
      ` (+ ${s2(model.serverPerByte.a)} s); before, a change costs ${model.chainCallsBefore} chain syncs; after shards ${model.shardCallsAfter} node-shard and ${model.chainCallsAfter} chain syncs (medians), the chain request with 32 shards is ${mb(model.chainBytesAfter)}` +
      ' (its summaries grow with the shards and the kinds of Node, not with the Nodes), a shard request is N / nodeShards profiles.',
    '',
    `| at ${thousands(MODEL_NODES)} Nodes | largest request | request bytes per change | Metacontroller CPU s per change | our server CPU s per change | request bytes over a bootstrap (upper bound: one change per Node) |`,
    '|---|---:|---:|---:|---:|---:|',
    row('before (every NodeProfile in the chain)', undefined),
    row('shards, nodeShards 32 (default)', 32),
    row(`shards, nodeShards ${balanced} (balanced: √(N × profile bytes / summary bytes per shard))`, balanced),
    row('shards, nodeShards 1024 (the maximum)', 1024),
    '',
    `- **Before**, the chain's request passes the server's 256 MiB body limit at ${thousands(Math.round(SERVER_BODY_LIMIT / model.bytesPerProfile))} Nodes; long before that every change costs seconds of Metacontroller CPU.` +
      ' With shards the shard request grows as N / nodeShards and the chain request as nodeShards (its summaries): the two balance at nodeShards ≈ √(N × profile bytes / summary bytes per shard),' +
      ` ${balanced} at ${thousands(MODEL_NODES)} Nodes, where both are ≈ ${mb((MODEL_NODES * model.bytesPerProfile) / balanced)}: the largest request then grows as √N, not N.`,
    `- **The next ceiling is memory, in Metacontroller and kube-apiserver**: both cache every Node whole (node-profile's decorator watches Nodes), and neither is changed by shards. Peak RSS (both runs) grows` +
      ` ${model.mcRssPerNode.b.toFixed(2)} MB per Node in Metacontroller and ${model.apiRssPerNode.b.toFixed(2)} MB per Node in kube-apiserver: at ${thousands(MODEL_NODES)} Nodes ≈ **${(mcRss / 1024).toFixed(0)} GB** and ≈ **${(apiRss / 1024).toFixed(0)} GB**.` +
      ' Metacontroller hits it first in practice (one process, one informer per watched kind, no paging); the remedy is a metadata-only watch of Nodes (Metacontroller does not offer one) or node-profile outside Metacontroller.',
    '',
  ];
}

/** Where the runs came from: the files the section was made of, and a remark. */
export interface Sources {
  readonly before: string;
  readonly after: string;
  readonly remark?: string | undefined;
}

/** The `<!-- bench:shards -->` section of RESULTS.md from the two runs. */
export function shardsSection(before: RunFile, after: RunFile, sources: Sources): string {
  const model = shardsModel(before, after);
  const lines = [
    START,
    '## Node shards: no request that grows with the whole cluster (issue 27)',
    '',
    `Before = the chain relating every NodeProfile (\`${before.commit}\`); after = NodeShards (\`${after.commit}\`, default \`nodeShards: 32\`). Same command for both,` +
      ` \`npm run bench:cluster -- --metacontroller-workers 20 --nodes ${before.runs.map((r) => r.nodes).join(',')} --changes ${after.changes} --out FILE\`, one after the other on the same machine` +
      ' with nothing else running (the load average at the start of each run is beside it; 2 cores). Everything else as in the bench:cluster section above.' +
      (sources.remark ? ` ${sources.remark}` : '') +
      ' Largest request = the largest body any hook received in a change, as recorded by a pass-through proxy between Metacontroller and our server' +
      " (harness/e2e/hook-proxy.ts): the median over the changes and the largest of all; bytes per change = Σ over routes of calls × that route's largest request (an upper bound).",
    '',
    `**Targets** (the after run; issue 27):`,
    '',
    '| Nodes | target | limit | before | after | met |',
    '|---:|---|---|---:|---:|---|',
    ...targets(before, after),
    '',
    '| run | Nodes | load avg at start | converged after the first Node | after the last | reaction p50 / p90 / max | calls per change: node-profile / node-shard / chain / instance-type sync (median) | largest request per change (median; route) | largest request of any change | request bytes per change (median) | largest request during the bootstrap | bootstrap: node-shard / chain sync calls | bootstrap: request bytes |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
    ...table(pairs(before, after)),
    '',
    '**CPU seconds and peak RSS per process** (convergence = first Node → converged; per change = median over the changes):',
    '',
    '| run | Nodes | process | CPU s, convergence | CPU s per change | peak RSS MB |',
    '|---|---:|---|---:|---:|---:|',
    ...processTable(pairs(before, after)),
    '',
    ...bootstrapNote(before, after),
    ...modelLines(model, before.runs.length + after.runs.length),
    '![largest hook request per change against Nodes, measured and modelled](results/shards-scale.svg)',
    '',
    `Reproduce: \`npm run bench:cluster -- --metacontroller-workers 20 --nodes 500,2000,5000,10000 --out before.json\` on a checkout before shards (with this` +
      ' bench/cluster/control-plane.ts and harness/e2e/hook-proxy.ts), the same with `--out after.json` on this one, then' +
      ' `npx tsx bench/cluster/shards-report.ts --before before.json --after after.json` (writes this section and `bench/results/shards-scale.svg`).' +
      ` This section: \`npx tsx bench/cluster/shards-report.ts --before ${sources.before} --after ${sources.after}\`.`,
    END,
  ];
  return lines.join('\n');
}

/** RESULTS.md with `section` in place of the old one, or appended when there is none. */
export function spliceShardsSection(results: string, section: string): string {
  const start = results.indexOf(START);
  const end = results.indexOf(END);
  return start >= 0 && end > start
    ? `${results.slice(0, start)}${section}${results.slice(end + END.length)}`
    : `${results.trimEnd()}\n\n${section}\n`;
}

function main(): void {
  const beforePath = argument('before');
  const afterPath = argument('after');
  if (!beforePath || !afterPath)
    throw new Error('usage: tsx bench/cluster/shards-report.ts --before A.json --after B.json [--remark TEXT]');
  const before = readRunFile(beforePath) as RunFile;
  const after = readRunFile(afterPath) as RunFile;
  const repo = path.dirname(BENCH_DIR);
  const section = shardsSection(before, after, {
    before: path.relative(repo, beforePath),
    after: path.relative(repo, afterPath),
    remark: argument('remark'),
  });
  process.stdout.write(`${section}\n`);
  writeFileSync(path.join(BENCH_DIR, 'results', 'shards-scale.svg'), svg(shardsModel(before, after), before, after));
  const resultsFile = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(resultsFile, spliceShardsSection(readFileSync(resultsFile, 'utf8'), section));
}

// Run as a script, not when a test imports the pure functions above.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) main();
