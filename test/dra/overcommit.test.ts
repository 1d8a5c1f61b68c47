/**
 * Over-committed cards (docs/operations.md#faults): what a card's claims hold against its counters,
 * by the ledger's arithmetic; the kubelet plugin's check of a claim against those it has prepared.
 */
import { describe, expect, it } from 'vitest';
import {
  buildDeviceLedger,
  cardOvercommit,
  checkPrepare,
  describeOvercommit,
  overcommittedCards,
  type CardOvercommit,
  type NodeClaim,
  type PublishedCard,
} from '../../src/dra/index.js';
import { CARD_MIB, NVIDIA, allocatedClaim, nodePool, type Allocated } from './builders.js';

const MiB = 2 ** 20;
/** The card of issue 46: an H100 whose memory counter the agent published as 81,559 Mi. */
const ISSUE_MIB = 81559;

function share(node: string, card: number, memory: string, more: Record<string, string> = {}): Allocated {
  return { node, device: `card-${card}-shared`, consumed: { memory, units: '1', cores: '1', ...more } };
}

function overOf(node: string, cards: number, claims: Parameters<typeof buildDeviceLedger>[1], memoryMiB = CARD_MIB) {
  const ledger = buildDeviceLedger(nodePool(node, cards, { memoryMiB }), claims);
  const card = ledger.cards(node)[0] as PublishedCard;
  return cardOvercommit(card, ledger.use(card));
}

describe('cardOvercommit', () => {
  it('finds nothing while the shares fill the card exactly, nor on a card held whole by one claim', () => {
    const full = [
      allocatedClaim('a', [share('gpu-a', 0, `${CARD_MIB / 2}Mi`, { cores: '50', units: '800k' })]),
      allocatedClaim('b', [share('gpu-a', 0, `${CARD_MIB / 2}Mi`, { cores: '50', units: '800k' })]),
    ];
    expect(overOf('gpu-a', 1, full)).toBeUndefined();
    expect(overOf('gpu-a', 1, [allocatedClaim('w', [{ node: 'gpu-a', device: 'card-0' }])])).toBeUndefined();
  });

  it("finds issue 46's card: six shares totalling 85,905 Mi against 81,559 Mi, and names every claim", () => {
    const claims = [
      ...[1, 2, 3, 4, 5].map((i) => allocatedClaim(`s${i}`, [share('gpu-a', 0, '14318Mi')])),
      allocatedClaim('s6', [share('gpu-a', 0, '14315Mi')]),
    ];
    const over = overOf('gpu-a', 1, claims, ISSUE_MIB) as CardOvercommit;
    expect(over).toMatchObject({
      node: 'gpu-a',
      card: 'card-0',
      exclusion: undefined,
      exceeded: [{ counter: 'memory', held: 85905 * MiB, total: ISSUE_MIB * MiB }],
    });
    expect(over.claims.map((c) => c.name)).toEqual(['s1', 's2', 's3', 's4', 's5', 's6']);
    const text = describeOvercommit(over);
    expect(text).toContain('card-0 on gpu-a (nvidia.gpustack.ai) is over-committed: memory 85905Mi held of 81559Mi');
    expect(text).toContain('team-a/s6 (cores 1, memory 14315Mi, units 1)');
  });

  it('finds cores and units over their totals as well as memory', () => {
    const claims = [
      allocatedClaim('a', [share('gpu-a', 0, '1Gi', { cores: '60', units: '900k' })]),
      allocatedClaim('b', [share('gpu-a', 0, '1Gi', { cores: '60', units: '900k' })]),
    ];
    expect(overOf('gpu-a', 1, claims)?.exceeded).toEqual([
      { counter: 'cores', held: 120, total: 100 },
      { counter: 'units', held: 1_800_000, total: 1_600_000 },
    ]);
  });

  it('counts a share without recorded consumption at the request policy default (the ledger rule)', () => {
    const claims = Array.from({ length: 11 }, (_, i) =>
      allocatedClaim(`d${i}`, [{ node: 'gpu-a', device: 'card-0-shared' }]),
    );
    expect(overOf('gpu-a', 1, claims.slice(0, 10))).toBeUndefined();
    expect(overOf('gpu-a', 1, claims)?.exceeded.map((e) => e.counter)).toEqual(['cores', 'memory', 'units']);
  });

  it('finds a card held whole and shared at once, and one held whole by two claims', () => {
    const both = overOf('gpu-a', 1, [
      allocatedClaim('w', [{ node: 'gpu-a', device: 'card-0' }]),
      allocatedClaim('s', [share('gpu-a', 0, '1Gi')]),
    ]) as CardOvercommit;
    expect(both.exclusion).toBe('whole-and-shared');
    expect(both.exceeded.find((e) => e.counter === 'memory')).toEqual({
      counter: 'memory',
      held: (CARD_MIB + 1024) * MiB,
      total: CARD_MIB * MiB,
    });
    expect(describeOvercommit(both)).toMatch(
      /it is held whole and shared at once; cores 101 held of 100; memory 82944Mi held of 81920Mi/,
    );
    const twice = overOf('gpu-a', 1, [
      allocatedClaim('w1', [{ node: 'gpu-a', device: 'card-0' }]),
      allocatedClaim('w2', [{ node: 'gpu-a', device: 'card-0' }]),
    ]) as CardOvercommit;
    expect(twice.exclusion).toBe('whole-twice');
    expect(describeOvercommit(twice)).toContain('held by team-a/w1 (whole), team-a/w2 (whole)');
  });
});

describe('overcommittedCards', () => {
  it('lists only the cards over their counters, by node and card', () => {
    const ledger = buildDeviceLedger(
      [...nodePool('gpu-b', 2), ...nodePool('gpu-a', 2)],
      [
        allocatedClaim('ok', [share('gpu-a', 0, '40Gi')]),
        allocatedClaim('w', [{ node: 'gpu-b', device: 'card-1' }]),
        allocatedClaim('s', [share('gpu-b', 1, '1Gi')]),
        allocatedClaim('big1', [share('gpu-a', 1, '50Gi')]),
        allocatedClaim('big2', [share('gpu-a', 1, '50Gi')]),
      ],
    );
    expect(overcommittedCards(ledger).map((o) => `${o.node}/${o.card}`)).toEqual(['gpu-a/card-1', 'gpu-b/card-1']);
  });
});

describe('checkPrepare', () => {
  const slices = nodePool('gpu-a', 2, { memoryMiB: ISSUE_MIB });
  const prepared = (name: string, device: string, memory?: string): NodeClaim => ({
    namespace: 'team-a',
    name,
    results: [
      { request: 'gpu', driver: NVIDIA, pool: 'gpu-a', device, ...(memory ? { consumedCapacity: { memory } } : {}) },
    ],
  });

  it('lets a claim through while its cards stay within their counters', () => {
    const running = [1, 2, 3, 4, 5].map((i) => prepared(`s${i}`, 'card-0-shared', '14318Mi'));
    expect(checkPrepare(slices, running, prepared('s6', 'card-0-shared', '9000Mi'), NVIDIA)).toEqual({ ok: true });
    expect(checkPrepare(slices, running, prepared('w', 'card-1'), NVIDIA)).toEqual({ ok: true });
  });

  it('refuses the share that would take the card past its memory, naming the card, the counter and the claims', () => {
    const running = [1, 2, 3, 4, 5].map((i) => prepared(`s${i}`, 'card-0-shared', '14318Mi'));
    const check = checkPrepare(slices, running, prepared('s6', 'card-0-shared', '14315Mi'), NVIDIA);
    expect(check.ok).toBe(false);
    const error = check.ok ? '' : check.error;
    expect(error).toMatch(/^ResourceClaim team-a\/s6 not prepared: card-0 on gpu-a \(nvidia\.gpustack\.ai\)/);
    expect(error).toContain('memory 85905Mi held of 81559Mi');
    expect(error).toContain('held by team-a/s1');
    expect(error).toContain('team-a/s6 (');
  });

  it('refuses the whole card beside a prepared share, and a share beside a prepared whole card', () => {
    const whole = checkPrepare(slices, [prepared('s', 'card-1-shared', '1Gi')], prepared('w', 'card-1'), NVIDIA);
    expect(whole.ok ? '' : whole.error).toContain(
      'card-1 on gpu-a (nvidia.gpustack.ai) is over-committed: it is held whole and shared at once',
    );
    const shared = checkPrepare(slices, [prepared('w', 'card-1')], prepared('s', 'card-1-shared', '1Gi'), NVIDIA);
    expect(shared.ok).toBe(false);
  });

  it('refuses a device no slice publishes, and judges only the cards the claim touches', () => {
    const gone = checkPrepare(slices, [], prepared('x', 'card-7'), NVIDIA);
    expect(gone).toEqual({
      ok: false,
      error:
        'ResourceClaim team-a/x not prepared: card-7 is in no ResourceSlice of pool gpu-a: its counters are unknown',
    });
    // card-0 is over already (two whole holders prepared before this check existed): not this claim's card.
    const over = [prepared('w1', 'card-0'), prepared('w2', 'card-0')];
    expect(checkPrepare(slices, over, prepared('s', 'card-1-shared', '1Gi'), NVIDIA)).toEqual({ ok: true });
    // Another driver's devices in the same claim are that driver's plugin's to judge.
    const mixed: NodeClaim = {
      namespace: 'team-a',
      name: 'nic',
      results: [{ driver: 'nic.example.com', pool: 'gpu-a', device: 'eth0' }, ...prepared('m', 'card-1').results],
    };
    expect(checkPrepare(slices, [], mixed, NVIDIA)).toEqual({ ok: true });
  });
});
