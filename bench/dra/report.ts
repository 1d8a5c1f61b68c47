/** @module `npm run bench:dra`'s outputs: its RESULTS.md section and its plot (hand-written SVG), from the runs. */
import type { Layout, Workload } from './workloads.js';

export interface DraRun {
  /** The kube-scheduler's version (the control plane's); absent in runs from before it was recorded: v1.36.3. */
  readonly kubeScheduler?: string;
  readonly nodes: number;
  readonly layout: Layout;
  readonly workload: Workload;
  /** True: the run's Pods fill every card; false: the first `created` Pods of the fill (the window). */
  readonly fill: boolean;
  /** Set when the run was cut after this many seconds from its first bind (a fixed time window). */
  readonly maxSeconds?: number;
  readonly created: number;
  readonly bound: number;
  /** Creating the claims and Pods, before the scheduler starts. */
  readonly createSeconds: number;
  /** From the scheduler's spawn to the first bind (its informers list every object first). */
  readonly schedulerStartupSeconds: number;
  /** From the scheduler's spawn to the end of the run. */
  readonly runSeconds?: number;
  /** From the first bind to the last. */
  readonly spanSeconds: number;
  /** (bound − 1) / span. */
  readonly podsPerSecond: number;
  /** The same over the second half of the binds (upstream's fill benchmarks measure the second half). */
  readonly secondHalfPodsPerSecond: number;
  /** Mean of the per-second bind counts (upstream's SchedulingThroughput "Average"). */
  readonly sampleMeanPodsPerSecond: number;
  /** Nodes the scheduler filtered per Pod (its log's evaluatedNodes), mean. */
  readonly meanEvaluatedNodes: number;
  /** The scheduler's CPU seconds from the first bind to the last. */
  readonly schedulerCpuSeconds: number;
  /** Its CPU seconds over its whole life (start-up and informer sync included). */
  readonly schedulerCpuSecondsTotal: number;
  readonly schedulerRssMB: number;
  readonly schedulerPeakRssMB: number;
  /** CPU seconds per process from the first bind to the last. */
  readonly cpu: Readonly<Record<string, number>>;
  /** `attempts <result>` and `attempt seconds sum|count` (scheduled) from the scheduler's /metrics. */
  readonly schedulerMetrics: Readonly<Record<string, number>>;
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
  readonly availableMBStart: number;
  readonly availableMBEnd: number;
  /** `go tool pprof -top` of a CPU profile of the scheduler from its first bind (`--profile-seconds`). */
  readonly profileTop?: string;
}

export interface DraResult {
  readonly date: string;
  readonly commit: string;
  readonly durationSeconds: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryMB: number;
    readonly node: string;
  };
  readonly cardsPerNode: number;
  readonly window: number;
  readonly schedulerQps: number;
  readonly schedulerBurst: number;
  /** A run is cut this many seconds after its first bind. */
  readonly maxSeconds: number;
  readonly runs: readonly DraRun[];
}

export const DRA_SECTION_START = '<!-- bench:dra start -->';
export const DRA_SECTION_END = '<!-- bench:dra end -->';
/** Upstream's DRA threshold at 500 Nodes (SteadyStateClusterResourceClaimTemplate/empty_500nodes). */
export const UPSTREAM_THRESHOLD = 64;
/** Our layout may cost the scheduler up to this many times the baseline's CPU per Pod before we look why. */
export const BASELINE_FACTOR = 2;

const LAYOUT_ORDER: readonly Layout[] = ['ours', 'baseline', 'no-counters', 'shared-only'];
const WORKLOAD_ORDER: readonly Workload[] = ['whole', 'share', 'share-20gi', 'mixed'];

/** The scheduler every run before versions were recorded used. */
export const DEFAULT_SCHEDULER = 'v1.36.3';
export const versionOf = (r: DraRun): string => r.kubeScheduler ?? DEFAULT_SCHEDULER;
const keyOf = (r: DraRun): string => `${versionOf(r)}/${r.nodes}/${r.layout}/${r.workload}`;

function order(a: DraRun, b: DraRun): number {
  return (
    versionOf(a).localeCompare(versionOf(b), 'en', { numeric: true }) ||
    a.nodes - b.nodes ||
    LAYOUT_ORDER.indexOf(a.layout) - LAYOUT_ORDER.indexOf(b.layout) ||
    WORKLOAD_ORDER.indexOf(a.workload) - WORKLOAD_ORDER.indexOf(b.workload)
  );
}

/** The earlier runs with the new ones in place of any of the same size, layout and workload, in table order. */
export function mergeRuns(previous: readonly DraRun[], next: readonly DraRun[]): DraRun[] {
  const byKey = new Map(previous.map((r) => [keyOf(r), r]));
  for (const run of next) byKey.set(keyOf(run), run);
  return [...byKey.values()].sort(order);
}

/** Scheduler CPU milliseconds per bound Pod. */
export function cpuPerPodMs(run: DraRun): number {
  return run.bound > 0 ? (run.schedulerCpuSeconds / run.bound) * 1000 : 0;
}

/**
 * Scheduler CPU ms per Pod as a table cell: with fewer than two binds there is no span, so the
 * scheduler's whole-run CPU over the binds (none: more than that per Pod).
 */
export function costCell(run: DraRun): string {
  if (run.bound >= 2) return `${f(cpuPerPodMs(run))} (${f(run.podsPerSecond)})`;
  const total = thousands(Math.round(run.schedulerCpuSecondsTotal * 1000));
  return run.bound === 0 ? `> ${total} (none bound)` : `${total} (1 bound)`;
}

/** Ours against the baseline, whole cards, per size that has both: CPU per Pod and Pods/s. */
export function counterPrice(runs: readonly DraRun[]): { nodes: number; cpuRatio: number; rateRatio: number }[] {
  const sizes = [...new Set(runs.map((r) => r.nodes))].sort((a, b) => a - b);
  return sizes.flatMap((nodes) => {
    const ours = runs.find((r) => r.nodes === nodes && r.layout === 'ours' && r.workload === 'whole');
    const base = runs.find((r) => r.nodes === nodes && r.layout === 'baseline' && r.workload === 'whole');
    if (!ours || !base || ours.bound < 2 || cpuPerPodMs(base) === 0 || base.podsPerSecond === 0) return [];
    return [
      { nodes, cpuRatio: cpuPerPodMs(ours) / cpuPerPodMs(base), rateRatio: ours.podsPerSecond / base.podsPerSecond },
    ];
  });
}

const f = (value: number, digits = 1): string => value.toFixed(digits);
const thousands = (n: number): string => n.toLocaleString('en-US');

function row(r: DraRun): string {
  const others = (r.cpu['kube-apiserver'] ?? 0) + (r.cpu['etcd'] ?? 0);
  const run =
    (r.fill ? 'fill' : `first ${thousands(r.created)}`) +
    (r.maxSeconds !== undefined ? `, cut at ${r.maxSeconds} s` : '');
  const attempts = Object.entries(r.schedulerMetrics)
    .filter(([k]) => k.startsWith('attempts ') && k !== 'attempts scheduled')
    .map(([k, v]) => `${k.slice(9)} ${v}`)
    .join(', ');
  // Fewer than two binds give no rate: an upper bound from the run's length and the scheduler's whole CPU.
  const slow = r.bound < 2;
  const waited = r.runSeconds ?? r.spanSeconds;
  const rate = slow
    ? r.runSeconds !== undefined
      ? `≤ ${f(Math.max(1, r.bound) / Math.max(1, waited), 2)}`
      : '—'
    : `**${f(r.podsPerSecond)}**`;
  const cpu = slow ? `${f(r.schedulerCpuSecondsTotal)} (whole run)` : f(r.schedulerCpuSeconds);
  const perPod = slow ? `≥ ${f((r.schedulerCpuSecondsTotal / Math.max(1, r.bound)) * 1000, 0)}` : f(cpuPerPodMs(r), 2);
  return (
    `| ${versionOf(r)} | ${thousands(r.nodes)} | ${r.layout} | ${r.workload} | ${run} | ${thousands(r.bound)} / ${thousands(r.created)} | ${r.meanEvaluatedNodes || '—'} | ` +
    `${rate} | ${slow ? '—' : f(r.secondHalfPodsPerSecond)} | ${cpu} | ${perPod} | ` +
    `${r.schedulerRssMB} (${r.schedulerPeakRssMB}) | ${f(others)} | ${attempts || '—'} | ` +
    `${f(r.loadAverageStart[0] ?? 0, 2)} → ${f(r.loadAverageEnd[0] ?? 0, 2)} | ${f(r.availableMBStart / 1024)} |`
  );
}

/** The minor version of `v1.N.P` (0 when it is not one). */
const minorOf = (version: string): number => Number(/^v1\.(\d+)\./.exec(version)?.[1] ?? 0);

/** The target, the counter model's price and the layouts compared, for the runs of one scheduler version. */
function versionLines(version: string, runs: readonly DraRun[]): string[] {
  const lines: string[] = [`**kube-scheduler ${version}**`, ''];
  const price = counterPrice(runs);
  const biggestWhole = runs
    .filter((r) => r.layout === 'ours' && r.workload === 'whole')
    .sort((a, b) => b.nodes - a.nodes)[0];
  if (biggestWhole) {
    const atSize = runs.filter((r) => r.nodes === biggestWhole.nodes && r.workload === 'whole');
    const met = atSize.filter((r) => r.bound >= 2 && r.podsPerSecond >= UPSTREAM_THRESHOLD).map((r) => r.layout);
    lines.push(
      `**Target** (≥ ${UPSTREAM_THRESHOLD} Pods/s for whole cards at 5,000 Nodes), whole cards at ${thousands(biggestWhole.nodes)} Nodes: ` +
        atSize
          .map((r) => `${r.layout} ${r.bound >= 2 ? `${f(r.podsPerSecond)} Pods/s` : `${r.bound} bound`}`)
          .join(', ') +
        (biggestWhole.nodes < 5000
          ? ' (5,000 not measured yet).'
          : met.length > 0
            ? ` — met by ${met.join(', ')}.`
            : ' — **not met**.'),
      '',
    );
  }
  if (price.length > 0)
    lines.push(
      `Price of the counter model (ours / baseline, whole cards; above ${BASELINE_FACTOR}× we look why):`,
      '',
      '| Nodes | scheduler CPU per Pod | Pods/s |',
      '|---:|---:|---:|',
      ...price.map((p) => `| ${thousands(p.nodes)} | ${f(p.cpuRatio, 2)}× | ${f(p.rateRatio, 2)}× |`),
      '',
    );
  const layouts = LAYOUT_ORDER.filter((l) => runs.some((r) => r.layout === l && r.workload === 'whole'));
  if (layouts.length > 1) {
    const sizes = [...new Set(runs.map((r) => r.nodes))].sort((a, b) => a - b);
    lines.push(
      'Whole cards by layout: scheduler CPU ms per Pod (Pods/s); **no-counters** = ours without the counter slice and' +
        ' `consumesCounters` (over-allocates: a price tag, not a layout to ship); **shared-only** = one multi-allocatable device' +
        " per card and no counters, a whole card being a claim for the card's whole capacity (memory, cores, units) on it:",
      '',
      `| Nodes | ${layouts.join(' | ')} |`,
      `|---:|${layouts.map(() => '---:').join('|')}|`,
      ...sizes.map((nodes) => {
        const cells = layouts.map((layout) => {
          const r = runs.find((x) => x.nodes === nodes && x.layout === layout && x.workload === 'whole');
          return r ? costCell(r) : '—';
        });
        return `| ${thousands(nodes)} | ${cells.join(' | ')} |`;
      }),
      '',
    );
  }
  if (version === DEFAULT_SCHEDULER && price.some((p) => p.cpuRatio > BASELINE_FACTOR))
    lines.push(
      '**Why ours costs more** (kube-scheduler v1.36.3, read in k8s.io/dynamic-resource-allocation v0.36.3,' +
        ' `structured/internal/incubating`, and seen in the profiles below): the allocator files every ResourceSlice that' +
        ' carries `sharedCounters` under "shared" slices, whatever its `nodeName`, and `GatherPools` treats every shared slice' +
        ' as relevant to the Node being filtered. So each Filter call (one Pod × one candidate Node) converts the counter slice' +
        ' of *every* Node in the cluster, and each of those foreign pools is incomplete there (1 of its 2 slices: the device' +
        ' slice is node-local), which sends it through `checkSlicesInPool`, a scan of all slices. Per Filter that is O(N)' +
        ' conversions and O(N²) slice comparisons, times the Nodes filtered per Pod. The layout knob that matters is whether' +
        ' a pool has a counter slice at all, not how many counters a slice carries: any per-Node counter slice (the API keeps' +
        ' counters and devices in separate slices) is paid for on every Node. Upstream measured the same (about 3 Pods/s with' +
        ' partitionable devices against about 100 without) and merged a fix after 1.36.0, kubernetes/kubernetes#138917' +
        ' ("Partitionable Device Performance Optimization"); the v1.36.3 source still has the behaviour above.',
      '',
    );
  if (minorOf(version) >= 37)
    lines.push(
      `**What ${version} changed** (k8s.io/dynamic-resource-allocation v0.37.0 and later, kubernetes/kubernetes#138917;` +
        ' the 1.36 branch does not have it up to v0.36.6): `GatherPools` keeps a slice with `sharedCounters` only when the slice' +
        ' targets the Node being filtered (its `nodeName`, `allNodes` or `nodeSelector`). A device whose counter set is in a slice' +
        ' left out makes its pool incomplete, and only then does `checkSlicesInPool` fetch the rest of that pool. Both of our' +
        " slices carry the Node's `nodeName`, so a Filter call now reads that Node's two slices instead of every Node's counter slice.",
      '',
    );
  return lines;
}

/** The bench:dra section of RESULTS.md. */
export function draMarkdown(result: DraResult): string {
  const runs = [...result.runs].sort(order);
  const lines = [
    DRA_SECTION_START,
    `## DRA allocation throughput (\`npm run bench:dra\`), ${result.date}`,
    '',
    `Commit \`${result.commit}\`; runs took ${Math.round(result.durationSeconds / 60)} min in all. Machine: ${result.machine.cpus} × ${result.machine.cpuModel},` +
      ` ${thousands(result.machine.memoryMB)} MB, Node ${result.machine.node}. The machine is not always quiet:` +
      " the 1-min load average at each run's start and end and the memory available at its start stand beside every figure.",
    '',
    'The real kube-scheduler (its version in the first column), kube-apiserver and kube-controller-manager (resource claim' +
      ' controller) of the same Kubernetes release, and etcd, built by the e2e suite from the Go module proxy' +
      ` cache on one machine, all sharing its ${result.machine.cpus} cores with the bench driver; no kubelet. Nodes are API objects` +
      ` (Ready, ${result.cardsPerNode} H100 80GB cards each, room for 100 Pods). **ours** = the ResourceSlices our agent publishes` +
      ' (`desiredSlices`: one counter slice with a counter set per card, one device slice with a whole and a shared device per card,' +
      " both consuming the card's counters: 2 slices, 16 devices, 8 counter sets per Node); **baseline** = one slice of one plain" +
      ' device per card (our whole device without `consumesCounters`; no counters, no shared device); the DeviceClasses are the' +
      " chain's (`buildDeviceClasses`). Workloads: **whole** = one whole card per Pod (class `gpustack-nvidia`); **share** = one" +
      " share at the shared device's defaults (a tenth: 10 per card, `gpustack-nvidia-shared`); **share-20gi** = a share asking" +
      ' `memory: 20Gi` (3 per card); **mixed** = one whole card to every ten default shares, interleaved (half the cards each).' +
      ' Each Pod references its own ResourceClaim, created directly (no template: one object less per Pod, no controller in the' +
      ' path). Every claim and Pod of a run is created with no scheduler running; then kube-scheduler starts (client' +
      ` \`qps: ${result.schedulerQps}\`, \`burst: ${result.schedulerBurst}\`, as upstream's scheduler_perf; \`-v=2\`)` +
      ' and logs every bind with its own time stamp and the Nodes it filtered, which the bench reads. **Pods/s** = (bound − 1) / (last bind − first bind), "2nd half" the same over the second' +
      " half of the binds (upstream's fill benchmarks measure the second half); **scheduler CPU** = its utime + stime" +
      " (/proc/<pid>/stat) from the first bind to the last; RSS at the end (peak in brackets). **fill** = the run's Pods fill" +
      ' every card; **first N** = a window: the first N Pods of the fill (a fill of 40,000 whole cards or 400,000 shares does' +
      " not fit this machine's time), so the larger clusters are measured mostly empty (upstream's 64 Pods/s threshold is for" +
      ' its *empty* 500-Node steady state). A run ends when every Pod is bound or no bind came for 30 s (or none at all within' +
      ' `--first-bind-seconds`); a run still binding `--max-seconds` after its first bind is cut there ("cut at"): a fixed' +
      " time window. Where fewer than two Pods bound there is no rate: the row gives an upper bound (binds over the run's" +
      " length) and the scheduler's CPU over its whole run." +
      ' "other attempts" are the scheduler\'s unschedulable / error attempts (retries).',
    '',
    '| kube-scheduler | Nodes | layout | workload | run | bound / created | Nodes filtered per Pod | Pods/s | 2nd half Pods/s | scheduler CPU s | CPU ms / Pod | scheduler RSS MB | apiserver + etcd CPU s | other attempts | load (1 min) | avail. GB |',
    '|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|',
    ...runs.map(row),
    '',
  ];
  const versions = [...new Set(runs.map(versionOf))];
  for (const version of versions)
    lines.push(
      ...versionLines(
        version,
        runs.filter((r) => versionOf(r) === version),
      ),
    );
  const profiled = runs.filter((r) => r.profileTop);
  for (const r of profiled)
    lines.push(
      `<details><summary>Scheduler CPU profile: ${versionOf(r)}, ${thousands(r.nodes)} Nodes, ${r.layout}, ${r.workload}</summary>`,
      '',
      '```',
      (r.profileTop ?? '').trim(),
      '```',
      '</details>',
      '',
    );
  lines.push(
    '![DRA throughput](results/dra-throughput.svg)',
    '',
    'Reproduce: `npm run bench:dra` (`--nodes 500,2000,5000` is the default; `--window 4000`, `--layouts ours,baseline`,' +
      ' `--workloads whole,share,share-20gi,mixed`, `--profile-seconds 20`, `--no-write`; `E2E_KUBERNETES_VERSION=v1.37.2` for' +
      ' another release); runs of the same date are merged into `bench/results/dra-<date>.json` by scheduler version, size, layout' +
      ' and workload, then `bench/results/dra-throughput.svg` and this section are' +
      ' written from all of them.',
    DRA_SECTION_END,
  );
  return lines.join('\n');
}

/** Replaces the bench:dra section of RESULTS.md (or appends it). */
export function spliceDraSection(results: string, section: string): string {
  const start = results.indexOf(DRA_SECTION_START);
  const end = results.indexOf(DRA_SECTION_END);
  if (start >= 0 && end > start)
    return `${results.slice(0, start)}${section}${results.slice(end + DRA_SECTION_END.length)}`;
  return `${results.trimEnd()}\n\n${section}\n`;
}

interface Series {
  readonly name: string;
  readonly color: string;
  readonly dash: string;
  readonly opacity?: number;
  readonly points: readonly (readonly [number, number])[];
}

const COLORS: Record<Workload, string> = {
  whole: '#1f77b4',
  share: '#2ca02c',
  'share-20gi': '#ff7f0e',
  mixed: '#9467bd',
};
const DASHES: Record<Layout, string> = { ours: '', baseline: '6 4', 'no-counters': '2 3', 'shared-only': '8 2 2 2' };

/** One panel: y (linear, from 0) against the sizes, spaced evenly (50 … 5,000 are far apart). */
function panel(
  box: { left: number; top: number; width: number; height: number },
  title: string,
  sizes: readonly number[],
  series: readonly Series[],
  reference?: { value: number; label: string },
  log = false,
): string[] {
  const { left, top, width, height } = box;
  const values = [...series.flatMap((s) => s.points.map((p) => p[1])), reference?.value ?? 0];
  const yMax = Math.max(1, ...values);
  const step = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500].find((v) => yMax / v <= 6) ?? 1000;
  const yTop = log ? 10 ** Math.ceil(Math.log10(yMax)) : Math.ceil(yMax / step) * step;
  const px = (x: number): number =>
    left + (sizes.length === 1 ? width / 2 : (sizes.indexOf(x) / (sizes.length - 1)) * width);
  // Log panels start at 1 (ms per Pod spans four decades between the layouts).
  const py = (y: number): number =>
    top + height - (log ? Math.log10(Math.max(1, y)) / Math.log10(yTop) : y / yTop) * height;
  const ticks = log
    ? Array.from({ length: Math.log10(yTop) + 1 }, (_, i) => 10 ** i)
    : Array.from({ length: Math.round(yTop / step) + 1 }, (_, i) => i * step);
  const out = [`<text x="${left}" y="${top - 10}" font-size="13">${title}</text>`];
  for (const y of ticks)
    out.push(
      `<line x1="${left}" x2="${left + width}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end">${y}</text>`,
    );
  for (const x of sizes)
    out.push(`<text x="${px(x).toFixed(1)}" y="${top + height + 16}" text-anchor="middle">${thousands(x)}</text>`);
  out.push(`<text x="${left + width / 2}" y="${top + height + 34}" text-anchor="middle">Nodes (8 cards each)</text>`);
  if (reference)
    out.push(
      `<line x1="${left}" x2="${left + width}" y1="${py(reference.value).toFixed(1)}" y2="${py(reference.value).toFixed(1)}" stroke="#d62728" stroke-dasharray="4 3"/>`,
      `<text x="${left + width - 4}" y="${(py(reference.value) - 4).toFixed(1)}" text-anchor="end" fill="#d62728">${reference.label}</text>`,
    );
  for (const s of series) {
    const points = s.points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`);
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" stroke-opacity="${s.opacity ?? 1}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} points="${points.join(' ')}"/>`,
      ...points.map(
        (p) =>
          `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3" fill="${s.color}" fill-opacity="${s.opacity ?? 1}"/>`,
      ),
    );
  }
  return out;
}

/** Pods/s and scheduler CPU ms per Pod against Nodes, a line per layout and workload. */
export function draSvg(result: DraResult): string {
  const width = 820;
  const runs = [...result.runs].sort(order);
  const sizes = [...new Set(runs.map((r) => r.nodes))].sort((a, b) => a - b);
  const versions = [...new Set(runs.map(versionOf))];
  // The newest release in full colour, older ones faded: colour = workload, dashes = layout.
  const opacity = (version: string): number => (version === versions.at(-1) ? 1 : 0.4);
  const combos = [...new Set(runs.map((r) => `${versionOf(r)}/${r.layout}/${r.workload}`))];
  const series = (value: (r: DraRun) => number): Series[] =>
    combos.map((combo) => {
      const [version, layout, workload] = combo.split('/') as [string, Layout, Workload];
      return {
        name: combo,
        color: COLORS[workload],
        dash: DASHES[layout],
        opacity: opacity(version),
        points: runs
          .filter((r) => versionOf(r) === version && r.layout === layout && r.workload === workload && r.bound >= 2)
          .map((r) => [r.nodes, value(r)] as const),
      };
    });
  const legendHeight = Math.ceil(combos.length / 3) * 16;
  const height = 390 + legendHeight;
  const legend = combos.flatMap((combo, i) => {
    const [version, layout, workload] = combo.split('/') as [string, Layout, Workload];
    const x = 60 + (i % 3) * 250;
    const y = 392 + Math.floor(i / 3) * 16;
    return [
      `<line x1="${x}" x2="${x + 30}" y1="${y - 4}" y2="${y - 4}" stroke="${COLORS[workload]}" stroke-width="2" stroke-opacity="${opacity(version)}"${DASHES[layout] ? ` stroke-dasharray="${DASHES[layout]}"` : ''}/>`,
      `<text x="${x + 36}" y="${y}">${version}, ${layout}, ${workload}</text>`,
    ];
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="20" y="22" font-size="14">bench:dra ${result.date}: kube-scheduler ${versions.join(' (faded) and ')} on a ${result.machine.cpus}-core machine (fill or a window; runs with fewer than 2 binds left out)</text>`,
    ...panel(
      { left: 60, top: 60, width: 310, height: 270 },
      'Pods bound per second',
      sizes,
      series((r) => r.podsPerSecond),
      {
        value: UPSTREAM_THRESHOLD,
        label: `upstream threshold ${UPSTREAM_THRESHOLD}/s (500 Nodes)`,
      },
    ),
    ...panel(
      { left: 470, top: 60, width: 310, height: 270 },
      'scheduler CPU ms per Pod (log scale)',
      sizes,
      series(cpuPerPodMs),
      undefined,
      true,
    ),
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}
