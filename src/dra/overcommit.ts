/**
 * @module Over-committed cards (docs/operations.md#faults): a card whose claims hold more than its
 * counters allow, which the scheduler must never allocate but did once it counted an allocation
 * twice across a kube-apiserver restart. The arithmetic is the ledger's (`buildDeviceLedger`: what
 * each claim consumed, the request policy's default for a share that records none); this module
 * only compares what a card's claims hold with what the card has. Whole and shared are exclusive
 * (both devices consume the whole counter set), so the whole device counts as all of every
 * counter. The kubelet plugin refuses a claim that would make its card so; the admission checker
 * and `gpustack-operator cards` show a card that is. Pure.
 */
import type {
  ReceivedAllocationResult,
  ReceivedResourceClaim,
  ReceivedResourceSlice,
} from './received-resource-objects.js';
import { buildDeviceLedger, type CardClaim, type CardUse, type DeviceLedger, type PublishedCard } from './ledger.js';

/** One counter of a card its claims hold more of than it has (memory in bytes, cores in percent, units). */
export interface CounterExcess {
  readonly counter: string;
  readonly held: number;
  readonly total: number;
}

/** Why a card is over-committed, and who holds it. */
export interface CardOvercommit {
  readonly node: string;
  readonly driver: string;
  /** `card-<i>`. */
  readonly card: string;
  /** The counters held beyond the card's, by name. */
  readonly exceeded: readonly CounterExcess[];
  /** The whole device held by two claims, or held whole and shared at once; `undefined` otherwise. */
  readonly exclusion: 'whole-twice' | 'whole-and-shared' | undefined;
  /** Every claim holding the card, in the ledger's order. */
  readonly claims: readonly CardClaim[];
}

/**
 * Whether `card`'s claims hold more than it has: for each capacity of its shared device (memory,
 * cores, units: the agent publishes memory and units equal to the card's counter set), the whole
 * card per claim holding its whole device plus what the shares consumed, against the total; and
 * the whole device held by more than one claim, or beside a share. `undefined`: within its counters.
 */
export function cardOvercommit(card: PublishedCard, use: CardUse): CardOvercommit | undefined {
  const wholeHolders = use.claims.filter((c) => c.whole).length;
  const exclusion =
    wholeHolders > 1 ? 'whole-twice' : wholeHolders === 1 && use.shares > 0 ? 'whole-and-shared' : undefined;
  const exceeded: CounterExcess[] = [];
  for (const counter of Object.keys(card.capacity).sort()) {
    const total = card.capacity[counter]?.total ?? 0;
    const held = wholeHolders * total + (use.consumed[counter] ?? 0);
    if (held > total) exceeded.push({ counter, held, total });
  }
  if (exclusion === undefined && exceeded.length === 0) return undefined;
  return { node: card.node, driver: card.driver, card: card.name, exceeded, exclusion, claims: use.claims };
}

/** Every over-committed card of the ledger, by node, then driver and card index. */
export function overcommittedCards(ledger: DeviceLedger): CardOvercommit[] {
  const out: CardOvercommit[] = [];
  for (const node of ledger.nodeNames())
    for (const card of ledger.cards(node)) {
      const found = cardOvercommit(card, ledger.use(card));
      if (found !== undefined) out.push(found);
    }
  return out;
}

const MiB = 2 ** 20;

/** Memory in Mi where it is a whole number of them (as the slices spell it), bytes otherwise. */
function amount(counter: string, value: number): string {
  return counter === 'memory' && Number.isInteger(value / MiB) ? `${value / MiB}Mi` : String(value);
}

function holding(claim: CardClaim): string {
  const what = claim.whole
    ? 'whole'
    : Object.keys(claim.consumed)
        .sort()
        .map((c) => `${c} ${amount(c, claim.consumed[c] ?? 0)}`)
        .join(', ');
  return `${claim.namespace}/${claim.name} (${what})`;
}

const EXCLUSION_TEXT = {
  'whole-twice': 'its whole device is held by more than one claim',
  'whole-and-shared': 'it is held whole and shared at once',
} as const;

/**
 * One sentence naming the card, the counters over and the claims holding it.
 * @example describeOvercommit(o)
 * // 'card-1 on gpu-a (nvidia.gpustack.ai) is over-committed: memory 85905Mi held of 81559Mi;
 * //  held by team-a/s1 (cores 10, memory 20480Mi, units 160000), …'
 */
export function describeOvercommit(o: CardOvercommit): string {
  const reasons = [
    ...(o.exclusion !== undefined ? [EXCLUSION_TEXT[o.exclusion]] : []),
    ...o.exceeded.map((e) => `${e.counter} ${amount(e.counter, e.held)} held of ${amount(e.counter, e.total)}`),
  ];
  return `${o.card} on ${o.node} (${o.driver}) is over-committed: ${reasons.join('; ')}; held by ${o.claims.map(holding).join(', ')}`;
}

/** What a kubelet plugin has prepared of one claim, or is asked to prepare: its allocation results on this node. */
export interface NodeClaim {
  readonly namespace: string;
  readonly name: string;
  readonly results: readonly ReceivedAllocationResult[];
}

function asClaim(claim: NodeClaim): ReceivedResourceClaim {
  return {
    metadata: { name: claim.name, namespace: claim.namespace },
    status: { allocation: { devices: { results: [...claim.results] } } },
  } as ReceivedResourceClaim;
}

/** Whether a claim may be prepared beside those already prepared on this node. */
export type PrepareCheck = { readonly ok: true } | { readonly ok: false; readonly error: string };

/**
 * Whether `claim`'s devices of `driver`, added to the claims already `prepared` on this node, keep
 * every card they touch within its counters, as `slices` (this node's, as published) give them.
 * A device of the claim that no slice publishes has no counters to check against: refused too,
 * since the scheduler cannot have allocated it from the slices as they are. Only the cards this
 * claim touches are judged: a card over its counters without it does not refuse it elsewhere.
 */
export function checkPrepare(
  slices: Iterable<ReceivedResourceSlice>,
  prepared: readonly NodeClaim[],
  claim: NodeClaim,
  driver: string,
): PrepareCheck {
  const ledger = buildDeviceLedger(slices, [...prepared, claim].map(asClaim));
  const cards = ledger.nodeNames().flatMap((node) => ledger.cards(node));
  const problems: string[] = [];
  const judged = new Set<PublishedCard>();
  for (const result of claim.results) {
    if (result.driver !== driver) continue;
    const card = cards.find(
      (c) =>
        c.driver === driver &&
        c.pool === result.pool &&
        (c.wholeDevice === result.device || c.sharedDevice === result.device),
    );
    if (card === undefined) {
      problems.push(`${result.device} is in no ResourceSlice of pool ${result.pool}: its counters are unknown`);
      continue;
    }
    if (judged.has(card)) continue;
    judged.add(card);
    const over = cardOvercommit(card, ledger.use(card));
    if (over !== undefined) problems.push(describeOvercommit(over));
  }
  if (problems.length === 0) return { ok: true };
  return {
    ok: false,
    error: `ResourceClaim ${claim.namespace}/${claim.name} not prepared: ${problems.join('; ')}`,
  };
}
