/**
 * The per-card view (docs/operations.md#cards): one row per card of the ledger with its holders,
 * what is promised of it, its pool and its health; the health is an input, so the cordoned and
 * unhealthy columns are tested here whatever the ledger's own `health()` reads.
 */
import { describe, expect, it } from 'vitest';
import {
  CORDON_TAINT_KEY,
  CardRowSchema,
  UNTAINTED,
  buildCardRows,
  buildDeviceLedger,
  cardPoolsOf,
  countHolders,
  countPoolCards,
  filterCardRows,
  poolResolver,
  type CardHealth,
  type CardRow,
  type PublishedCard,
} from '../../src/dra/index.js';
import { MANAGED_LABEL } from '../../src/nodefeature/index.js';
import { CARD_MIB, H100_KEY, NVIDIA, allocatedClaim, nodePool } from './builders.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const CARD_BYTES = CARD_MIB * MiB;
const L4_KEY = 'nvidia-l4';

function node(name: string, labels: Record<string, string> = {}) {
  return {
    metadata: {
      name,
      labels: { [MANAGED_LABEL]: 'true', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...labels },
    },
  };
}

function instanceType(name: string, aKey: string, arch = 'amd64') {
  return { metadata: { name }, spec: { acceleratable: true, acceleratorGroup: aKey, os: 'linux', arch } };
}

/** gpu-a: 4 × H100 (card-0 whole to train, card-1 two shares, card-3 whole unreserved); gpu-b: 2 × L4 free. */
function cluster() {
  const slices = [...nodePool('gpu-a', 4), ...nodePool('gpu-b', 2, { productKey: L4_KEY, memoryMiB: 23034 })];
  const claims = [
    allocatedClaim('train', [{ node: 'gpu-a', device: 'card-0' }]),
    allocatedClaim('infer-1', [
      { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '20Gi', units: '400k', cores: '25' } },
    ]),
    allocatedClaim('infer-2', [
      { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '10Gi', units: '200k', cores: '10' } },
    ]),
    allocatedClaim('pending', [{ node: 'gpu-a', device: 'card-3' }], false),
  ];
  const ledger = buildDeviceLedger(slices, claims);
  const poolOf = poolResolver(cardPoolsOf([instanceType('h100', H100_KEY), instanceType('l4', L4_KEY)]), [
    node('gpu-a'),
    node('gpu-b'),
  ]);
  return { ledger, poolOf };
}

function row(rows: readonly CardRow[], nodeName: string, card: string): CardRow {
  const found = rows.find((r) => r.node === nodeName && r.card === card);
  if (found === undefined) throw new Error(`no row ${nodeName}/${card}`);
  return found;
}

describe('buildCardRows', () => {
  it('gives one row per published card, by node and index, each valid for the strict output schema', () => {
    const { ledger, poolOf } = cluster();
    const rows = buildCardRows(ledger, { poolOf });
    expect(rows.map((r) => `${r.node}/${r.card}`)).toEqual([
      'gpu-a/card-0',
      'gpu-a/card-1',
      'gpu-a/card-2',
      'gpu-a/card-3',
      'gpu-b/card-0',
      'gpu-b/card-1',
    ]);
    for (const r of rows) expect(CardRowSchema.parse(r)).toEqual(r);
  });

  it('shows a whole claim as `whole` with its pod as holder and the whole card promised', () => {
    const rows = buildCardRows(cluster().ledger);
    expect(row(rows, 'gpu-a', 'card-0')).toMatchObject({
      index: 0,
      driver: NVIDIA,
      model: H100_KEY,
      state: 'whole',
      available: false,
      memoryBytes: CARD_BYTES,
      units: 1_600_000,
      promised: { memoryBytes: CARD_BYTES, units: 1_600_000 },
      holders: ['team-a/train-pod'],
      claims: [
        {
          namespace: 'team-a',
          name: 'train',
          pods: ['train-pod'],
          whole: true,
          memoryBytes: CARD_BYTES,
          units: 1_600_000,
        },
      ],
    });
  });

  it('sums the shares of a shared card and names every holder with what each was promised', () => {
    const shared = row(buildCardRows(cluster().ledger), 'gpu-a', 'card-1');
    expect(shared.state).toBe('shared');
    expect(shared.claims).toHaveLength(2);
    expect(shared.promised).toEqual({ memoryBytes: 30 * GiB, units: 600_000 });
    expect(shared.holders).toEqual(['team-a/infer-1-pod', 'team-a/infer-2-pod']);
    expect(shared.claims.map((c) => [c.name, c.memoryBytes, c.units])).toEqual([
      ['infer-1', 20 * GiB, 400_000],
      ['infer-2', 10 * GiB, 200_000],
    ]);
  });

  it('names a claim reserved for no Pod as its holder, and a free card has none', () => {
    const rows = buildCardRows(cluster().ledger);
    expect(row(rows, 'gpu-a', 'card-3').holders).toEqual(['team-a/pending (claim)']);
    expect(row(rows, 'gpu-a', 'card-2')).toMatchObject({
      state: 'free',
      available: true,
      holders: [],
      claims: [],
      promised: { memoryBytes: 0, units: 0 },
    });
  });

  it('counts one claim holding two shares of one card once, with both shares promised', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 1), [
      allocatedClaim('two', [
        { node: 'gpu-a', device: 'card-0-shared', consumed: { memory: '20Gi', units: '400k' } },
        { node: 'gpu-a', device: 'card-0-shared', consumed: { memory: '20Gi', units: '400k' } },
      ]),
    ]);
    const [only] = buildCardRows(ledger);
    expect(only?.claims).toEqual([
      { namespace: 'team-a', name: 'two', pods: ['two-pod'], whole: false, memoryBytes: 40 * GiB, units: 800_000 },
    ]);
    expect(only?.promised).toEqual({ memoryBytes: 40 * GiB, units: 800_000 });
  });

  it('puts each card in the pool of its model and platform, and a card no InstanceType selects in none', () => {
    const slices = [...nodePool('gpu-a', 1), ...nodePool('gpu-arm', 1), ...nodePool('gpu-unmanaged', 1)];
    const ledger = buildDeviceLedger(slices, []);
    const poolOf = poolResolver(
      cardPoolsOf([
        instanceType('h100-arm', H100_KEY, 'arm64'),
        instanceType('h100', H100_KEY),
        instanceType('b-duplicate', H100_KEY),
        { metadata: { name: 'cpu' }, spec: { acceleratable: false } },
      ]),
      [
        node('gpu-a'),
        node('gpu-arm', { 'kubernetes.io/arch': 'arm64' }),
        node('gpu-unmanaged', { [MANAGED_LABEL]: 'false' }),
      ],
    );
    const rows = buildCardRows(ledger, { poolOf });
    // Two InstanceTypes of one pool: the first by name.
    expect(row(rows, 'gpu-a', 'card-0').pool).toBe('b-duplicate');
    expect(row(rows, 'gpu-arm', 'card-0').pool).toBe('h100-arm');
    expect(row(rows, 'gpu-unmanaged', 'card-0').pool).toBeNull();
  });

  it('takes each card health from the given function: cordoned and unhealthy cards are not available', () => {
    const { ledger, poolOf } = cluster();
    const cordon = { key: CORDON_TAINT_KEY, value: 'firmware update', effect: 'NoSchedule' };
    const sick = { key: 'gpustack.ai/unhealthy', effect: 'NoExecute' };
    const health = (card: PublishedCard): CardHealth =>
      card.node === 'gpu-b' && card.name === 'card-0'
        ? { cordoned: true, unhealthy: false, blocked: true, taints: [cordon] }
        : card.node === 'gpu-a' && card.name === 'card-1'
          ? { cordoned: false, unhealthy: true, blocked: true, taints: [sick] }
          : UNTAINTED;
    const rows = buildCardRows(ledger, { poolOf, health });
    expect(row(rows, 'gpu-b', 'card-0')).toMatchObject({
      state: 'free',
      available: false,
      cordoned: true,
      taints: [cordon],
    });
    expect(row(rows, 'gpu-a', 'card-1')).toMatchObject({
      state: 'shared',
      unhealthy: true,
      cordoned: false,
      taints: [sick],
    });
    expect(row(rows, 'gpu-b', 'card-1')).toMatchObject({
      available: true,
      cordoned: false,
      unhealthy: false,
      taints: [],
    });
  });

  it("reads the ledger's own health when none is given", () => {
    const { ledger } = cluster();
    const rows = buildCardRows(ledger);
    for (const r of rows) {
      const card = ledger.cards(r.node).find((c) => c.name === r.card) as PublishedCard;
      expect({ cordoned: r.cordoned, unhealthy: r.unhealthy, taints: r.taints.length }).toEqual({
        cordoned: ledger.health(card).cordoned,
        unhealthy: ledger.health(card).unhealthy,
        taints: ledger.health(card).taints.length,
      });
    }
  });
});

describe('an over-committed card (issue 46)', () => {
  it('says on its row why its claims hold more than it has, naming the counters and the claims; other rows say null', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 2), [
      allocatedClaim('big-1', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '50Gi' } }]),
      allocatedClaim('big-2', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '40Gi' } }]),
    ]);
    const rows = buildCardRows(ledger);
    expect(rows.map((r) => r.overcommitted)).toEqual([
      null,
      'card-1 on gpu-a (nvidia.gpustack.ai) is over-committed: memory 92160Mi held of 81920Mi; ' +
        'held by team-a/big-1 (memory 51200Mi), team-a/big-2 (memory 40960Mi)',
    ]);
    for (const r of rows) expect(CardRowSchema.parse(r)).toEqual(r);
  });
});

describe('filterCardRows', () => {
  const { ledger, poolOf } = cluster();
  const rows = buildCardRows(ledger, { poolOf });

  it.each([
    { name: 'a node', filter: { node: 'gpu-b' }, want: ['gpu-b/card-0', 'gpu-b/card-1'] },
    { name: 'a pool', filter: { pool: 'l4' }, want: ['gpu-b/card-0', 'gpu-b/card-1'] },
    {
      name: 'a namespace: the cards its claims hold',
      filter: { namespace: 'team-a' },
      want: ['gpu-a/card-0', 'gpu-a/card-1', 'gpu-a/card-3'],
    },
    { name: 'a namespace holding nothing', filter: { namespace: 'team-b' }, want: [] },
    { name: 'node and pool together', filter: { node: 'gpu-a', pool: 'l4' }, want: [] },
  ])('keeps the cards of $name', ({ filter, want }) => {
    expect(filterCardRows(rows, filter).map((r) => `${r.node}/${r.card}`)).toEqual(want);
  });
});

describe('countPoolCards and countHolders', () => {
  it('counts per pool: free excludes held, cordoned and unhealthy cards; shared counts shared cards', () => {
    const { ledger, poolOf } = cluster();
    const health = (card: PublishedCard): CardHealth =>
      card.node === 'gpu-b' && card.name === 'card-1'
        ? { cordoned: true, unhealthy: true, blocked: true, taints: [{ key: CORDON_TAINT_KEY, effect: 'NoSchedule' }] }
        : UNTAINTED;
    expect(countPoolCards(buildCardRows(ledger, { poolOf, health }))).toEqual([
      { pool: 'h100', cards: 4, free: 1, cordoned: 0, unhealthy: 0, shared: 1 },
      { pool: 'l4', cards: 2, free: 1, cordoned: 1, unhealthy: 1, shared: 0 },
    ]);
  });

  it('counts per Pod the cards it holds and the memory promised to it; unreserved claims are nobody', () => {
    const { ledger } = cluster();
    expect(countHolders(buildCardRows(ledger))).toEqual([
      { namespace: 'team-a', pod: 'infer-1-pod', cards: 1, memoryBytes: 20 * GiB },
      { namespace: 'team-a', pod: 'infer-2-pod', cards: 1, memoryBytes: 10 * GiB },
      { namespace: 'team-a', pod: 'train-pod', cards: 1, memoryBytes: CARD_BYTES },
    ]);
  });
});
