// The pieces of `npm run bench:dra` that can be checked without a control plane: the slices of each
// layout, the workloads that fill the cards, the claims and Pods, and how its section and plot come
// out of the runs.
import { describe, expect, it } from 'vitest';

import {
  costCell,
  counterPrice,
  cpuPerPodMs,
  draMarkdown,
  draSvg,
  mergeRuns,
  spliceDraSection,
  type DraResult,
  type DraRun,
  versionOf,
} from '../../bench/dra/report.js';
import { bindStats, cpuAt, parseBinds } from '../../bench/dra/binds.js';
import {
  CARDS_PER_NODE,
  benchCards,
  benchDeviceClasses,
  claimObject,
  fillPlan,
  layoutSlices,
  nodeName,
  nodeObject,
  ourSlices,
  perCard,
  podObject,
  runPlan,
  workloadsOf,
} from '../../bench/dra/workloads.js';
import { desiredSlices, withGeneration, type ResourceSlice } from '../../src/dra/index.js';

type Spec = {
  devices?: { name: string; consumesCounters?: unknown[]; allowMultipleAllocations?: boolean }[];
  sharedCounters?: unknown[];
  pool: { resourceSliceCount: number };
};
const specOf = (slice: { spec: unknown }): Spec => slice.spec as Spec;

describe('bench:dra layouts', () => {
  it('ours is what the agent publishes for 8 cards: a counter slice and a device slice of 16 devices', () => {
    const node = nodeName(7);
    const slices = ourSlices(node);
    // The product's builder, generation 1 as after the agent's first publish.
    expect(slices).toEqual(withGeneration(desiredSlices({ name: node }, benchCards(node)).pools[0]?.slices ?? [], 1));
    expect(slices.map((s) => s.metadata.name)).toEqual([`${node}-nvidia-counters-0`, `${node}-nvidia-devices-0`]);
    expect(slices[0]?.spec.sharedCounters).toHaveLength(CARDS_PER_NODE);
    const devices = slices[1]?.spec.devices ?? [];
    expect(devices).toHaveLength(2 * CARDS_PER_NODE);
    expect(devices.every((d) => d.consumesCounters.length === 1)).toBe(true);
    expect(devices.filter((d) => d.allowMultipleAllocations === true)).toHaveLength(CARDS_PER_NODE);
    expect(layoutSlices('ours', node)).toEqual(slices);
  });

  it('the baseline is one slice of one plain device per card: our whole devices without counters', () => {
    const node = nodeName(3);
    const [slice, ...rest] = layoutSlices('baseline', node);
    expect(rest).toEqual([]);
    const spec = specOf(slice as { spec: unknown });
    expect(spec.sharedCounters).toBeUndefined();
    expect(spec.pool.resourceSliceCount).toBe(1);
    expect(spec.devices?.map((d) => d.name)).toEqual(Array.from({ length: CARDS_PER_NODE }, (_, i) => `card-${i}`));
    expect(spec.devices?.some((d) => d.consumesCounters !== undefined || d.allowMultipleAllocations)).toBe(false);
    // Same attributes and capacities as our whole device, so the same DeviceClass selects it.
    const ours = (ourSlices(node)[1] as ResourceSlice).spec.devices?.find((d) => d.name === 'card-0');
    const { consumesCounters: _c, ...plain } = ours as NonNullable<typeof ours>;
    expect(spec.devices?.[0]).toEqual(plain);
  });

  it('no-counters keeps both devices of every card and drops the counter slice', () => {
    const spec = specOf(layoutSlices('no-counters', nodeName(0))[0] as { spec: unknown });
    expect(spec.devices).toHaveLength(2 * CARDS_PER_NODE);
    expect(spec.devices?.some((d) => d.consumesCounters !== undefined)).toBe(false);
  });

  it("the DeviceClasses are the chain's for the bench card's manufacturer and model", () => {
    const names = benchDeviceClasses().map((c) => c.metadata.name);
    expect(names).toContain('gpustack-nvidia');
    expect(names).toContain('gpustack-nvidia-shared');
    expect(names).toHaveLength(4);
  });
});

describe('bench:dra workloads', () => {
  it('fill every card exactly: 8 whole, 80 default shares, 24 shares of 20Gi per Node', () => {
    expect(perCard('whole')).toBe(1);
    expect(perCard('share')).toBe(10);
    expect(perCard('share-20gi')).toBe(3); // 81559 MiB / 20480 MiB
    expect(fillPlan('whole', 5)).toHaveLength(40);
    expect(fillPlan('share', 5)).toHaveLength(400);
    expect(fillPlan('share-20gi', 5)).toHaveLength(120);
  });

  it('mixed: half the cards whole, half in shares, one whole to every ten shares from the start', () => {
    const plan = fillPlan('mixed', 2);
    expect(plan.filter((k) => k === 'whole')).toHaveLength(8);
    expect(plan.filter((k) => k === 'share')).toHaveLength(80);
    expect(plan.slice(0, 12)).toEqual(['whole', ...Array.from({ length: 10 }, () => 'share'), 'whole']);
  });

  it('a run is the fill when it fits the window, else the fill cut to the window', () => {
    expect(runPlan('whole', 50, 4000)).toEqual({ kinds: fillPlan('whole', 50), fill: true });
    const cut = runPlan('share', 5000, 4000);
    expect(cut.fill).toBe(false);
    expect(cut.kinds).toHaveLength(4000);
  });

  it('the baseline serves whole cards only', () => {
    expect(workloadsOf('baseline')).toEqual(['whole']);
    expect(workloadsOf('ours')).toEqual(['whole', 'share', 'share-20gi', 'mixed']);
  });

  it('claims name the whole or shared class; only the 20Gi share asks capacity; the Pod uses its claim', () => {
    const request = (kind: 'whole' | 'share' | 'share-20gi') =>
      (claimObject('c', 'ns', kind).spec as { devices: { requests: { exactly: Record<string, unknown> }[] } }).devices
        .requests[0]?.exactly;
    expect(request('whole')).toEqual({ deviceClassName: 'gpustack-nvidia', allocationMode: 'ExactCount', count: 1 });
    expect(request('share')?.['deviceClassName']).toBe('gpustack-nvidia-shared');
    expect(request('share')?.['capacity']).toBeUndefined();
    expect(request('share-20gi')?.['capacity']).toEqual({ requests: { memory: '20480Mi' } });
    expect(podObject('p', 'ns', 'c').spec['resourceClaims']).toEqual([{ name: 'card', resourceClaimName: 'c' }]);
  });

  it('a Node has room for every default share of its cards and is Ready', () => {
    const node = nodeObject('n', '2026-01-01T00:00:00Z') as { status: { allocatable: { pods: string } } };
    expect(Number(node.status.allocatable.pods)).toBeGreaterThanOrEqual(CARDS_PER_NODE * perCard('share'));
  });
});

function run(overrides: Partial<DraRun>): DraRun {
  return {
    nodes: 50,
    layout: 'ours',
    workload: 'whole',
    fill: true,
    created: 400,
    bound: 400,
    createSeconds: 3,
    schedulerStartupSeconds: 2,
    spanSeconds: 10,
    podsPerSecond: 39.9,
    secondHalfPodsPerSecond: 40,
    sampleMeanPodsPerSecond: 40,
    meanEvaluatedNodes: 50,
    schedulerCpuSeconds: 8,
    schedulerCpuSecondsTotal: 9,
    schedulerRssMB: 100,
    schedulerPeakRssMB: 110,
    cpu: { 'kube-scheduler': 8, 'kube-apiserver': 5, etcd: 1 },
    schedulerMetrics: { 'attempts scheduled': 400, 'attempts unschedulable': 3 },
    loadAverageStart: [2, 2, 2],
    loadAverageEnd: [3, 2, 2],
    availableMBStart: 20_000,
    availableMBEnd: 19_000,
    ...overrides,
  };
}

describe('bench:dra report', () => {
  const result = (runs: DraRun[]): DraResult => ({
    date: '2026-12-03',
    commit: 'abc1234',
    durationSeconds: 600,
    machine: { cpus: 2, cpuModel: 'AMD EPYC', memoryMB: 24_000, node: 'v24' },
    cardsPerNode: 8,
    window: 4000,
    schedulerQps: 5000,
    schedulerBurst: 5000,
    maxSeconds: 240,
    runs,
  });

  it('merges runs by scheduler version, size, layout and workload, the newer one winning, in table order', () => {
    const merged = mergeRuns(
      [run({ nodes: 500 }), run({ podsPerSecond: 1 })],
      [
        run({ podsPerSecond: 2 }),
        run({ layout: 'baseline' }),
        run({ kubeScheduler: 'v1.37.2', podsPerSecond: 3 }),
        run({ kubeScheduler: 'v1.36.3', nodes: 500, podsPerSecond: 4 }),
      ],
    );
    // A run without a version is v1.36.3's (recorded before versions were): the same key.
    expect(merged.map((r) => [versionOf(r), r.nodes, r.layout, r.podsPerSecond])).toEqual([
      ['v1.36.3', 50, 'ours', 2],
      ['v1.36.3', 50, 'baseline', 39.9],
      ['v1.36.3', 500, 'ours', 4],
      ['v1.37.2', 50, 'ours', 3],
    ]);
  });

  it('prices the counter model per size as ours over the baseline for whole cards', () => {
    expect(cpuPerPodMs(run({}))).toBe(20);
    const price = counterPrice([
      run({}),
      run({ layout: 'baseline', schedulerCpuSeconds: 2, podsPerSecond: 79.8 }),
      run({ nodes: 500 }),
    ]);
    expect(price).toEqual([{ nodes: 50, cpuRatio: 4, rateRatio: 0.5 }]);
  });

  it('writes a section with a row per run, the target and the price, spliced in place of the last one', () => {
    const section = draMarkdown(result([run({}), run({ layout: 'baseline', schedulerCpuSeconds: 2 })]));
    expect(section.startsWith('<!-- bench:dra start -->')).toBe(true);
    expect(section).toContain('| v1.36.3 | 50 | ours | whole | fill | 400 / 400 | 50 | **39.9** |');
    expect(section).toContain('unschedulable 3');
    expect(section).toContain(
      'whole cards at 50 Nodes: ours 39.9 Pods/s, baseline 39.9 Pods/s (5,000 not measured yet).',
    );
    expect(section).toContain('| 50 | 4.00× |');
    expect(section).toContain('| Nodes | ours | baseline |');
    expect(section).toContain('| 50 | 20.0 (39.9) | 5.0 (39.9) |');
    // Above 2× the section says why.
    expect(section).toContain('**Why ours costs more**');
    expect(draMarkdown(result([run({}), run({ layout: 'baseline', schedulerCpuSeconds: 5 })]))).not.toContain(
      'Why ours',
    );
    const file = `# Results\n\n${section}\n\n<!-- bench:cluster start -->x<!-- bench:cluster end -->\n`;
    const again = spliceDraSection(file, draMarkdown(result([run({ podsPerSecond: 70, nodes: 5000 })])));
    expect(again).toContain('whole cards at 5,000 Nodes: ours 70.0 Pods/s — met by ours.');
    expect(again).not.toContain('39.9');
    expect(again).toContain('<!-- bench:cluster start -->x');
    expect(spliceDraSection('# Results\n', section)).toBe(`# Results\n\n${section}\n`);
  });

  it('plots a line per layout and workload against the sizes, with the upstream threshold', () => {
    const svg = draSvg(result([run({}), run({ nodes: 500 }), run({ workload: 'share' })]));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(4); // 2 combos × 2 panels
    expect(svg).toContain('upstream threshold 64/s');
  });

  it('keeps each scheduler version apart: its own target, price and why, a faded line for the older one', () => {
    const newer = { kubeScheduler: 'v1.37.2' };
    const section = draMarkdown(
      result([
        run({}),
        run({ layout: 'baseline', schedulerCpuSeconds: 2 }),
        run({ ...newer, schedulerCpuSeconds: 2.4 }),
        run({ ...newer, layout: 'baseline', schedulerCpuSeconds: 2 }),
      ]),
    );
    expect(section).toContain('| v1.37.2 | 50 | ours | whole | fill |');
    const older = section.slice(
      section.indexOf('**kube-scheduler v1.36.3**'),
      section.indexOf('**kube-scheduler v1.37.2**'),
    );
    const later = section.slice(section.indexOf('**kube-scheduler v1.37.2**'));
    expect(older).toContain('| 50 | 4.00× |');
    expect(older).toContain('**Why ours costs more**');
    expect(later).toContain('| 50 | 1.20× |');
    expect(later).not.toContain('Why ours');
    // From 1.37 the section says what upstream changed; 1.36's part does not.
    expect(later).toContain('**What v1.37.2 changed**');
    expect(older).not.toContain('changed**');
    const svg = draSvg(result([run({}), run({ ...newer })]));
    expect(svg).toContain('kube-scheduler v1.36.3 (faded) and v1.37.2');
    expect(svg.match(/stroke-opacity="0.4"/g)?.length).toBeGreaterThan(0);
    expect(svg).toContain('v1.37.2, ours, whole');
  });
});

describe('bench:dra binds', () => {
  const line = (time: string, pod: string, evaluated = 50): string =>
    `I1203 ${time}   28607 schedule_one.go:481] "Successfully bound pod to node" pod="bench-whole/${pod}" node="bench-00003" evaluatedNodes=${evaluated} feasibleNodes=${evaluated}`;

  it('reads the binds kube-scheduler logs at -v=2 with their own time stamps, nothing else', () => {
    const log = [
      'I1203 16:43:24.289660   28607 framework.go:502] "the scheduler starts to work with those plugins"',
      line('16:43:25.322398', 'p-000330'),
      line('16:43:25.822398', 'p-000189', 30),
      'E1203 16:44:07.100380   28607 run.go:72] "command failed" err="finished without leader elect"',
    ].join('\n');
    const binds = parseBinds(log, 2026);
    expect(binds.map((b) => b.pod)).toEqual(['bench-whole/p-000330', 'bench-whole/p-000189']);
    expect(binds[0]?.at).toBe(new Date(2026, 11, 3, 16, 43, 25).getTime() + 322.398);
    expect((binds[1]?.at ?? 0) - (binds[0]?.at ?? 0)).toBeCloseTo(500, 6);
    expect(binds[1]?.evaluatedNodes).toBe(30);
  });

  it('rates: (bound − 1) over the span, the second half, and per-second samples', () => {
    // 11 binds 100 ms apart: 1 s span, 10/s; the second half from the 6th bind.
    const at = (i: number): string => `16:00:0${Math.floor(i / 10)}.${String((i % 10) * 100_000).padStart(6, '0')}`;
    const binds = parseBinds(Array.from({ length: 11 }, (_, i) => line(at(i), `p-${i}`, 40 + i)).join('\n'), 2026);
    const stats = bindStats(binds);
    expect(stats.bound).toBe(11);
    expect(stats.spanSeconds).toBeCloseTo(1, 6);
    expect(stats.podsPerSecond).toBeCloseTo(10, 6);
    expect(stats.secondHalfPodsPerSecond).toBeCloseTo(10, 6);
    expect(stats.sampleMeanPodsPerSecond).toBe(10);
    expect(stats.meanEvaluatedNodes).toBe(45);
    expect(bindStats([])).toMatchObject({ bound: 0, podsPerSecond: 0, spanSeconds: 0 });
  });

  it('CPU seconds at a moment: linear between the samples around it, the nearest end outside them', () => {
    const samples = [
      { at: 1000, cpu: { s: 1 } },
      { at: 3000, cpu: { s: 5 } },
    ];
    expect(cpuAt(samples, 2000)).toEqual({ s: 3 });
    expect(cpuAt(samples, 500)).toEqual({ s: 1 });
    expect(cpuAt(samples, 9000)).toEqual({ s: 5 });
  });
});

describe('bench:dra shared-only layout', () => {
  it('one multi-allocatable device per card, no counters; a whole card asks its whole capacity of the shared class', () => {
    const spec = specOf(layoutSlices('shared-only', nodeName(0))[0] as { spec: unknown });
    expect(spec.devices?.map((d) => d.name)).toEqual(
      Array.from({ length: CARDS_PER_NODE }, (_, i) => `card-${i}-shared`),
    );
    expect(spec.devices?.every((d) => d.allowMultipleAllocations === true && d.consumesCounters === undefined)).toBe(
      true,
    );
    const exactly = (
      claimObject('c', 'ns', 'whole', 'shared-only').spec as {
        devices: {
          requests: { exactly: { deviceClassName: string; capacity?: { requests: Record<string, string> } } }[];
        };
      }
    ).devices.requests[0]?.exactly;
    expect(exactly?.deviceClassName).toBe('gpustack-nvidia-shared');
    expect(exactly?.capacity?.requests).toEqual({ memory: '81559Mi', cores: '100', units: '1600000' });
  });
});

describe('bench:dra report of a run with fewer than two binds', () => {
  it('gives no rate but an upper bound and the CPU of the whole run', () => {
    const section = draMarkdown({
      date: '2026-12-03',
      commit: 'abc1234',
      durationSeconds: 600,
      machine: { cpus: 2, cpuModel: 'AMD EPYC', memoryMB: 24_000, node: 'v24' },
      cardsPerNode: 8,
      window: 40,
      schedulerQps: 5000,
      schedulerBurst: 5000,
      maxSeconds: 240,
      runs: [
        run({
          nodes: 5000,
          fill: false,
          created: 40,
          bound: 1,
          runSeconds: 400,
          spanSeconds: 0,
          podsPerSecond: 0,
          schedulerCpuSeconds: 0,
          schedulerCpuSecondsTotal: 350,
        }),
      ],
    });
    expect(section).toContain(
      '| 5,000 | ours | whole | first 40 | 1 / 40 | 50 | ≤ 0.00 | — | 350.0 (whole run) | ≥ 350000 |',
    );
    expect(section).toContain('ours 1 bound — **not met**.');
    expect(costCell(run({ bound: 0, schedulerCpuSecondsTotal: 132.67 }))).toBe('> 132,670 (none bound)');
    expect(costCell(run({}))).toBe('20.0 (39.9)');
  });
});
