/**
 * @module The per-card view of the ledger (docs/operations.md#cards): one row per card — its node,
 * model and pool, what its claims promised of it and to whom, its taints. `gpustack-operator cards`
 * prints the rows, the admission checker exports them as metrics. The health of each card is an
 * input (`health`), by default the ledger's, so the view does not care where taints are read. Pure.
 */
import { z } from 'zod';
import { KubeObjectSchema } from '../k8s/index.js';
import { MANAGED_LABEL } from '../nodefeature/index.js';
import type { CardHealth } from './device-taints.js';
import { isFreeWhole, type DeviceLedger, type PublishedCard } from './ledger.js';
import { cardOvercommit, describeOvercommit } from './overcommit.js';

/** The capacities of a card's shared device that the view reports (docs/architecture.md#resourceslices). */
const MEMORY = 'memory';
const UNITS = 'units';

export const CardClaimRowSchema = z.strictObject({
  namespace: z.string(),
  name: z.string(),
  /** The Pods it is reserved for, in its namespace. */
  pods: z.array(z.string()),
  /** It holds the whole card. */
  whole: z.boolean(),
  /** What it was promised of the card: the whole card's, or what its shares consumed. */
  memoryBytes: z.number(),
  units: z.number(),
});
export type CardClaimRow = z.infer<typeof CardClaimRowSchema>;

export const CardTaintSchema = z.strictObject({
  key: z.string(),
  value: z.string().optional(),
  effect: z.string(),
});

/** One card as `gpustack-operator cards -o json` prints it (sizes in bytes). */
export const CardRowSchema = z.strictObject({
  node: z.string(),
  /** `card-<i>`, the counter set's card. */
  card: z.string(),
  /** `<i>` of `card-<i>`; `null` for a card not named so. */
  index: z.number().int().nullable(),
  driver: z.string(),
  /** The aKey (`productKey` attribute); `null` when the slice does not say. */
  model: z.string().nullable(),
  /** The InstanceType whose pool holds the card (the first by name); `null` when none does. */
  pool: z.string().nullable(),
  /** Capacities of the shared device; `null` for a card without one. */
  memoryBytes: z.number().nullable(),
  units: z.number().nullable(),
  /** `free`: no claim holds it; `whole`: a claim holds the whole card; `shared`: claims hold shares of it. */
  state: z.enum(['free', 'whole', 'shared']),
  /** Free and no device taint keeps claims off it (cordoned, unhealthy, an owner handover): a new whole claim can take it. */
  available: z.boolean(),
  promised: z.strictObject({ memoryBytes: z.number(), units: z.number() }),
  claims: z.array(CardClaimRowSchema),
  /** `namespace/pod` of every Pod its claims are reserved for, sorted; `namespace/claim (claim)` for a claim reserved for none. */
  holders: z.array(z.string()),
  cordoned: z.boolean(),
  unhealthy: z.boolean(),
  taints: z.array(CardTaintSchema),
  /**
   * Why its claims hold more than it has (docs/operations.md#faults: a scheduler that counted an
   * allocation twice), naming the counters and the claims; `null` while within its counters.
   */
  overcommitted: z.string().nullable(),
});
export type CardRow = z.infer<typeof CardRowSchema>;

/** A device pool as an InstanceType defines it: model `productKey` on the managed nodes of one os/arch. */
export interface CardPool {
  readonly name: string;
  readonly productKey: string;
  readonly os: string;
  readonly arch: string;
}

/**
 * An InstanceType as the checker and `cards` read it: its pool (accelerator key, os, arch); the
 * rest (the ledger count the checker annotates) passes through.
 */
export const ReceivedInstanceTypeSchema = KubeObjectSchema.extend({
  spec: z
    .looseObject({
      acceleratable: z.boolean().optional(),
      acceleratorGroup: z.string().optional(),
      os: z.string().optional(),
      arch: z.string().optional(),
    })
    .optional(),
});
export type ReceivedInstanceType = z.infer<typeof ReceivedInstanceTypeSchema>;

/** What the view reads of an InstanceType (the checker's and the CLI's readings both fit). */
export interface InstanceTypeLike {
  readonly metadata: { readonly name: string };
  readonly spec?:
    | {
        readonly acceleratable?: boolean | undefined;
        readonly acceleratorGroup?: string | undefined;
        readonly os?: string | undefined;
        readonly arch?: string | undefined;
      }
    | undefined;
}

/** What the view reads of a Node: its name and labels. */
export interface NodeLike {
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> | undefined };
}

/** The device pools of these InstanceTypes, sorted by name (CPU pools have no cards and are left out). */
export function cardPoolsOf(instanceTypes: Iterable<InstanceTypeLike>): CardPool[] {
  const pools: CardPool[] = [];
  for (const type of instanceTypes) {
    const spec = type.spec;
    if (spec?.acceleratable !== true || !spec.acceleratorGroup) continue;
    pools.push({
      name: type.metadata.name,
      productKey: spec.acceleratorGroup,
      os: spec.os ?? '',
      arch: spec.arch ?? '',
    });
  }
  return pools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Which pool a card is in: a pool holds its model's cards on the managed nodes of its os/arch (as
 * the checker counts `status.devices`, docs/dra.md#free-cards). Two pools that select the same
 * cards: the first by name.
 */
export function poolResolver(
  pools: readonly CardPool[],
  nodes: Iterable<NodeLike>,
): (node: string, productKey: string | undefined) => string | undefined {
  const platformOf = new Map<string, string>();
  for (const node of nodes) {
    const labels = node.metadata.labels ?? {};
    if (labels[MANAGED_LABEL] !== 'true') continue;
    platformOf.set(node.metadata.name, `${labels['kubernetes.io/os'] ?? ''}/${labels['kubernetes.io/arch'] ?? ''}`);
  }
  const byKey = new Map<string, string>();
  for (const pool of pools) {
    const key = `${pool.productKey}\u0000${pool.os}/${pool.arch}`;
    if (!byKey.has(key)) byKey.set(key, pool.name);
  }
  return (node, productKey) => {
    const platform = platformOf.get(node);
    if (platform === undefined || productKey === undefined) return undefined;
    return byKey.get(`${productKey}\u0000${platform}`);
  };
}

export interface CardViewOptions {
  /** The card's taints. @default the ledger's `health` */
  readonly health?: (card: PublishedCard) => CardHealth;
  /** The card's pool. @default none */
  readonly poolOf?: (node: string, productKey: string | undefined) => string | undefined;
}

function capacityOf(card: PublishedCard, name: string): number | undefined {
  return Object.hasOwn(card.capacity, name) ? card.capacity[name]?.total : undefined;
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** One card's row: what its claims hold of it (`ledger.use`) and its health, as they stand. */
export function buildCardRow(ledger: DeviceLedger, card: PublishedCard, options: CardViewOptions = {}): CardRow {
  const use = ledger.use(card);
  const health = (options.health ?? ((c: PublishedCard) => ledger.health(c)))(card);
  const memory = capacityOf(card, MEMORY);
  const units = capacityOf(card, UNITS);
  const claims = use.claims.map((claim) => ({
    namespace: claim.namespace,
    name: claim.name,
    pods: [...claim.pods].sort(byText),
    whole: claim.whole,
    memoryBytes: claim.whole ? (memory ?? 0) : (claim.consumed[MEMORY] ?? 0),
    units: claim.whole ? (units ?? 0) : (claim.consumed[UNITS] ?? 0),
  }));
  const holders = new Set<string>();
  for (const claim of claims) {
    if (claim.pods.length === 0) holders.add(`${claim.namespace}/${claim.name} (claim)`);
    for (const pod of claim.pods) holders.add(`${claim.namespace}/${pod}`);
  }
  const state = use.wholeAllocated ? 'whole' : use.shares > 0 ? 'shared' : 'free';
  const over = cardOvercommit(card, use);
  const index = /-(\d+)$/.exec(card.name)?.[1];
  return {
    node: card.node,
    card: card.name,
    index: index === undefined ? null : Number(index),
    driver: card.driver,
    model: card.productKey ?? null,
    pool: options.poolOf?.(card.node, card.productKey) ?? null,
    memoryBytes: memory ?? null,
    units: units ?? null,
    state,
    available: isFreeWhole(card, use, health),
    promised:
      state === 'whole'
        ? { memoryBytes: memory ?? 0, units: units ?? 0 }
        : { memoryBytes: use.consumed[MEMORY] ?? 0, units: use.consumed[UNITS] ?? 0 },
    claims,
    holders: [...holders].sort(byText),
    cordoned: health.cordoned,
    unhealthy: health.unhealthy,
    taints: health.taints.map((t) => ({
      key: t.key,
      ...(t.value === undefined ? {} : { value: t.value }),
      effect: t.effect,
    })),
    overcommitted: over === undefined ? null : describeOvercommit(over),
  };
}

/**
 * Every card of the ledger, by node name, then driver and card index.
 * @example buildCardRows(ledger, { poolOf: poolResolver(cardPoolsOf(types), nodes) })
 * // [{ node: 'gpu-a', card: 'card-0', model: 'nvidia-h100-80gb-hbm3', state: 'whole',
 * //    holders: ['team-a/train-0'], cordoned: false, … }, …]
 */
export function buildCardRows(ledger: DeviceLedger, options: CardViewOptions = {}): CardRow[] {
  const rows: CardRow[] = [];
  for (const node of ledger.nodeNames())
    for (const card of ledger.cards(node)) rows.push(buildCardRow(ledger, card, options));
  return rows;
}

/** Which rows `gpustack-operator cards` shows: on a node, in a pool, held by claims of a namespace. */
export interface CardFilter {
  readonly node?: string | undefined;
  readonly pool?: string | undefined;
  readonly namespace?: string | undefined;
}

export function filterCardRows(rows: readonly CardRow[], filter: CardFilter): CardRow[] {
  const { node, pool, namespace } = filter;
  return rows.filter(
    (row) =>
      (node === undefined || row.node === node) &&
      (pool === undefined || row.pool === pool) &&
      (namespace === undefined || row.claims.some((c) => c.namespace === namespace)),
  );
}

/** A pool's cards as the per-pool metrics count them. */
export interface PoolCardCounts {
  readonly pool: string;
  readonly cards: number;
  /** Available: free, not cordoned, not unhealthy. */
  readonly free: number;
  readonly cordoned: number;
  readonly unhealthy: number;
  /** Held by shares. */
  readonly shared: number;
}

/** Per pool, sorted by name; cards in no pool are left out. */
export function countPoolCards(rows: Iterable<CardRow>): PoolCardCounts[] {
  const pools = new Map<string, { -readonly [K in keyof PoolCardCounts]: PoolCardCounts[K] }>();
  for (const row of rows) {
    if (row.pool === null) continue;
    let counts = pools.get(row.pool);
    if (counts === undefined)
      pools.set(row.pool, (counts = { pool: row.pool, cards: 0, free: 0, cordoned: 0, unhealthy: 0, shared: 0 }));
    counts.cards++;
    if (row.available) counts.free++;
    if (row.cordoned) counts.cordoned++;
    if (row.unhealthy) counts.unhealthy++;
    if (row.state === 'shared') counts.shared++;
  }
  return [...pools.values()].sort((a, b) => byText(a.pool, b.pool));
}

/** What one Pod holds of our cards, through the claims reserved for it. */
export interface HolderCounts {
  readonly namespace: string;
  readonly pod: string;
  /** Cards it holds whole or a share of. */
  readonly cards: number;
  readonly memoryBytes: number;
}

/** Per Pod holding a card, sorted by namespace and name; claims reserved for no Pod are left out. */
export function countHolders(rows: Iterable<CardRow>): HolderCounts[] {
  const holders = new Map<string, { namespace: string; pod: string; cards: number; memoryBytes: number }>();
  for (const row of rows) {
    const seen = new Set<string>();
    for (const claim of row.claims) {
      for (const pod of claim.pods) {
        const key = `${claim.namespace}/${pod}`;
        let holder = holders.get(key);
        if (holder === undefined)
          holders.set(key, (holder = { namespace: claim.namespace, pod, cards: 0, memoryBytes: 0 }));
        if (!seen.has(key)) holder.cards++;
        seen.add(key);
        holder.memoryBytes += claim.memoryBytes;
      }
    }
  }
  return [...holders.values()].sort((a, b) => byText(a.namespace, b.namespace) || byText(a.pod, b.pod));
}
