/**
 * Device taints in the ledger (issue 25): a card is not free, whole or shared, while a blocking
 * taint is on either of its devices, from its slices (the agent's `gpustack.ai/unhealthy`) or
 * from a DeviceTaintRule (a cordon); `None` only shows. Every view of the ledger agrees.
 */
import { describe, expect, it } from 'vitest';
import {
  CORDON_TAINT_KEY,
  ReceivedDeviceTaintRuleSchema,
  UNHEALTHY_TAINT_KEY,
  UNTAINTED,
  buildCordonRules,
  buildDeviceLedger,
  cardHealth,
  freeSharedCapacity,
  isFreeWhole,
  poolDevices,
  ruleSelects,
  type DeviceLedger,
  type PublishedCard,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceSlice,
} from '../../src/dra/index.js';
import { H100_KEY, NVIDIA, allocatedClaim, nodePool } from './builders.js';

function rule(selector: Record<string, string> | undefined, effect = 'NoSchedule', key = 'example.com/maintenance') {
  return ReceivedDeviceTaintRuleSchema.parse({
    apiVersion: 'resource.k8s.io/v1beta2',
    kind: 'DeviceTaintRule',
    metadata: { name: `r-${JSON.stringify(selector)}-${effect}` },
    spec: { ...(selector === undefined ? {} : { deviceSelector: selector }), taint: { key, effect } },
  });
}

function card(ledger: DeviceLedger, node: string, index: number): PublishedCard {
  const found = ledger.cards(node).find((c) => c.name === `card-${index}`);
  if (found === undefined) throw new Error(`no card-${index} on ${node}`);
  return found;
}

/** The names of the cards of `node` that are free whole, and those that can still take a share. */
function freeCards(ledger: DeviceLedger, node: string): { whole: string[]; shareable: string[] } {
  const cards = ledger.cards(node);
  return {
    whole: cards.filter((c) => isFreeWhole(c, ledger.use(c), ledger.health(c))).map((c) => c.name),
    shareable: cards
      .filter((c) => freeSharedCapacity(c, ledger.use(c), ledger.health(c)) !== undefined)
      .map((c) => c.name),
  };
}

/** gpu-a's pool with the agent's unhealthy taint on both devices of card `index`. */
function withUnhealthy(index: number): ReceivedResourceSlice[] {
  return nodePool('gpu-a', 4).map((slice) => ({
    ...slice,
    spec: {
      ...slice.spec,
      ...(slice.spec.devices === undefined
        ? {}
        : {
            devices: slice.spec.devices.map((d) =>
              d.name === `card-${index}` || d.name === `card-${index}-shared`
                ? { ...d, taints: [{ key: UNHEALTHY_TAINT_KEY, value: 'missing', effect: 'NoSchedule' }] }
                : d,
            ),
          }),
    },
  }));
}

describe('the ledger honours device taints', () => {
  it('takes a card the agent tainted unhealthy out of the free cards, whole and shared, in every view', () => {
    const ledger = buildDeviceLedger(withUnhealthy(1), []);
    expect(ledger.health(card(ledger, 'gpu-a', 1))).toEqual({
      cordoned: false,
      unhealthy: true,
      blocked: true,
      taints: [{ key: UNHEALTHY_TAINT_KEY, value: 'missing', effect: 'NoSchedule' }],
    });
    expect(ledger.health(card(ledger, 'gpu-a', 0))).toBe(UNTAINTED);
    expect(freeCards(ledger, 'gpu-a')).toEqual({
      whole: ['card-0', 'card-2', 'card-3'],
      shareable: ['card-0', 'card-2', 'card-3'],
    });
    const [summary] = ledger.summary();
    expect(summary).toMatchObject({ published: 4, freeWhole: 3, tainted: 1 });
    expect(summary?.freeShared.map((f) => f.card)).toEqual(['card-0', 'card-2', 'card-3']);
    expect(ledger.freeWhole('gpu-a', 'any', () => true)).toBe(3);
    expect(poolDevices(ledger, ['gpu-a'], H100_KEY)).toEqual({
      published: 4,
      allocated: 0,
      shared: 0,
      free: 3,
      cordoned: 0,
      unhealthy: 1,
    });
  });

  it('a rule naming only the whole device still keeps shares off the card (a card is two devices)', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 4), [], undefined, [
      rule({ driver: NVIDIA, pool: 'gpu-a', device: 'card-2' }),
    ]);
    expect(freeCards(ledger, 'gpu-a')).toEqual({
      whole: ['card-0', 'card-1', 'card-3'],
      shareable: ['card-0', 'card-1', 'card-3'],
    });
  });

  it("a cordon's rules make the card cordoned and not free; a cordoned card held by a claim stays held", () => {
    const slices = nodePool('gpu-a', 4);
    const plain = buildDeviceLedger(slices, []);
    const rules = [
      ...buildCordonRules(card(plain, 'gpu-a', 0), 'firmware update', 'NoSchedule', 'resource.k8s.io/v1'),
      ...buildCordonRules(card(plain, 'gpu-a', 3), 'bad fan', 'NoSchedule', 'resource.k8s.io/v1'),
    ].map((r) => ReceivedDeviceTaintRuleSchema.parse(r));
    const claims = [allocatedClaim('held', [{ node: 'gpu-a', device: 'card-3' }])];
    const ledger = buildDeviceLedger(slices, claims, undefined, rules);
    expect(ledger.health(card(ledger, 'gpu-a', 0))).toEqual({
      cordoned: true,
      unhealthy: false,
      blocked: true,
      // The same taint on both devices, listed once.
      taints: [{ key: CORDON_TAINT_KEY, value: 'firmware-update', effect: 'NoSchedule' }],
    });
    expect(ledger.use(card(ledger, 'gpu-a', 3)).wholeAllocated).toBe(true);
    expect(freeCards(ledger, 'gpu-a').whole).toEqual(['card-1', 'card-2']);
    expect(poolDevices(ledger, ['gpu-a'], H100_KEY, () => 'flavor-4')).toEqual({
      published: 4,
      allocated: 1,
      shared: 0,
      free: 2,
      cordoned: 2,
      unhealthy: 0,
      cordonedByFlavor: { 'flavor-4': 2 },
    });
  });

  it('a taint with effect None only shows: the card stays free, neither cordoned nor blocked', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 2), [], undefined, [
      rule({ device: 'card-0' }, 'None', CORDON_TAINT_KEY),
      rule({ device: 'card-0' }, 'SomeFutureEffect'),
    ]);
    expect(ledger.health(card(ledger, 'gpu-a', 0))).toMatchObject({ cordoned: false, blocked: false });
    expect(ledger.health(card(ledger, 'gpu-a', 0)).taints).toHaveLength(2);
    expect(freeCards(ledger, 'gpu-a').whole).toEqual(['card-0', 'card-1']);
  });

  it('selects as the scheduler does: a rule without a device takes the whole pool, one without a pool every pool', () => {
    const slices = [...nodePool('gpu-a', 2), ...nodePool('gpu-b', 2)];
    const poolWide = buildDeviceLedger(slices, [], undefined, [rule({ driver: NVIDIA, pool: 'gpu-a' })]);
    expect(freeCards(poolWide, 'gpu-a').whole).toEqual([]);
    expect(freeCards(poolWide, 'gpu-b').whole).toEqual(['card-0', 'card-1']);
    const everyPool = buildDeviceLedger(slices, [], undefined, [rule({ device: 'card-1-shared' })]);
    expect(freeCards(everyPool, 'gpu-a').whole).toEqual(['card-0']);
    expect(freeCards(everyPool, 'gpu-b').whole).toEqual(['card-0']);
    const otherDriver = buildDeviceLedger(slices, [], undefined, [rule({ driver: 'gpu.example.com' })]);
    expect(freeCards(otherDriver, 'gpu-a').whole).toEqual(['card-0', 'card-1']);
    const unknownPool = buildDeviceLedger(slices, [], undefined, [rule({ driver: NVIDIA, pool: 'gpu-z' })]);
    expect(freeCards(unknownPool, 'gpu-a').whole).toEqual(['card-0', 'card-1']);
    // No selector at all: the 1.36 scheduler's slice tracker applies it to every device.
    const all = buildDeviceLedger(slices, [], undefined, [rule(undefined)]);
    expect(all.summary().map((s) => s.freeWhole)).toEqual([0, 0]);
  });
});

describe('ruleSelects and cardHealth', () => {
  it('matches every field a selector sets and ignores the ones it leaves out', () => {
    const r: ReceivedDeviceTaintRule = rule({ driver: NVIDIA, device: 'card-0' });
    expect(ruleSelects(r, NVIDIA, 'any-pool', 'card-0')).toBe(true);
    expect(ruleSelects(r, NVIDIA, 'any-pool', 'card-0-shared')).toBe(false);
    expect(ruleSelects(r, 'amd.gpustack.ai', 'any-pool', 'card-0')).toBe(false);
  });

  it('sorts and de-duplicates taints; any blocking taint blocks, only ours mark cordoned or unhealthy', () => {
    const health = cardHealth([
      { key: 'z.example/x', effect: 'NoExecute' },
      { key: CORDON_TAINT_KEY, effect: 'None' },
      { key: 'z.example/x', effect: 'NoExecute' },
    ]);
    expect(health).toEqual({
      cordoned: false,
      unhealthy: false,
      blocked: true,
      taints: [
        { key: CORDON_TAINT_KEY, effect: 'None' },
        { key: 'z.example/x', effect: 'NoExecute' },
      ],
    });
    expect(cardHealth([])).toBe(UNTAINTED);
  });
});
