/**
 * The card ledger (docs/architecture.md#ledger): our slices minus what claims hold, per node and model. A card is
 * free whole only while neither of its devices is allocated; shares consume capacity; only the
 * newest complete generation of a pool counts; other drivers are not ours.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  ReceivedResourceSliceSchema,
  SliceCache,
  buildDeviceLedger,
  consumedAmount,
  deviceClassTarget,
  podDeviceAsks,
  type NodeModelSummary,
} from '../../src/dra/index.js';
import { CARD_MIB, H100_KEY, NVIDIA, allocatedClaim, claimTemplate, nodePool } from './builders.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function only(summaries: NodeModelSummary[]): NodeModelSummary {
  expect(summaries).toHaveLength(1);
  return summaries[0] as NodeModelSummary;
}

describe('buildDeviceLedger', () => {
  it('counts every published card of a node as free when no claim holds one', () => {
    const summary = only(buildDeviceLedger(nodePool('gpu-a', 8), []).summary());
    expect(summary).toMatchObject({
      node: 'gpu-a',
      driver: NVIDIA,
      productKey: H100_KEY,
      published: 8,
      allocatedWhole: 0,
      sharedInUse: 0,
      freeWhole: 8,
    });
    expect(summary.freeShared).toHaveLength(8);
    expect(summary.freeShared[0]?.free['memory']).toBe(CARD_MIB * MiB);
  });

  it('takes a card allocated whole out of the free cards and out of sharing', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 4), [
      allocatedClaim('a', [{ node: 'gpu-a', device: 'card-0' }]),
      allocatedClaim('b', [{ node: 'gpu-a', device: 'card-3' }], false),
    ]);
    const summary = only(ledger.summary());
    // An allocated claim nobody has reserved yet still holds its card.
    expect(summary).toMatchObject({ published: 4, allocatedWhole: 2, freeWhole: 2 });
    expect(summary.freeShared.map((s) => s.card)).toEqual(['card-1', 'card-2']);
  });

  it('counts a shared card as neither free whole nor full: its consumed capacity is taken, the rest is free', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 2), [
      allocatedClaim('s1', [
        { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '20Gi', units: '400k', cores: '25' } },
      ]),
      allocatedClaim('s2', [
        { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '30Gi', units: '600k', cores: '35' } },
      ]),
    ]);
    const summary = only(ledger.summary());
    expect(summary).toMatchObject({ published: 2, allocatedWhole: 0, sharedInUse: 1, freeWhole: 1 });
    expect(summary.consumed).toEqual({ memory: 50 * GiB, units: 1_000_000, cores: 60 });
    const card1 = summary.freeShared.find((s) => s.card === 'card-1');
    expect(card1?.free).toEqual({ memory: CARD_MIB * MiB - 50 * GiB, units: 600_000, cores: 40 });
  });

  it("takes the request policy's defaults for a share whose claim records no consumed capacity", () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 1), [
      allocatedClaim('s', [{ node: 'gpu-a', device: 'card-0-shared' }]),
    ]);
    expect(only(ledger.summary()).consumed).toEqual({
      memory: Math.floor(CARD_MIB / 10) * MiB,
      units: 160_000,
      cores: 10,
    });
  });

  it('counts only the newest generation of a pool (an agent mid-update publishes the next beside the old)', () => {
    const ledger = buildDeviceLedger(
      [...nodePool('gpu-a', 8, { generation: 1 }), ...nodePool('gpu-a', 4, { generation: 2 })],
      [allocatedClaim('old', [{ node: 'gpu-a', device: 'card-6' }])],
    );
    expect(only(ledger.summary())).toMatchObject({ published: 4, allocatedWhole: 0, freeWhole: 4 });
    // The claim on card-6 names a device the current generation no longer publishes.
    expect(ledger.unknownAllocations).toBe(1);
  });

  it('offers nothing from a pool whose newest generation is incomplete, as the scheduler does not allocate from it', () => {
    const ledger = buildDeviceLedger(
      [...nodePool('gpu-a', 8, { generation: 1 }), ...nodePool('gpu-a', 8, { generation: 2, devicesOnly: true })],
      [],
    );
    expect(ledger.summary()).toEqual([]);
    expect(ledger.incompletePools).toBe(1);
  });

  it("ignores other drivers' slices and claims", () => {
    const ledger = buildDeviceLedger(
      [...nodePool('gpu-a', 2), ...nodePool('gpu-a', 4, { driver: 'gpu.nvidia.com' })],
      [allocatedClaim('theirs', [{ node: 'gpu-a', device: 'card-0', driver: 'gpu.nvidia.com' }])],
    );
    expect(only(ledger.summary())).toMatchObject({ driver: NVIDIA, published: 2, freeWhole: 2 });
    expect(ledger.unknownAllocations).toBe(0);
  });

  it("counts a pool only on the node it is named after: node A's slices in a pool named after node B change nothing of B's (issue 43)", () => {
    // Node A publishes a newer, complete generation in a pool named after node B.
    const foreign = nodePool('gpu-a', 3, { generation: 5 }).map((slice) => ({
      ...slice,
      spec: { ...slice.spec, pool: { ...slice.spec.pool, name: 'gpu-b' } },
    }));
    const ledger = buildDeviceLedger([...nodePool('gpu-b', 2), ...foreign], []);
    expect(ledger.nodeNames()).toEqual(['gpu-b']);
    expect(only(ledger.summary())).toMatchObject({ node: 'gpu-b', published: 2, freeWhole: 2 });
    // A slice naming no node is no pool of ours either.
    const nodeless = nodePool('gpu-c', 2).map((slice) => ({ ...slice, spec: { ...slice.spec, nodeName: undefined } }));
    expect(buildDeviceLedger(nodeless, []).nodeNames()).toEqual([]);
  });

  it('keeps nodes and models apart, sorted', () => {
    const ledger = buildDeviceLedger(
      [
        ...nodePool('gpu-b', 2),
        ...nodePool('gpu-a', 1),
        ...nodePool('mi-a', 8, { driver: 'amd.gpustack.ai', productKey: 'amd-mi300x' }),
      ],
      [],
    );
    expect(ledger.summary().map((s) => [s.node, s.productKey, s.published])).toEqual([
      ['gpu-a', H100_KEY, 1],
      ['gpu-b', H100_KEY, 2],
      ['mi-a', 'amd-mi300x', 8],
    ]);
    expect(ledger.cards('gpu-b').map((c) => [c.name, c.wholeDevice, c.sharedDevice])).toEqual([
      ['card-0', 'card-0', 'card-0-shared'],
      ['card-1', 'card-1', 'card-1-shared'],
    ]);
    expect(ledger.cards('nowhere')).toEqual([]);
  });
});

describe("the agent's slices (src/dra/slices.ts, snapshot h200-8x-slices.yaml)", () => {
  it('reads them as 8 H200 cards, all free, each with its shared device and the policy defaults', () => {
    const slices = parseAllDocuments(readFileSync('test/snapshots/dra/h200-8x-slices.yaml', 'utf8')).map((d) =>
      ReceivedResourceSliceSchema.parse(d.toJS()),
    );
    const ledger = buildDeviceLedger(slices, [
      allocatedClaim('w', [{ node: 'h200-node', device: 'card-7' }]),
      allocatedClaim('s', [{ node: 'h200-node', device: 'card-3-shared' }]),
    ]);
    const summary = only(ledger.summary());
    expect(summary).toMatchObject({
      node: 'h200-node',
      driver: NVIDIA,
      published: 8,
      allocatedWhole: 1,
      sharedInUse: 1,
      freeWhole: 6,
    });
    // A claim without consumedCapacity takes the request policy's defaults: a tenth of the card.
    expect(summary.consumed).toEqual({ memory: 14377 * MiB, units: 160_000, cores: 10 });
    expect(ledger.cards('h200-node').map((c) => c.name)).toEqual(Array.from({ length: 8 }, (_, i) => `card-${i}`));
  });
});

describe('SliceCache', () => {
  it('gives the ledger a build without it gives, and follows a pool whose slices were replaced or removed', () => {
    const cache = new SliceCache();
    const a = nodePool('gpu-a', 8);
    const b = nodePool('gpu-b', 2);
    const claims = [allocatedClaim('w', [{ node: 'gpu-a', device: 'card-0' }])];
    const plain = buildDeviceLedger([...a, ...b], claims).summary();
    expect(buildDeviceLedger([...a, ...b], claims, cache).summary()).toEqual(plain);
    // Unchanged pools come from the cache: the same card objects as before.
    const card = buildDeviceLedger([...a, ...b], [], cache).cards('gpu-a')[0];
    expect(buildDeviceLedger([...a, ...b], [], cache).cards('gpu-a')[0]).toBe(card);
    // gpu-a's agent publishes generation 2 with 4 cards; gpu-b's pool goes away.
    const a2 = nodePool('gpu-a', 4, { generation: 2 });
    const after = buildDeviceLedger([...a, ...a2], claims, cache);
    expect(after.summary()).toEqual(buildDeviceLedger([...a, ...a2], claims).summary());
    expect(after.summary().map((s) => [s.node, s.published, s.allocatedWhole])).toEqual([['gpu-a', 4, 1]]);
  });
});

describe('consumedAmount (KEP-5075 request policy)', () => {
  const rule = { total: 80 * GiB, default: 8 * GiB, min: GiB, step: GiB };
  it.each([
    ['no request: the default', undefined, 8 * GiB],
    ['below the minimum: the minimum', 100 * MiB, GiB],
    ['between steps: rounded up', 20.5 * GiB, 21 * GiB],
    ['more than the card: no fit', 81 * GiB, undefined],
  ])('%s', (_, requested, expected) => {
    expect(consumedAmount(rule, requested)).toBe(expected);
  });
  it('rounds up to the next valid value, and fails above the largest', () => {
    const values = { total: 100, validValues: [10, 50, 100] };
    expect(consumedAmount(values, 11)).toBe(50);
    expect(consumedAmount(values, 101)).toBeUndefined();
  });
  it('takes the whole capacity without a request or a policy', () => {
    expect(consumedAmount({ total: 100 }, undefined)).toBe(100);
  });
});

describe('claims on our DeviceClasses', () => {
  it.each([
    ['gpustack-nvidia', { mfr: 'nvidia', productKey: undefined, shared: false }],
    ['gpustack-nvidia-shared', { mfr: 'nvidia', productKey: undefined, shared: true }],
    ['gpustack-nvidia-h200', { mfr: 'nvidia', productKey: 'nvidia-h200', shared: false }],
    ['gpustack-amd-mi300x-shared', { mfr: 'amd', productKey: 'amd-mi300x', shared: true }],
    ['gpu.nvidia.com', undefined],
    ['gpustack-acme-x1', undefined],
  ])('%s', (name, expected) => {
    expect(deviceClassTarget(name)).toEqual(expected);
  });

  it("reads whole and shared asks from a pod's templates; a claim by name is not placed per pod", () => {
    const templates = {
      whole: claimTemplate('whole', [{ deviceClassName: `gpustack-${H100_KEY}`, count: 2 }]),
      slice: claimTemplate('slice', [
        { deviceClassName: 'gpustack-nvidia-shared', capacity: { memory: '20Gi' } },
        { deviceClassName: 'other-vendor-class' },
      ]),
    };
    const resolution = podDeviceAsks(
      [
        { name: 'a', resourceClaimTemplateName: 'whole' },
        { name: 'b', resourceClaimTemplateName: 'slice' },
        { name: 'c', resourceClaimName: 'shared-by-all' },
      ],
      (name) => templates[name as keyof typeof templates],
    );
    expect(resolution).toEqual({
      ok: true,
      asks: [
        { label: 'a/r0', mfr: 'nvidia', driver: NVIDIA, productKey: H100_KEY, shared: false, count: 2, capacity: {} },
        {
          label: 'b/r0',
          mfr: 'nvidia',
          driver: NVIDIA,
          productKey: undefined,
          shared: true,
          count: 1,
          capacity: { memory: 20 * GiB },
        },
      ],
    });
  });

  it('answers a missing template with an error, never with no asks', () => {
    expect(podDeviceAsks([{ name: 'a', resourceClaimTemplateName: 'gone' }], () => undefined)).toEqual({
      ok: false,
      message: 'claim "a": ResourceClaimTemplate "gone" is not known to the checker',
    });
  });
});
