import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  CARDS_PER_COUNTER_SLICE,
  CARDS_PER_DEVICE_SLICE,
  LIMITS,
  ResourceSliceSchema,
  desiredSlices,
  sliceName,
  withGeneration,
  type ResourceSlice,
  type SliceCard,
  type SliceDevice,
} from '../../src/dra/index.js';
import { isDnsSubdomain, type ManufacturerName } from '../../src/k8s/index.js';
import { constructDeviceLabels } from '../../src/nodefeature/index.js';

const NODE = { name: 'gpu-node-1', uid: '7f1c2a3e-0000-4000-8000-000000000001' };

/** One H200 as NVML reports it. */
function h200(index: number, overrides: Partial<SliceCard> = {}): SliceCard {
  return {
    manufacturer: 'nvidia',
    index,
    uuid: `GPU-1d2f7c3a-8e0b-4c55-9a1e-00000000000${index % 10}`,
    product: 'NVIDIA H200',
    memoryMiB: 143771,
    family: 'Hopper',
    computeCapability: '9.0',
    driverVersion: '570.124.06',
    pciBusId: `0000:${(0x18 + index * 0x10).toString(16).padStart(2, '0')}:00.0`,
    numaNode: index < 4 ? 0 : 1,
    ...overrides,
  };
}

function devices(slices: readonly ResourceSlice[]): SliceDevice[] {
  return slices.flatMap((s) => s.spec.devices ?? []);
}
function device(slices: readonly ResourceSlice[], name: string): SliceDevice {
  const found = devices(slices).find((d) => d.name === name);
  if (!found) throw new Error(`no device ${name}`);
  return found;
}

describe('desiredSlices', () => {
  it('one card: a counter slice and a device slice, whole and shared devices consuming the whole card', () => {
    const { pools, problems } = desiredSlices(NODE, [h200(0)]);
    expect(problems).toEqual([]);
    expect(pools.map((p) => p.driver)).toEqual(['nvidia.gpustack.ai']);
    const slices = pools[0]?.slices ?? [];
    expect(slices.map((s) => s.metadata.name)).toEqual(['gpu-node-1-nvidia-counters-0', 'gpu-node-1-nvidia-devices-0']);
    for (const slice of slices) {
      expect(slice.spec).toMatchObject({
        driver: 'nvidia.gpustack.ai',
        nodeName: 'gpu-node-1',
        pool: { name: 'gpu-node-1', generation: 0, resourceSliceCount: 2 },
      });
      expect(slice.metadata.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'Node', name: 'gpu-node-1', uid: NODE.uid, controller: true },
      ]);
    }
    expect(slices[0]?.spec.sharedCounters).toEqual([
      { name: 'card-0-counters', counters: { memory: { value: '143771Mi' }, units: { value: '1600k' } } },
    ]);
    expect(slices[0]?.spec.devices).toBeUndefined();
    const whole = device(slices, 'card-0');
    const shared = device(slices, 'card-0-shared');
    expect(whole.allowMultipleAllocations).toBeUndefined();
    expect(whole.attributes['mode']).toEqual({ string: 'whole' });
    expect(whole.capacity).toEqual({
      memory: { value: '143771Mi' },
      cores: { value: '100' },
      units: { value: '1600k' },
    });
    expect(shared.allowMultipleAllocations).toBe(true);
    expect(shared.attributes['mode']).toEqual({ string: 'shared' });
    // The example of docs/dra.md#resourceslices: 14377Mi / 160000 / 10 on a 143771 MiB card.
    expect(shared.capacity).toEqual({
      memory: { value: '143771Mi', requestPolicy: { default: '14377Mi', validRange: { min: '1Gi' } } },
      cores: { value: '100', requestPolicy: { default: '10', validRange: { min: '1' } } },
      units: { value: '1600k', requestPolicy: { default: '160k', validRange: { min: '1' } } },
    });
    for (const d of [whole, shared])
      expect(d.consumesCounters).toEqual([
        { counterSet: 'card-0-counters', counters: { memory: { value: '143771Mi' }, units: { value: '1600k' } } },
      ]);
  });

  it('attributes: the aKey as the labels compute it, versions where semver-like, ints for index and NUMA node', () => {
    const { pools } = desiredSlices(NODE, [h200(3, { driverVersion: '550.54.15' })]);
    const attributes = device(pools[0]?.slices ?? [], 'card-3').attributes;
    expect(attributes).toEqual({
      manufacturer: { string: 'nvidia' },
      productKey: { string: 'nvidia-h200' },
      productName: { string: 'NVIDIA H200' },
      family: { string: 'Hopper' },
      computeCapability: { version: '9.0.0' },
      driverVersion: { version: '550.54.15' },
      uuid: { string: 'GPU-1d2f7c3a-8e0b-4c55-9a1e-000000000003' },
      index: { int: 3 },
      pciBusID: { string: '0000:48:00.0' },
      numaNode: { int: 0 },
      mode: { string: 'whole' },
    });
    // A leading zero is not semver: NVIDIA's 570.124.06 stays a string.
    expect(device(desiredSlices(NODE, [h200(0)]).pools[0]?.slices ?? [], 'card-0').attributes['driverVersion']).toEqual(
      { string: '570.124.06' },
    );
    // The key is the labels' own: the `.count` label of that key counts the card.
    const labels = constructDeviceLabels([{ manufacturer: 'nvidia', product: 'NVIDIA H200', memoryMiB: 143771 }]);
    expect(labels['acceleratable.feature.gpustack.ai/nvidia-h200.count']).toBe('1');
  });

  it('the aKey follows the labels where two memory sizes of one product get a memory suffix', () => {
    const cards = [h200(0), h200(1, { memoryMiB: 97871 })];
    const { pools } = desiredSlices(NODE, cards);
    const keys = devices(pools[0]?.slices ?? [])
      .filter((d) => !d.name.endsWith('-shared'))
      .map((d) => d.attributes['productKey']);
    const labels = Object.keys(constructDeviceLabels(cards.map((c) => ({ ...c, memoryMiB: c.memoryMiB ?? 0 })))).filter(
      (k) => k.endsWith('.count'),
    );
    expect(keys).toEqual([{ string: 'nvidia-h200-140g' }, { string: 'nvidia-h200-96g' }]);
    expect(labels).toEqual([
      'acceleratable.feature.gpustack.ai/nvidia-h200-140g.count',
      'acceleratable.feature.gpustack.ai/nvidia-h200-96g.count',
    ]);
  });

  it('an unhealthy card: both of its devices carry the NoSchedule taint naming the problem, the others none', () => {
    const { pools } = desiredSlices(NODE, [h200(0), h200(1, { problem: 'detection-failed' })]);
    const slices = pools[0]?.slices ?? [];
    const taint = { key: 'gpustack.ai/unhealthy', value: 'detection-failed', effect: 'NoSchedule' };
    expect(device(slices, 'card-1').taints).toEqual([taint]);
    expect(device(slices, 'card-1-shared').taints).toEqual([taint]);
    expect(device(slices, 'card-0')).not.toHaveProperty('taints');
    expect(device(slices, 'card-0-shared')).not.toHaveProperty('taints');
    // The card is still offered whole and shared in shape: only the taint keeps new claims off it.
    expect(device(slices, 'card-1').consumesCounters).toEqual([
      { counterSet: 'card-1-counters', counters: device(slices, 'card-0').consumesCounters[0]?.counters },
    ]);
  });

  it('8 cards: one device slice of 16 devices and one counter slice of 8 counter sets', () => {
    const { pools } = desiredSlices(
      NODE,
      Array.from({ length: 8 }, (_, i) => h200(i)),
    );
    const slices = pools[0]?.slices ?? [];
    expect(slices).toHaveLength(2);
    expect(slices[0]?.spec.sharedCounters).toHaveLength(8);
    expect(slices[1]?.spec.devices).toHaveLength(16);
    expect(slices.every((s) => s.spec.pool.resourceSliceCount === 2)).toBe(true);
  });

  it('two manufacturers: one pool each, each its own driver, names and count', () => {
    const amd: SliceCard = {
      manufacturer: 'amd',
      index: 0,
      uuid: 'f3ff74a1-0000-1000-80ff-ffffffffffff',
      product: 'AMD Instinct MI300X',
      memoryMiB: 196592,
      computeCapability: 'gfx942',
      family: 'CDNA3',
    };
    const { pools } = desiredSlices(NODE, [h200(0), amd, h200(1)]);
    expect(pools.map((p) => [p.manufacturer, p.driver, p.slices.map((s) => s.metadata.name)])).toEqual([
      ['amd', 'amd.gpustack.ai', ['gpu-node-1-amd-counters-0', 'gpu-node-1-amd-devices-0']],
      ['nvidia', 'nvidia.gpustack.ai', ['gpu-node-1-nvidia-counters-0', 'gpu-node-1-nvidia-devices-0']],
    ]);
    const mi300 = device(pools[0]?.slices ?? [], 'card-0');
    expect(mi300.attributes['computeCapability']).toEqual({ string: 'gfx942' });
    expect(mi300.attributes['productKey']).toEqual({ string: 'amd-instinct-mi300x' });
    expect(mi300.attributes['pciBusID']).toBeUndefined();
  });

  it('100 cards: within every API limit, several slices, one count and generation on all', () => {
    const { pools } = desiredSlices(
      NODE,
      Array.from({ length: 100 }, (_, i) => h200(i)),
    );
    const slices = pools[0]?.slices ?? [];
    const counterSlices = slices.filter((s) => s.spec.sharedCounters);
    const deviceSlices = slices.filter((s) => s.spec.devices);
    expect(counterSlices).toHaveLength(Math.ceil(100 / CARDS_PER_COUNTER_SLICE)); // 13
    expect(deviceSlices).toHaveLength(Math.ceil(100 / CARDS_PER_DEVICE_SLICE)); // 4
    expect(counterSlices).toHaveLength(13);
    expect(deviceSlices).toHaveLength(4);
    for (const slice of counterSlices)
      expect(slice.spec.sharedCounters?.length).toBeLessThanOrEqual(LIMITS.counterSetsPerSlice);
    for (const slice of deviceSlices)
      expect(slice.spec.devices?.length).toBeLessThanOrEqual(LIMITS.devicesPerSliceWithCounters);
    expect(new Set(slices.map((s) => s.spec.pool.resourceSliceCount))).toEqual(new Set([17]));
    expect(devices(slices)).toHaveLength(200);
    expect(new Set(devices(slices).map((d) => d.name)).size).toBe(200);
    // Every device's counter set is published in the pool.
    const sets = new Set(counterSlices.flatMap((s) => s.spec.sharedCounters?.map((c) => c.name) ?? []));
    expect(sets.size).toBe(100);
    for (const d of devices(slices)) expect(sets.has(d.consumesCounters[0]?.counterSet ?? '')).toBe(true);
    const regenerated = withGeneration(slices, 7);
    expect(new Set(regenerated.map((s) => s.spec.pool.generation))).toEqual(new Set([7]));
    expect(slices[0]?.spec.pool.generation).toBe(0);
  });

  it('a long node name: slice names stay valid DNS subdomains ≤ 253, distinct for names that share a prefix', () => {
    const long = `${'a'.repeat(120)}.${'b'.repeat(120)}`;
    const other = `${'a'.repeat(120)}.${'b'.repeat(119)}c`;
    const name = sliceName(long, 'mthreads', 'counters', 12);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(isDnsSubdomain(name)).toBe(true);
    expect(name).not.toBe(sliceName(other, 'mthreads', 'counters', 12));
    const { pools } = desiredSlices({ name: long, uid: 'u' }, [h200(0)]);
    for (const slice of pools[0]?.slices ?? []) {
      expect(isDnsSubdomain(slice.metadata.name)).toBe(true);
      expect(slice.spec.pool.name).toBe(long);
      expect(slice.spec.nodeName).toBe(long);
    }
    // A name that fits is kept whole.
    expect(sliceName('n1', 'nvidia', 'devices', 0)).toBe('n1-nvidia-devices-0');
  });

  it('implausible memory: the card is published without memory capacity and counter, and reported', () => {
    // `undefined` too: the types say the addon always reports a number; the builder does not trust them.
    for (const memoryMiB of [Number.NaN, -1, 0, 17 * 1024 * 1024, undefined]) {
      const { pools, problems } = desiredSlices(NODE, [h200(0), h200(1, { memoryMiB: memoryMiB as number })]);
      expect(problems).toEqual([
        `nvidia card 1: implausible memory ${memoryMiB} MiB; published without memory capacity and counter`,
      ]);
      const slices = pools[0]?.slices ?? [];
      expect(slices[0]?.spec.sharedCounters?.[1]).toEqual({
        name: 'card-1-counters',
        counters: { units: { value: '1600k' } },
      });
      expect(Object.keys(device(slices, 'card-1').capacity)).toEqual(['cores', 'units']);
      expect(Object.keys(device(slices, 'card-1-shared').capacity)).toEqual(['cores', 'units']);
      expect(device(slices, 'card-1').attributes['productKey']).toEqual({ string: 'nvidia-h200' });
      // The other card keeps its memory.
      expect(device(slices, 'card-0').capacity['memory']).toEqual({ value: '143771Mi' });
    }
  });

  it('a small card: the memory minimum never exceeds the card and the default never falls under the minimum', () => {
    for (const [memoryMiB, want] of [
      [8192, { default: '1024Mi', validRange: { min: '1Gi' } }],
      [512, { default: '512Mi', validRange: { min: '512Mi' } }],
      [10240, { default: '1024Mi', validRange: { min: '1Gi' } }],
    ] as const) {
      const { pools } = desiredSlices(NODE, [h200(0, { memoryMiB })]);
      expect(device(pools[0]?.slices ?? [], 'card-0-shared').capacity['memory']?.requestPolicy).toEqual(want);
    }
  });

  it('missing uuid, PCI bus id and NUMA node: those attributes are left out', () => {
    const { pools } = desiredSlices(NODE, [
      h200(0, { uuid: '', pciBusId: undefined, numaNode: -1, family: undefined, computeCapability: undefined }),
    ]);
    expect(Object.keys(device(pools[0]?.slices ?? [], 'card-0').attributes).sort()).toEqual(
      ['driverVersion', 'index', 'manufacturer', 'mode', 'productKey', 'productName'].sort(),
    );
  });

  it('long strings are cut to the 64 characters the API allows; repeated or negative indexes are left out and reported', () => {
    const { pools, problems } = desiredSlices(NODE, [
      h200(0, { product: `NVIDIA ${'X'.repeat(100)}` }),
      h200(0),
      h200(-1),
      { ...h200(1), manufacturer: 'acme' as ManufacturerName },
    ]);
    expect(problems).toEqual([
      'nvidia card 0: index reported twice; the first card is published',
      'nvidia card -1: index is not a non-negative integer; not published',
      'acme card 1: unknown manufacturer; not published',
    ]);
    const name = device(pools[0]?.slices ?? [], 'card-0').attributes['productName'];
    expect(name).toEqual({ string: `NVIDIA ${'X'.repeat(57)}` });
    expect(devices(pools[0]?.slices ?? [])).toHaveLength(2);
  });

  it('no cards: no pools', () => {
    expect(desiredSlices(NODE, [])).toEqual({ pools: [], problems: [] });
  });

  it('the schema rejects what the API would: devices beside counters, too many devices', () => {
    const [counterSlice, deviceSlice] = desiredSlices(NODE, [h200(0)]).pools[0]?.slices ?? [];
    expect(() =>
      ResourceSliceSchema.parse({
        ...counterSlice,
        spec: { ...counterSlice?.spec, devices: deviceSlice?.spec.devices },
      }),
    ).toThrow(/either sharedCounters or devices/);
    const many = Array.from({ length: 33 }, (_, i) =>
      device(desiredSlices(NODE, [h200(i)]).pools[0]?.slices ?? [], `card-${i}`),
    );
    expect(() =>
      ResourceSliceSchema.parse({
        ...deviceSlice,
        spec: { ...deviceSlice?.spec, devices: [...many, ...many.map((d) => ({ ...d, name: `${d.name}-x` }))] },
      }),
    ).toThrow(/too many devices/);
  });

  it('8× H200: the slices as YAML (snapshot), each card whole or shared on one counter set', async () => {
    const { pools } = desiredSlices(
      { name: 'h200-node', uid: '0b6f3a52-5c1e-4d8a-9f3e-2a1b4c5d6e7f' },
      Array.from({ length: 8 }, (_, i) => h200(i)),
    );
    const slices = pools[0]?.slices ?? [];
    for (let i = 0; i < 8; i++) {
      expect(device(slices, `card-${i}`).consumesCounters[0]?.counterSet).toBe(`card-${i}-counters`);
      expect(device(slices, `card-${i}-shared`).consumesCounters[0]?.counterSet).toBe(`card-${i}-counters`);
    }
    const text = slices.map((s) => stringify(s)).join('---\n');
    await expect(text).toMatchFileSnapshot(
      path.join(import.meta.dirname, '..', 'snapshots', 'dra', 'h200-8x-slices.yaml'),
    );
  });
});
