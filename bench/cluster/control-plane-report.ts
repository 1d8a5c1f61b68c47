/** @module `npm run bench:cluster`'s outputs: its RESULTS.md section, the README lines and the scale plot (hand-written SVG). */

export interface ProcessUse {
  /** From the first Node created to convergence. */
  readonly cpuSecondsConvergence: number;
  /** Over every card change, quiet waits included. */
  readonly cpuSecondsReactions: number;
  /** VmHWM (the process's whole life). */
  readonly peakRssMB: number;
}

export interface Reaction {
  readonly node: string;
  readonly seconds: number;
  /** Answers per route from before the change until the hooks were quiet again. */
  readonly calls: Readonly<Record<string, number>>;
  /** CPU seconds per process over the same window. */
  readonly cpu: Readonly<Record<string, number>>;
  /** The largest request body per route in the same window (harness/e2e/hook-proxy.ts); absent in older results. */
  readonly largestRequestBytes?: Readonly<Record<string, number>>;
}

export interface ClusterRun {
  readonly nodes: number;
  readonly namespaces: number;
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
  readonly createSeconds: number;
  readonly convergedAfterFirstSeconds: number;
  readonly convergedAfterLastSeconds: number;
  readonly convergenceCalls: Readonly<Record<string, number>>;
  readonly reaction: { readonly p50: number; readonly p90: number; readonly max: number };
  readonly reactions: readonly Reaction[];
  /**
   * JSON of what the chain's request carries of the Nodes as the API server serves it: the NodeShards,
   * the profiles in no shard and the unmarked managed Nodes (bench/cluster/chain-request.ts); runs
   * recorded before that counted every NodeProfile.
   */
  readonly chainRequestBytes: number;
  /** JSON of every NodeProfile over the Nodes: what one Node costs in a request that holds it. */
  readonly bytesPerNode: number;
  /** The largest request body per route from the first Node to convergence; absent in older results. */
  readonly largestRequestBytesConvergence?: Readonly<Record<string, number>>;
  /** Requests, their bytes and the largest per route over the whole run; absent in older results. */
  readonly requestSizes?: Readonly<Record<string, { count: number; totalBytes: number; maxBytes: number }>>;
  readonly flavors: number;
  readonly processes: Readonly<Record<string, ProcessUse>>;
  readonly connectionResets: number;
  readonly metacontroller: string;
  /** The request-size experiment: Nodes without the status a kubelet writes beyond capacity. */
  readonly slim?: boolean;
  /** `--status-reports`: one kubelet status report per Node, node-profile syncing on it or not. */
  readonly statusReports?: readonly StatusReport[];
}

/**
 * One round of status writes, one per Node, as each kubelet posts every 5 min when nothing changed
 * (nodeStatusReportFrequency: the conditions' heartbeat times move), with node-profile's
 * `ignoreStatusChanges` as given and its resync put off: the hook calls and CPU seconds the round cost.
 */
export interface StatusReport {
  readonly ignoreStatusChanges: boolean;
  readonly writes: number;
  readonly writeSeconds: number;
  readonly calls: Readonly<Record<string, number>>;
  readonly cpu: Readonly<Record<string, number>>;
}

export interface ClusterResult {
  readonly date: string;
  readonly commit: string;
  readonly durationSeconds: number;
  readonly machine: { readonly cpus: number; readonly cpuModel: string; readonly node: string };
  readonly changes: number;
  /** `--workers` of Metacontroller (absent in older results: its default, 5). */
  readonly metacontrollerWorkers?: number;
  readonly runs: readonly ClusterRun[];
  readonly slimRuns?: readonly ClusterRun[];
  readonly before: readonly Before[];
  /** The chain relating whole Nodes (the run before NodeProfiles); absent in older results. */
  readonly wholeNodes?: readonly Before[];
}

export interface Before {
  readonly nodes: number;
  readonly afterLast: number;
  readonly afterFirst: number;
  readonly p50: number;
  readonly p90: number;
}

/** Issue 18's measurement, before node-profile related the ChainSettings (N + 1 node-profile calls per change). */
export const BEFORE: readonly Before[] = [
  { nodes: 500, afterLast: 2.1, afterFirst: 6.6, p50: 0.46, p90: 0.58 },
  { nodes: 2000, afterLast: 4.1, afterFirst: 20.3, p50: 1.45, p90: 1.79 },
  { nodes: 5000, afterLast: 9.1, afterFirst: 45.6, p50: 3.55, p90: 4.47 },
];

/** `npm run bench:cluster` at d01edec, when the chain related whole Nodes (23.5 KB each; RESULTS.md of that commit). */
export const WHOLE_NODES: readonly Before[] = [
  { nodes: 500, afterLast: 15.3, afterFirst: 30.6, p50: 0.69, p90: 0.96 },
  { nodes: 2000, afterLast: 49.9, afterFirst: 90.4, p50: 1.46, p90: 1.84 },
  { nodes: 5000, afterLast: 136.9, afterFirst: 252.8, p50: 3.93, p90: 5.19 },
];

export const TARGETS = { nodes: 5000, nodeProfileCalls: 3, chainCalls: 1, p90Seconds: 2, afterFirstSeconds: 60 };

const START = '<!-- bench:cluster start -->';
const END = '<!-- bench:cluster end -->';
const PROCESS_ORDER = ['our server', 'metacontroller', 'kube-apiserver', 'etcd', 'bench driver'];

const s = (value: number, digits = 2): string => value.toFixed(digits);
const thousands = (n: number): string => n.toLocaleString('en-US');
const load = (l: readonly number[]): string => l.map((v) => v.toFixed(2)).join(' / ');

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median and max over the changes of one route's calls. */
function callsOf(run: ClusterRun, route: string): { median: number; max: number } {
  const values = run.reactions.map((r) => r.calls[route] ?? 0);
  return { median: values.length ? median(values) : 0, max: values.length ? Math.max(...values) : 0 };
}

/** The process with most CPU seconds per change (median over the changes). */
function dominant(run: ClusterRun): { name: string; seconds: number; all: Record<string, number> } {
  const all = Object.fromEntries(
    PROCESS_ORDER.filter((p) => p !== 'bench driver').map((p) => [p, median(run.reactions.map((r) => r.cpu[p] ?? 0))]),
  );
  const [name, seconds] = Object.entries(all).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
  return { name, seconds, all };
}

/** CPU seconds per chain sync of one process: per change over the change's chain calls (median; the small hooks' share included). */
function perChainSync(run: ClusterRun, process: string): number {
  const values = run.reactions
    .filter((r) => (r.calls['scheduling-chain/sync'] ?? 0) > 0 && (r.calls['node-profile/sync'] ?? 0) < 10)
    .map((r) => (r.cpu[process] ?? 0) / (r.calls['scheduling-chain/sync'] ?? 1));
  return values.length ? median(values) : 0;
}

function slimTable(result: ClusterResult): string[] {
  const pairs = (result.slimRuns ?? []).flatMap((slim) => {
    const full = result.runs.find((r) => r.nodes === slim.nodes);
    return full ? [[full, slim] as const] : [];
  });
  if (pairs.length === 0) return [];
  const row = (label: string, r: ClusterRun): string =>
    `| ${thousands(r.nodes)} | ${label} | ${s(r.bytesPerNode / 1024, 1)} KB | ${s(r.chainRequestBytes / 1e6, 1)} MB | ${s(r.reaction.p50)} / ${s(r.reaction.p90)} s` +
    ` | ${s(perChainSync(r, 'metacontroller'))} / ${s(perChainSync(r, 'our server'))} / ${s(perChainSync(r, 'kube-apiserver'))}` +
    ` | ${s(r.convergedAfterLastSeconds, 1)} s | ${load(r.loadAverageStart)} |`;
  return [
    '**Request size** (issue 18 item 4): the same run with Nodes that carry only capacity and allocatable in their status (no images,' +
      ' conditions, nodeInfo, addresses), so the chain request shrinks while the Nodes, their labels and the hook calls stay the same:',
    '',
    '| Nodes | Nodes as | bytes per Node | chain request | reaction p50 / p90 | CPU s per chain sync: Metacontroller / our server / kube-apiserver | converged after the last Node | load avg at start |',
    '|---:|---|---:|---:|---:|---:|---:|---|',
    ...pairs.flatMap(([full, slim]) => [row('a kubelet writes them', full), row('capacity only', slim)]),
    '',
  ];
}

function judge(result: ClusterResult): string[] {
  const at = result.runs.find((r) => r.nodes === TARGETS.nodes);
  if (!at) return [`No run at ${thousands(TARGETS.nodes)} Nodes: the targets are not judged.`];
  const np = callsOf(at, 'node-profile/sync');
  const chain = callsOf(at, 'scheduling-chain/sync');
  const yes = (ok: boolean): string => (ok ? 'yes' : '**no**');
  return [
    '| target at 5,000 Nodes | limit | measured | met |',
    '|---|---|---|---|',
    `| node-profile sync calls per Node change (median of ${at.reactions.length}) | ≤ ${TARGETS.nodeProfileCalls} | ${np.median} (max ${np.max}) | ${yes(np.median <= TARGETS.nodeProfileCalls)} |`,
    `| scheduling-chain sync calls per Node change (median) | ${TARGETS.chainCalls} | ${chain.median} (max ${chain.max}) | ${yes(chain.median <= TARGETS.chainCalls)} |`,
    `| reaction p90 | < ${TARGETS.p90Seconds} s | ${s(at.reaction.p90)} s | ${yes(at.reaction.p90 < TARGETS.p90Seconds)} |`,
    `| convergence from the first Node | < ${TARGETS.afterFirstSeconds} s | ${s(at.convergedAfterFirstSeconds, 1)} s | ${yes(at.convergedAfterFirstSeconds < TARGETS.afterFirstSeconds)} |`,
    `| connection resets | 0 | ${at.connectionResets} | ${yes(at.connectionResets === 0)} |`,
  ];
}

export function clusterMarkdown(result: ClusterResult): string {
  const runs = result.runs;
  const first = runs[0];
  const lines = [
    START,
    `## On a real control plane (\`npm run bench:cluster\`), ${result.date}`,
    '',
    `Commit \`${result.commit}\`, ${Math.round(result.durationSeconds / 60)} min in all, on ${result.machine.cpus} × ${result.machine.cpuModel}, Node ${result.machine.node}.` +
      ` etcd, kube-apiserver v1.36.3, Metacontroller ${first?.metacontroller ?? '?'}, and our server from \`dist\` (\`serve\`, the NODE_OPTIONS of its Deployment),` +
      " all on this machine; no kube-controller-manager, no Kueue controller (CRDs only). Resync periods are the manifests' (node-profile 3600 s," +
      ' the others 60 s); Metacontroller runs with discovery every 20 s, zap log level 4, client QPS 100 / burst 200,' +
      ` ${result.metacontrollerWorkers ?? 5} sync workers per controller (\`--workers\`; its default is 5).` +
      " The machine is shared with other engineers' tests: the load average is recorded beside each run, and numbers move with it.",
    '',
    `Nodes are \`generateNodes\` (bench/shared/cluster-nodes.ts): NFD, our agent's and GPU feature discovery's labels, kubelet-like status (images, conditions,` +
      ' nodeInfo), created 16 at a time (object, then status) without node-profile\'s labels. "Converged" = no Node lacks' +
      ' `gpustack.ai/managed`, every owned object (ResourceFlavor, ClusterQueue, InstanceType, LocalQueue, AdmissionCheck, ChainSettings, NodeProfile, NodeShard, DeviceClass where render emits them) equals' +
      ` \`render\` of the same Nodes, and so does every Node's label set (polled every 0.5 s). A change = one accelerated Node loses a card` +
      ` (our agent's \`.count\` label and GFD's \`nvidia.com/gpu.count\`); reaction = patch sent → that Node's labels and every ResourceFlavor,` +
      ` ClusterQueue and InstanceType equal render's (polled every 0.1 s); ${result.changes} changes, one at a time, each after the hooks were quiet` +
      " for 2 s (below). Hook calls per change are our server's own per-route counter from before the change until the hooks were quiet for 3 s: no answer, nothing in flight, Metacontroller under 0.1 CPU s per s" +
      ' (median and max over the changes: a periodic resync can land in a window). Chain request = JSON of what the chain reads of the Nodes as the API server' +
      ' serves it: the NodeShards (its children, with their summaries), the NodeProfiles in no shard and the unmarked managed Nodes (`related`);' +
      ' before node shards, every NodeProfile (bench/cluster/chain-request.ts; runs recorded before it counted every NodeProfile). Bytes per Node = every NodeProfile / N.',
    '',
    ...judge(result),
    '',
    '| Nodes | load avg at start / end (1/5/15 min) | created in | converged after the last Node | after the first | reaction p50 / p90 / max | node-profile / chain / instance-type sync calls per change (median, max) | chain request | bytes per Node | flavors | connection resets |',
    '|---:|---|---:|---:|---:|---:|---|---:|---:|---:|---:|',
    ...runs.map((r) => {
      const c = (route: string): string => {
        const x = callsOf(r, route);
        return `${x.median} (${x.max})`;
      };
      return (
        `| ${thousands(r.nodes)} | ${load(r.loadAverageStart)} → ${load(r.loadAverageEnd)} | ${s(r.createSeconds, 1)} s | ${s(r.convergedAfterLastSeconds, 1)} s` +
        ` | ${s(r.convergedAfterFirstSeconds, 1)} s | ${s(r.reaction.p50)} / ${s(r.reaction.p90)} / ${s(r.reaction.max)} s` +
        ` | ${c('node-profile/sync')} / ${c('scheduling-chain/sync')} / ${c('instance-type/sync')}` +
        ` | ${s(r.chainRequestBytes / 1e6, 1)} MB | ${s(r.bytesPerNode / 1024, 1)} KB | ${r.flavors} | ${r.connectionResets} |`
      );
    }),
    '',
    '**Before**: (a) issue 18, node-profile related the SchedulingChain, whose status changes with every Node, so one change cost' +
      ' N + 1 node-profile calls; (b) `d01edec`, the chain related whole Nodes (23.5 KB each) instead of NodeProfiles:',
    '',
    '| before | Nodes | converged after the last Node | after the first | reaction p50 / p90 |',
    '|---|---:|---:|---:|---:|',
    ...[
      ...result.before.map((b) => ['(a) issue 18', b] as const),
      ...(result.wholeNodes ?? []).map((b) => ['(b) whole Nodes', b] as const),
    ].map(
      ([what, b]) =>
        `| ${what} | ${thousands(b.nodes)} | ${s(b.afterLast, 1)} s | ${s(b.afterFirst, 1)} s | ${s(b.p50)} / ${s(b.p90)} s |`,
    ),
    '',
    '**CPU seconds and peak RSS per process** (convergence = first Node created → converged; per change = median over the changes of the window' +
      ' from the change to quiet hooks; "bench driver" is this script: creating Nodes, polling, rendering):',
    '',
    '| Nodes | process | CPU s, convergence | CPU s per change (median) | CPU s per chain sync (median) | CPU s, all changes | peak RSS MB |',
    '|---:|---|---:|---:|---:|---:|---:|',
    ...runs.flatMap((r) =>
      PROCESS_ORDER.filter((p) => r.processes[p]).map((p) => {
        const use = r.processes[p] as ProcessUse;
        const per = p === 'bench driver' ? '' : s(median(r.reactions.map((x) => x.cpu[p] ?? 0)));
        const sync = p === 'bench driver' ? '' : s(perChainSync(r, p));
        return `| ${thousands(r.nodes)} | ${p} | ${s(use.cpuSecondsConvergence, 1)} | ${per} | ${sync} | ${s(use.cpuSecondsReactions, 1)} | ${use.peakRssMB} |`;
      }),
    ),
    '',
    '**What dominates** (CPU seconds per change, median):',
    '',
    ...runs.map((r) => {
      const d = dominant(r);
      const rest = Object.entries(d.all)
        .filter(([name]) => name !== d.name)
        .map(([name, v]) => `${name} ${s(v)}`)
        .join(', ');
      return `- ${thousands(r.nodes)} Nodes: **${d.name}** ${s(d.seconds)} s (${rest}).`;
    }),
    '',
    ...slimTable(result),
    '![convergence and reaction p90 against Nodes, before and after](results/cluster-scale.svg)',
    '',
    'Reproduce: `npm run bench:cluster -- --metacontroller-workers 20` (builds; `--nodes 500,2000,5000` is the default, `--changes 20`, `--slim-at 5000` adds the request-size experiment, `--no-write`); it writes' +
      ' `bench/results/cluster-<date>.json`, `bench/results/cluster-scale.svg`, this section of `bench/RESULTS.md` and' +
      ' `bench/README-cluster-section.md`. The components come from the e2e cache (`scripts/e2e/build-components.sh`).',
    END,
  ];
  return lines.join('\n');
}

/** Replaces the bench:cluster section of RESULTS.md (or appends it), leaving `npm run bench`'s part as it is. */
export function spliceClusterSection(results: string, section: string): string {
  const start = results.indexOf(START);
  const end = results.indexOf(END);
  if (start >= 0 && end > start) return `${results.slice(0, start)}${section}${results.slice(end + END.length)}`;
  return `${results.trimEnd()}\n\n${section}\n`;
}

/** The bench:cluster section of a RESULTS.md text, for `npm run bench` to keep when it rewrites the file. */
export function clusterSectionOf(results: string): string | undefined {
  const start = results.indexOf(START);
  const end = results.indexOf(END);
  return start >= 0 && end > start ? results.slice(start, end + END.length) : undefined;
}

/**
 * Every section of RESULTS.md that another bench writes (`<!-- bench:<name> start -->` …
 * `<!-- bench:<name> end -->`: bench:admission's, bench:cluster's), in order, for `npm run bench`
 * to keep when it rewrites the file.
 */
export function keptSectionsOf(results: string): string[] {
  return [...results.matchAll(/<!-- bench:([a-z-]+) start -->[\s\S]*?<!-- bench:\1 end -->/g)].map((m) => m[0]);
}

export function clusterReadmeSection(result: ClusterResult): string {
  const rows = result.runs.map(
    (r) =>
      `| ${thousands(r.nodes)} | ${s(r.convergedAfterFirstSeconds, 1)} s | ${s(r.reaction.p50)} / ${s(r.reaction.p90)} s | ${callsOf(r, 'node-profile/sync').median} / ${callsOf(r, 'scheduling-chain/sync').median} | ${dominant(r).name} | ${load(r.loadAverageStart).split(' / ')[0]} |`,
  );
  return [
    '### On a real control plane',
    '',
    `\`npm run bench:cluster\` runs etcd, kube-apiserver v1.36.3, Metacontroller ${result.runs[0]?.metacontroller ?? ''} and our server on one` +
      ` ${result.machine.cpus}-core machine (shared, load average beside each run) with N realistic Nodes and changes one Node's cards` +
      ` ${result.changes} times (run of ${result.date}, commit \`${result.commit}\`; every table in \`bench/RESULTS.md\`):`,
    '',
    '| Nodes | converged after the first Node | reaction p50 / p90 | node-profile / chain calls per change | dominant process per change | load avg |',
    '|---:|---:|---:|---:|---|---:|',
    ...rows,
    '',
  ].join('\n');
}

interface Line {
  readonly name: string;
  readonly color: string;
  readonly dash: string;
  readonly points: readonly (readonly [number, number])[];
}

/** One panel of the scale plot: seconds (linear, from 0) against Nodes. */
function panel(
  left: number,
  top: number,
  width: number,
  height: number,
  title: string,
  lines: readonly Line[],
): string[] {
  const all = lines.flatMap((l) => l.points);
  const xMax = Math.max(...all.map((p) => p[0]));
  const yMax = Math.max(...all.map((p) => p[1]));
  const step = [0.5, 1, 2, 5, 10, 20, 50, 100].find((v) => yMax / v <= 6) ?? 200;
  const yTop = Math.ceil(yMax / step) * step;
  const px = (x: number): number => left + (x / xMax) * width;
  const py = (y: number): number => top + height - (y / yTop) * height;
  const out = [`<text x="${left}" y="${top - 10}" font-size="13">${title}</text>`];
  for (let y = 0; y <= yTop + 1e-9; y += step)
    out.push(
      `<line x1="${left}" x2="${left + width}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${y}</text>`,
    );
  for (const x of [...new Set(all.map((p) => p[0]))].sort((a, b) => a - b))
    out.push(
      `<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${top}" y2="${top + height}" stroke="#eee"/>`,
      `<text x="${px(x).toFixed(1)}" y="${top + height + 16}" text-anchor="middle">${thousands(x)}</text>`,
    );
  out.push(`<text x="${left + width / 2}" y="${top + height + 34}" text-anchor="middle">Nodes</text>`);
  for (const line of lines) {
    const points = line.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`);
    out.push(
      `<polyline fill="none" stroke="${line.color}" stroke-width="2"${line.dash ? ` stroke-dasharray="${line.dash}"` : ''} points="${points.join(' ')}"/>`,
      ...points.map((p) => `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${line.color}"/>`),
    );
  }
  return out;
}

/** Convergence (after the first Node) and reaction p90 against Nodes, one panel each: this run and issue 18's "before". */
export function clusterScaleSvg(result: ClusterResult): string {
  const width = 760;
  const height = 400;
  const after = { color: '#1f77b4', dash: '' };
  const before = { color: '#777777', dash: '6 4' };
  const whole = { color: '#d62728', dash: '2 3' };
  const wholeNodes = result.wholeNodes ?? [];
  const runs = result.runs;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="20" y="22" font-size="14">bench:cluster ${result.date}: seconds against Nodes; dashed = before (issue 18)</text>`,
    ...panel(60, 60, 290, 270, 'converged after the first Node (s)', [
      { name: 'after', ...after, points: runs.map((r) => [r.nodes, r.convergedAfterFirstSeconds] as const) },
      { name: 'before', ...before, points: result.before.map((b) => [b.nodes, b.afterFirst] as const) },
      ...(wholeNodes.length > 0
        ? [{ name: 'whole Nodes', ...whole, points: wholeNodes.map((b) => [b.nodes, b.afterFirst] as const) }]
        : []),
    ]),
    ...panel(440, 60, 290, 270, 'reaction to one card change, p90 (s)', [
      { name: 'after', ...after, points: runs.map((r) => [r.nodes, r.reaction.p90] as const) },
      { name: 'before', ...before, points: result.before.map((b) => [b.nodes, b.p90] as const) },
      ...(wholeNodes.length > 0
        ? [{ name: 'whole Nodes', ...whole, points: wholeNodes.map((b) => [b.nodes, b.p90] as const) }]
        : []),
    ]),
    `<line x1="60" x2="90" y1="${height - 12}" y2="${height - 12}" stroke="${after.color}" stroke-width="2"/>`,
    `<text x="96" y="${height - 8}">this run (${result.commit})</text>`,
    `<line x1="300" x2="330" y1="${height - 12}" y2="${height - 12}" stroke="${before.color}" stroke-width="2" stroke-dasharray="${before.dash}"/>`,
    `<text x="336" y="${height - 8}">(a) node-profile related the SchedulingChain</text>`,
    ...(wholeNodes.length > 0
      ? [
          `<line x1="560" x2="590" y1="${height - 12}" y2="${height - 12}" stroke="${whole.color}" stroke-width="2" stroke-dasharray="${whole.dash}"/>`,
          `<text x="596" y="${height - 8}">(b) chain related whole Nodes</text>`,
        ]
      : []),
    '</svg>',
    '',
  ];
  return out.join('\n');
}
