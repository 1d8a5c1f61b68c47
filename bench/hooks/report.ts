/** @module The bench's outputs: the results JSON, the RESULTS.md tables and the cost-per-node plot (hand-written SVG). */
import type { DetectBench } from '../detect/run.js';
import { SERVER_V8_FLAGS } from '../shared/child.js';
import type { LoadResult } from './load.js';
import type { HookName } from '../shared/cluster.js';
import type { HookTiming, SizeResult } from './measure-size.js';
import type { ResultsHeader } from '../shared/results-header.js';
import { round, type Summary } from '../shared/stats.js';

export interface BenchResults extends ResultsHeader {
  /** A fixed CPU task (JSON parse + stringify of the 100-node chain request, ~2.4 MB) timed repeatedly at the start and at the end. */
  readonly noise: { readonly start: Summary; readonly end: Summary };
  readonly sizes: readonly SizeResult[];
  readonly load: readonly LoadResult[];
  readonly detect: DetectBench;
  readonly targets: readonly Target[];
}

export interface Target {
  readonly name: string;
  readonly limit: string;
  readonly measured: string;
  readonly met: boolean;
}

export const TARGET_NODES = 5000;
const MB = 1024 * 1024;
const CHAIN: HookName = 'scheduling-chain/sync';

const ratio = (a: Summary, b: Summary): number => a.median / b.median;
/** The small hooks are judged in process at the size of the load test's reference cluster. */
const SMALL_HOOK_NODES = 100;
const SMALL_HOOKS = ['node-profile/sync', 'instance-type/sync'] as const satisfies readonly HookName[];
const fixed = (value: number, digits = 2): string => value.toFixed(digits);
const mb = (bytes: number): string => (bytes / MB).toFixed(1);
const perNodeUs = (size: SizeResult, hook: HookName, key: 'floorMs' | 'inProcessMs' | 'httpMs'): number =>
  (size.hooks[hook][key].median * 1000) / size.nodes;
/** What the chain hook costs above the floor, per node (µs). */
const aboveFloorUs = (size: SizeResult): number =>
  ((size.hooks[CHAIN].inProcessMs.median - size.hooks[CHAIN].floorMs.median) * 1000) / size.nodes;
const cpuRatio = (h: HookTiming, mode: 'inProcess' | 'http'): number => h.cpuMs[mode].median / h.cpuMs.floor.median;

/** The targets, judged on this run. */
export function judge(sizes: readonly SizeResult[], load: readonly LoadResult[]): Target[] {
  const targets: Target[] = [];
  const at = sizes.find((s) => s.nodes === TARGET_NODES);
  if (at) {
    const chain = at.hooks[CHAIN];
    const inProcess = ratio(chain.inProcessMs, chain.floorMs);
    const http = ratio(chain.httpMs, chain.floorMs);
    const budget = 4 * at.memory.requestBytes + 150 * MB;
    targets.push(
      {
        name: `in-process / floor at ${TARGET_NODES} nodes`,
        limit: '≤ 1.5',
        measured: fixed(inProcess),
        met: inProcess <= 1.5,
      },
      { name: `HTTP / floor at ${TARGET_NODES} nodes`, limit: '≤ 1.8', measured: fixed(http), met: http <= 1.8 },
      {
        name: `peak RSS at ${TARGET_NODES} nodes`,
        limit: `≤ 4 × body + 150 MB = ${mb(budget)} MB`,
        measured: `${mb(at.memory.peakRssBytes)} MB`,
        met: at.memory.peakRssBytes <= budget,
      },
    );
  }
  const flat = sizes.filter((s) => s.nodes >= 1000);
  if (flat.length >= 2) {
    const spreadOf = (costs: number[]) => Math.max(...costs) / Math.min(...costs) - 1;
    const costs = flat.map((s) => perNodeUs(s, CHAIN, 'inProcessMs'));
    const above = flat.map((s) => aboveFloorUs(s));
    const floors = flat.map((s) => perNodeUs(s, CHAIN, 'floorMs'));
    const range = `from ${flat[0]?.nodes} to ${flat.at(-1)?.nodes} nodes`;
    targets.push(
      {
        name: `in-process cost per node flat ${range}`,
        limit: '≤ 25 % spread',
        measured: `${fixed(spreadOf(costs) * 100, 0)} % (${costs.map((c) => fixed(c, 0)).join(' / ')} µs)`,
        met: spreadOf(costs) <= 0.25,
      },
      {
        name: `context: the floor's own cost per node ${range}`,
        limit: '—',
        measured: `${fixed(spreadOf(floors) * 100, 0)} % (${floors.map((c) => fixed(c, 0)).join(' / ')} µs)`,
        met: spreadOf(floors) <= 0.25,
      },
      {
        name: `context: in-process minus floor, per node ${range}`,
        limit: '—',
        measured: `${fixed(spreadOf(above) * 100, 0)} % (${above.map((c) => fixed(c, 0)).join(' / ')} µs)`,
        met: spreadOf(above) <= 0.25,
      },
    );
  }
  const small = sizes.find((s) => s.nodes === SMALL_HOOK_NODES);
  if (small) {
    for (const hook of SMALL_HOOKS) {
      const inProcess = ratio(small.hooks[hook].inProcessMs, small.hooks[hook].floorMs);
      targets.push({
        name: `${hook} in-process / floor at ${SMALL_HOOK_NODES} nodes`,
        limit: '≤ 2',
        measured: fixed(inProcess),
        met: inProcess <= 2,
      });
    }
  }
  for (const result of load) {
    targets.push({
      name: `${result.name}: rps / floor route rps (parses the same body, answers the same response)`,
      limit: '≥ 0.8',
      measured: fixed(result.ratio),
      met: result.ratio >= 0.8,
    });
    targets.push({
      name: `${result.name}: rps / rps of a bare route that answers {} unread (context)`,
      limit: '—',
      measured: fixed(result.ratioBare),
      met: true,
    });
  }
  return targets;
}

function hookRows(sizes: readonly SizeResult[], hook: HookName): string[] {
  return sizes.map((s) => {
    const h = s.hooks[hook];
    const cv = Math.max(h.floorMs.cv, h.inProcessMs.cv, h.httpMs.cv);
    return (
      `| ${s.nodes.toLocaleString('en-US')} | ${mb(h.requestBytes)} | ${round(h.floorMs.median)} | ${round(h.inProcessMs.median)} | ${round(h.httpMs.median)} ` +
      `| ${fixed(ratio(h.inProcessMs, h.floorMs))} | ${fixed(ratio(h.httpMs, h.floorMs))} | ${fixed(cpuRatio(h, 'inProcess'))} / ${fixed(cpuRatio(h, 'http'))} ` +
      `| ${round(perNodeUs(s, hook, 'inProcessMs'))} | ${fixed(cv * 100, 0)} % | ${h.floorMs.n} × ${h.batch} |`
    );
  });
}

const HOOK_HEADER = [
  '| nodes | body MB | floor ms | in-process ms | HTTP ms | in-process / floor | HTTP / floor | same in CPU time (in-process / HTTP) | in-process µs / node | max CV | samples × calls |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
];

/** The Markdown tables of one run (also used for the README's Performance section). */
export function tables(results: BenchResults): string {
  const lines: string[] = [];
  lines.push(
    '**Targets** (scheduling-chain sync unless named):',
    '',
    '| target | limit | measured | met |',
    '|---|---|---|---|',
  );
  for (const t of results.targets)
    lines.push(`| ${t.name} | ${t.limit} | ${t.measured} | ${t.met ? 'yes' : '**no**'} |`);
  lines.push(
    '',
    '**scheduling-chain sync** (every NodeProfile in `related`; medians):',
    '',
    ...HOOK_HEADER,
    ...hookRows(results.sizes, CHAIN),
  );
  lines.push(
    '',
    '**instance-type sync** (largest device pool; namespaces = 20 + nodes / 50):',
    '',
    ...HOOK_HEADER,
    ...hookRows(results.sizes, 'instance-type/sync'),
  );
  lines.push(
    '',
    '**node-profile sync** (one 8 × H100 Node, the same at every size):',
    '',
    ...HOOK_HEADER,
    ...hookRows(results.sizes, 'node-profile/sync'),
  );
  lines.push(
    '',
    '**Memory** (a separate server process answers every hook once and the chain twice):',
    '',
    '| nodes | body MB | idle RSS MB | peak RSS MB | budget 4 × body + 150 MB | peak V8 heap MB |',
    '|---:|---:|---:|---:|---:|---:|',
  );
  for (const s of results.sizes) {
    const m = s.memory;
    lines.push(
      `| ${s.nodes.toLocaleString('en-US')} | ${mb(m.requestBytes)} | ${mb(m.idleRssBytes)} | ${mb(m.peakRssBytes)} | ${mb(4 * m.requestBytes + 150 * MB)} | ${mb(m.peakHeapBytes)} |`,
    );
  }
  if (results.load.length > 0) {
    lines.push(
      '',
      `**Small hooks under load** (autocannon, keep-alive, ${results.load[0]?.connections} connection(s), ${results.load[0]?.rounds} × ${results.load[0]?.seconds} s alternating with the bare and floor routes; ratios are medians of the per-round ratios):`,
      '',
      '| hook | body KB | hook rps | floor route rps (parse + same response) | hook / floor | bare route rps (`{}` unread) | hook / bare | hook p99 ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const l of results.load) {
      lines.push(
        `| ${l.name} | ${(l.requestBytes / 1024).toFixed(1)} | ${round(l.hookRps.median)} | ${round(l.floorRps.median)} | ${fixed(l.ratio)} ` +
          `| ${round(l.bareRps.median)} | ${fixed(l.ratioBare)} | ${round(l.hookLatencyP99Ms)} |`,
      );
    }
  }
  const d = results.detect;
  lines.push('', '**Agent detection** (`detect()` against the fake NVML with 8 cards):', '');
  if (d.ok) {
    lines.push(
      '| cards | calls | median ms | p99 ms | CV | addon load ms (median of ' + d.loadRuns + ' processes) |',
      '|---:|---:|---:|---:|---:|---:|',
      `| ${d.cards} | ${d.calls} | ${round(d.medianMs)} | ${round(d.p99Ms)} | ${fixed(d.cv * 100, 0)} % | ${round(d.loadMs)} |`,
    );
    if (d.isolated)
      lines.push(
        '',
        `In a child process, as the agent and \`detect\` run it (\`detectIsolated()\` of all nine manufacturers, from \`dist/\`,` +
          ` ${d.isolated.calls} calls): median ${round(d.isolated.medianMs)} ms, CPU ${round(d.isolated.cpuMs)} ms per call` +
          ' (this process and the child).',
      );
  } else {
    lines.push(`skipped: ${d.skipped}`);
  }
  return lines.join('\n');
}

const FLOOR_NOTE =
  'floor = `JSON.parse` of the request text + `JSON.stringify` of the response the hook returned; in-process =' +
  ' `createApp().request()` with the body as a one-chunk byte stream (body read, parse, validation, sync, serialisation);' +
  ' HTTP = the same request to `serve()` on 127.0.0.1 from a keep-alive client in the same process; both with the' +
  ` server's V8 flags (\`${SERVER_V8_FLAGS.join(' ')}\`, the NODE_OPTIONS of its Deployment).` +
  " Each sample starts after a forced GC, so the garbage collection that the floor's `JSON.parse` sets off is paid by whatever" +
  " allocates next: inside the hook's sample, outside the floor's. The ratios are therefore upper bounds on the hooks' own cost.";

/** The README's Performance section: the headline numbers and how to reproduce them. */
export function readmeSection(results: BenchResults): string {
  const at = results.sizes.find((s) => s.nodes === TARGET_NODES);
  const chain = at?.hooks[CHAIN];
  const m = results.machine;
  return [
    '## Performance',
    '',
    '`npm run bench` sends the scheduling-chain hook every NodeProfile in `related` (what the chain reads of each managed' +
      ` Node; the Node itself, ~${at ? Math.round(at.nodeBytes / 1024) : 20} KB of NFD labels, images and managedFields, stays out):` +
      ' what Metacontroller sent on every sync before node shards, and since then the worst case, profiles in no shard yet (an upgrade).' +
      ` At 5,000 Nodes the request is ${chain ? mb(chain.requestBytes) : '~11'} MB. The floor for any hook is parsing that JSON and writing the answer;` +
      ' `npm run bench` measures how far above it the hooks are, from 10 to 10,000 nodes.',
    '',
    `Run of ${results.date} (commit \`${results.commit}\`) on ${m.cpus} × ${m.cpuModel}, Node ${m.node}, shared machine` +
      ` (load average ${m.loadAverageStart[0]?.toFixed(1)} at the start):`,
    '',
    tables(results).split('\n\n**instance-type sync**')[0] ?? '',
    '',
    FLOOR_NOTE,
    '',
    'Reproduce: `npm run bench` (builds, then runs in about ' +
      `${Math.ceil(results.durationSeconds / 60)} minutes on 2 cores; not part of \`npm test\`). It writes` +
      ' `bench/results/<date>.json`, `bench/RESULTS.md` (every table, memory, the small hooks under load, agent detection) and' +
      ' `bench/results/cost-per-node.svg`. `node --expose-gc --import tsx bench/hooks/phases.ts 5000` splits one hook into its phases.',
    '',
  ].join('\n');
}

export function resultsMarkdown(results: BenchResults): string {
  const m = results.machine;
  const noise = results.noise;
  return [
    `# Benchmark results, ${results.date}`,
    '',
    `Commit \`${results.commit}\`, \`npm run bench\` in ${Math.round(results.durationSeconds / 60)} min ${Math.round(results.durationSeconds % 60)} s.`,
    `Machine: ${m.cpus} × ${m.cpuModel}, ${mb(m.memoryBytes)} MB, Node ${m.node} (${m.platform}); shared with other work — load average` +
      ` ${m.loadAverageStart.map((l) => l.toFixed(2)).join(' / ')} (1/5/15 min) at the start, ${m.loadAverageEnd.map((l) => l.toFixed(2)).join(' / ')} at the end.`,
    `Noise: a fixed task (JSON parse + stringify of the 2.4 MB request of the 100-node chain) has a coefficient of variation of ${fixed(noise.start.cv * 100, 0)} % at the start` +
      ` (median ${round(noise.start.median)} ms) and ${fixed(noise.end.cv * 100, 0)} % at the end (median ${round(noise.end.median)} ms); differences` +
      ' smaller than that are not signal.',
    '',
    `${FLOOR_NOTE} Medians of the samples after warm-up; each sample of a small hook times a batch of calls; CPU time is the` +
      " process's (all threads), steadier than wall time on a busy machine.",
    '',
    tables(results),
    '',
    '![cost per node against cluster size](cost-per-node.svg)',
    '',
  ].join('\n');
}

/** Log-log plot of µs per node (scheduling-chain sync) against nodes: floor, in-process and HTTP. */
export function costPerNodeSvg(sizes: readonly SizeResult[]): string {
  const width = 640;
  const height = 400;
  const pad = { left: 70, right: 150, top: 30, bottom: 50 };
  const series = [
    { name: 'floor', key: 'floorMs', color: '#777777' },
    { name: 'in-process', key: 'inProcessMs', color: '#1f77b4' },
    { name: 'HTTP', key: 'httpMs', color: '#d62728' },
  ] as const;
  const xs = sizes.map((s) => s.nodes);
  const ys = sizes.flatMap((s) => series.map((k) => perNodeUs(s, CHAIN, k.key)));
  const [x0, x1] = [Math.log10(Math.min(...xs)), Math.log10(Math.max(...xs))];
  const [y0, y1] = [Math.floor(Math.log10(Math.min(...ys))), Math.ceil(Math.log10(Math.max(...ys)))];
  const px = (x: number) => pad.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * (width - pad.left - pad.right);
  const py = (y: number) =>
    height - pad.bottom - ((Math.log10(y) - y0) / (y1 - y0 || 1)) * (height - pad.top - pad.bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${pad.left}" y="18" font-size="14">scheduling-chain sync: cost per node (µs, log) against nodes (log)</text>`,
  ];
  for (let e = y0; e <= y1; e++) {
    for (const m of e < y1 ? [1, 2, 5] : [1]) {
      const v = m * 10 ** e;
      out.push(
        `<line x1="${pad.left}" x2="${width - pad.right}" y1="${py(v).toFixed(1)}" y2="${py(v).toFixed(1)}" stroke="${m === 1 ? '#ccc' : '#eee'}"/>`,
      );
      if (m === 1 || y1 - y0 <= 2)
        out.push(`<text x="${pad.left - 8}" y="${(py(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
    }
  }
  for (const x of xs) {
    out.push(
      `<line x1="${px(x).toFixed(1)}" x2="${px(x).toFixed(1)}" y1="${pad.top}" y2="${height - pad.bottom}" stroke="#eee"/>`,
      `<text x="${px(x).toFixed(1)}" y="${height - pad.bottom + 18}" text-anchor="middle">${x.toLocaleString('en-US')}</text>`,
    );
  }
  out.push(
    `<text x="${(pad.left + width - pad.right) / 2}" y="${height - 10}" text-anchor="middle">nodes</text>`,
    `<text x="16" y="${(pad.top + height - pad.bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(pad.top + height - pad.bottom) / 2})">µs per node</text>`,
  );
  series.forEach((s, i) => {
    const points = sizes.map((size) => `${px(size.nodes).toFixed(1)},${py(perNodeUs(size, CHAIN, s.key)).toFixed(1)}`);
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${points.join(' ')}"/>`);
    for (const p of points) {
      const [cx, cy] = p.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${s.color}"/>`);
    }
    const ly = pad.top + 20 + i * 20;
    out.push(
      `<line x1="${width - pad.right + 15}" x2="${width - pad.right + 40}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"/>`,
      `<text x="${width - pad.right + 46}" y="${ly + 4}">${s.name}</text>`,
    );
  });
  out.push('</svg>', '');
  return out.join('\n');
}
