/**
 * @module Placing pods that ask for cards through claims (docs/architecture.md#ledger): free cards come from the
 * ledger (our ResourceSlices minus what ResourceClaims hold), not from Pod requests. Each pod's
 * asks are fitted on one node: shares first (onto cards already shared where they fit, then onto
 * free cards), then whole cards (only cards with neither device allocated). A share request for n
 * devices takes n distinct cards, as the scheduler allocates it. Pure.
 */
import {
  freeSharedCapacity,
  isFreeWhole,
  shareConsumption,
  type CardUse,
  type DeviceAsk,
  type PublishedCard,
  type DeviceLedger,
} from '../dra/index.js';
import type { Pool } from './pool.js';
import type { ClaimDemand } from './workload.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function matches(ask: DeviceAsk, card: PublishedCard): boolean {
  return card.driver === ask.driver && (ask.productKey === undefined || card.productKey === ask.productKey);
}

/** Which cards a set of asks may take, as a memo key: the same asks always match the same cards. */
function signatureOf(asks: readonly DeviceAsk[]): string {
  return [...new Set(asks.map((a) => `${a.driver}/${a.productKey ?? '*'}`))].sort().join(',');
}

/** The asks of one pod with what they match, worked out once per PodSet rather than once per node. */
export interface AskSet {
  readonly asks: readonly DeviceAsk[];
  readonly signature: string;
  readonly matches: (card: PublishedCard) => boolean;
  /** Whole cards one pod needs at least: a node with fewer free ones cannot fit it. */
  readonly wholeNeeded: number;
}

function askSet(asks: readonly DeviceAsk[]): AskSet {
  return {
    asks,
    signature: signatureOf(asks),
    matches: (card) => asks.some((ask) => matches(ask, card)),
    wholeNeeded: asks.reduce((sum, a) => sum + (!a.shared && a.count !== 'all' ? a.count : 0), 0),
  };
}

/** What one pod's cards become, by card: the changes `fit` found, applied by `place`. */
export type Taken = Map<PublishedCard, CardUse>;

/**
 * The cards this decision has placed pods on, as they stand after those pods (the ledger is never
 * changed): one decision's pods see each other, the next decision starts afresh.
 */
export class ClaimPlacement {
  private readonly placed = new Map<PublishedCard, CardUse>();
  private readonly touched = new Set<string>();

  constructor(readonly ledger: DeviceLedger) {}

  private now(card: PublishedCard, scratch?: ReadonlyMap<PublishedCard, CardUse>): CardUse {
    return scratch?.get(card) ?? this.placed.get(card) ?? this.ledger.use(card);
  }

  /** Free whole cards on `node` that any of `asks` could take. */
  freeWhole(node: string, asks: AskSet): number {
    // Untouched by this decision: the ledger's count, shared by every decision of the pass.
    if (!this.touched.has(node)) return this.ledger.freeWhole(node, asks.signature, asks.matches);
    let free = 0;
    for (const card of this.ledger.cards(node))
      if (asks.matches(card) && isFreeWhole(card, this.now(card), this.ledger.health(card))) free++;
    return free;
  }

  /** The cards one pod takes on `node`, or `undefined` when its asks do not all fit there. */
  fit(node: string, asks: readonly DeviceAsk[]): Taken | undefined {
    const cards = this.ledger.cards(node);
    const scratch: Taken = new Map();
    for (const ask of asks) if (ask.shared && !this.fitShares(ask, cards, scratch)) return undefined;
    for (const ask of asks) if (!ask.shared && !this.fitWhole(ask, cards, scratch)) return undefined;
    return scratch;
  }

  /** Records a pod placed by `fit`. */
  place(taken: Taken): void {
    for (const [card, after] of taken) {
      this.placed.set(card, after);
      this.touched.add(card.node);
    }
  }

  private fitWhole(ask: DeviceAsk, cards: readonly PublishedCard[], scratch: Taken): boolean {
    const matching = cards.filter((card) => matches(ask, card));
    const free = matching.filter((card) => isFreeWhole(card, this.now(card, scratch), this.ledger.health(card)));
    const wanted = ask.count === 'all' ? matching.length : ask.count;
    if (wanted === 0 || free.length < wanted) return false;
    for (const card of free.slice(0, wanted)) scratch.set(card, { ...this.now(card, scratch), wholeAllocated: true });
    return true;
  }

  private fitShares(ask: DeviceAsk, cards: readonly PublishedCard[], scratch: Taken): boolean {
    const matching = cards.filter((card) => matches(ask, card));
    const wanted = ask.count === 'all' ? matching.length : ask.count;
    if (wanted === 0) return false;
    const used = new Set<PublishedCard>();
    for (let i = 0; i < wanted; i++) {
      const chosen = this.bestShareCard(ask, matching, used, scratch);
      if (chosen === undefined) return false;
      used.add(chosen.card);
      const current = this.now(chosen.card, scratch);
      const consumed = { ...current.consumed };
      for (const [name, amount] of Object.entries(chosen.takes)) consumed[name] = (consumed[name] ?? 0) + amount;
      scratch.set(chosen.card, { ...current, shares: current.shares + 1, consumed });
    }
    return true;
  }

  /** A card already shared where the share fits, else a free card; among equals the first by index. */
  private bestShareCard(
    ask: DeviceAsk,
    matching: readonly PublishedCard[],
    used: ReadonlySet<PublishedCard>,
    scratch: Taken,
  ): { card: PublishedCard; takes: Record<string, number> } | undefined {
    let fresh: { card: PublishedCard; takes: Record<string, number> } | undefined;
    for (const card of matching) {
      if (used.has(card)) continue;
      const current = this.now(card, scratch);
      const free = freeSharedCapacity(card, current, this.ledger.health(card));
      const takes = free === undefined ? undefined : shareConsumption(card, ask.capacity);
      if (free === undefined || takes === undefined) continue;
      if (!Object.entries(takes).every(([name, amount]) => amount <= (free[name] ?? 0))) continue;
      if (current.shares > 0) return { card, takes };
      fresh ??= { card, takes };
    }
    return fresh;
  }
}

/** `2 cards + 1 share`: what one pod asks, for messages. */
export function describeAsks(asks: readonly DeviceAsk[]): string {
  let whole = 0;
  let shares = 0;
  const all: string[] = [];
  for (const ask of asks) {
    if (ask.count === 'all') all.push(ask.shared ? 'a share of every card' : 'every card');
    else if (ask.shared) shares += ask.count;
    else whole += ask.count;
  }
  const parts = [
    ...(whole > 0 ? [plural(whole, 'card')] : []),
    ...(shares > 0 ? [plural(shares, 'share')] : []),
    ...all,
  ];
  return parts.length === 0 ? 'no cards' : parts.join(' + ');
}

/** Best fit: the node that fits with the fewest free whole cards; ties by name (the pool's nodes are sorted). */
function bestNode(pool: Pool, placement: ClaimPlacement, asks: AskSet): Taken | undefined {
  let best: Taken | undefined;
  let bestFree = Infinity;
  for (const node of pool.nodes) {
    const free = placement.freeWhole(node.name, asks);
    // A node with as many free cards as the best so far cannot be a better fit: skip the fit.
    if (free >= bestFree || free < asks.wholeNeeded) continue;
    const taken = placement.fit(node.name, asks.asks);
    if (taken === undefined) continue;
    best = taken;
    bestFree = free;
  }
  return best;
}

function largestBlock(pool: Pool, placement: ClaimPlacement, asks: AskSet): string {
  let largest: { node: string; free: number } | undefined;
  for (const node of pool.nodes) {
    const free = placement.freeWhole(node.name, asks);
    if (largest === undefined || free > largest.free) largest = { node: node.name, free };
  }
  if (largest !== undefined) {
    return `the largest free block is ${plural(largest.free, 'card')} (node ${largest.node}, from ResourceSlices and ResourceClaims)`;
  }
  return pool.excluded > 0 ? 'no node of the flavor is open to its pods' : "no node carries the flavor's node labels";
}

/** Places every pod of a claim demand on `pool`, recording each; the failure message if one does not fit. */
export function placeClaimDemand(demand: ClaimDemand, pool: Pool, placement: ClaimPlacement): string | undefined {
  const asks = askSet(demand.asks);
  for (let pod = 0; pod < demand.pods; pod++) {
    const taken = bestNode(pool, placement, asks);
    if (taken !== undefined) {
      placement.place(taken);
      continue;
    }
    const excluded = pool.excluded > 0 ? `; ${plural(pool.excluded, 'node')} cordoned or tainted not counted` : '';
    return (
      `podset "${demand.podSet}": ${plural(demand.pods, 'pod')} × ${describeAsks(demand.asks)} ` +
      `by resource claims do not fit in flavor ${pool.flavor}; ${largestBlock(pool, placement, asks)}` +
      `${excluded}; will retry as capacity frees`
    );
  }
  return undefined;
}
