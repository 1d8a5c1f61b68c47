/**
 * @module The per-card ledger (docs/architecture.md#ledger): our ResourceSlices say which cards each node has, the
 * ResourceClaims' allocations say which of them are taken, whole or by capacity. A card has two
 * devices (`card-<i>` whole, `card-<i>-shared` by capacity) consuming one counter set, so it is free
 * whole only while neither is allocated, and its shared device holds what the claims consumed.
 * Only the newest generation of each pool counts (an agent mid-update publishes the next one beside
 * the old), a pool counts only on the node it is named after (a slice of node A in a pool named
 * after node B is nobody's), and an incomplete pool (fewer slices than `resourceSliceCount`) offers nothing, as the
 * scheduler does not allocate from one either. A card with a blocking device taint on either
 * device (its slices' or a DeviceTaintRule's, device-taints.ts) is not free, whole or shared:
 * the scheduler allocates neither device to a claim that does not tolerate it. Pure.
 */
import { parseQuantity, type ManufacturerName, MANUFACTURER_NAMES } from '../k8s/index.js';
import { ATTRIBUTE, MODE_SHARED, driverName } from './constants.js';
import {
  UNTAINTED,
  cardHealth,
  ruleSelects,
  type CardHealth,
  type ReceivedDeviceTaint,
  type ReceivedDeviceTaintRule,
} from './device-taints.js';
import type {
  ReceivedDevice,
  ReceivedQuantity,
  ReceivedRequestPolicy,
  ReceivedResourceClaim,
  ReceivedResourceSlice,
} from './received-resource-objects.js';

/** How one capacity of a shared device is handed out, in numbers (bytes for memory). */
export interface CapacityRule {
  readonly total: number;
  readonly default?: number;
  readonly min?: number;
  readonly max?: number;
  readonly step?: number;
  /** Sorted ascending. */
  readonly validValues?: readonly number[];
}

/**
 * One card as our ResourceSlices publish it (what the ledger knows of a detected `Card`): its
 * devices and model. Fixed while its pool's slices are.
 */
export interface PublishedCard {
  /** `card-<i>`: the counter set's card, or the device name without `-shared`. */
  readonly name: string;
  readonly node: string;
  readonly driver: string;
  /** The pool its slices publish it in (ours: named after the node). */
  readonly pool: string;
  readonly productKey: string | undefined;
  readonly wholeDevice: string | undefined;
  readonly sharedDevice: string | undefined;
  /** The shared device's capacities; empty when the card has no shared device. */
  readonly capacity: Readonly<Record<string, CapacityRule>>;
  /** The taints its slices publish on either device (the agent's `gpustack.ai/unhealthy`). */
  readonly taints: readonly ReceivedDeviceTaint[];
}

/** One ResourceClaim's hold on a card: who holds it (`gpustack-operator cards`, the holders' metrics). */
export interface CardClaim {
  readonly namespace: string;
  readonly name: string;
  /** The Pods it is reserved for (`status.reservedFor`), in its namespace; none while only allocated. */
  readonly pods: readonly string[];
  /** It holds the whole device. */
  readonly whole: boolean;
  /** What its allocations of the shared device took, by capacity (empty for the whole device). */
  readonly consumed: Readonly<Record<string, number>>;
}

/** What the claims hold of one card. */
export interface CardUse {
  readonly wholeAllocated: boolean;
  /** Allocations of the shared device. */
  readonly shares: number;
  /** Capacity taken on the shared device, by name. */
  readonly consumed: Readonly<Record<string, number>>;
  /** The claims holding it, in the order the ledger met them (one entry per claim). */
  readonly claims: readonly CardClaim[];
}

/** A card nobody holds. */
export const UNUSED: CardUse = Object.freeze({
  wholeAllocated: false,
  shares: 0,
  consumed: Object.freeze({}),
  claims: Object.freeze([]),
});

/** Per node and model: what the summary columns of the InstanceType and the checker's messages say. */
export interface NodeModelSummary {
  readonly node: string;
  readonly driver: string;
  readonly productKey: string;
  readonly published: number;
  readonly allocatedWhole: number;
  /** Cards with at least one share allocated. */
  readonly sharedInUse: number;
  readonly freeWhole: number;
  /** Cards a blocking taint keeps new claims off (cordoned, unhealthy or other), held or not. */
  readonly tainted: number;
  /** Capacity consumed on shared devices, summed over the cards. */
  readonly consumed: Readonly<Record<string, number>>;
  /** Free capacity per card that can still be shared (free whole cards included; tainted cards not). */
  readonly freeShared: readonly { readonly card: string; readonly free: Readonly<Record<string, number>> }[];
}

const OUR_DRIVERS: ReadonlyMap<string, ManufacturerName> = new Map(MANUFACTURER_NAMES.map((m) => [driverName(m), m]));

/** The manufacturer whose driver this is, or `undefined` for another vendor's driver. */
export function manufacturerOfDriver(driver: string): ManufacturerName | undefined {
  return OUR_DRIVERS.get(driver);
}

function quantity(value: ReceivedQuantity | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'number' ? value : parseQuantity(value);
  return n !== undefined && Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Capacity rules by their spelling, for one build: 5,000 nodes publish 80,000 devices whose
 * capacities are spelled alike, so each distinct spelling is parsed once, not 240,000 times.
 */
class RuleCache {
  private readonly rules = new Map<string, CapacityRule | null>();

  rule(capacity: {
    value: ReceivedQuantity;
    requestPolicy?: ReceivedRequestPolicy | undefined;
  }): CapacityRule | undefined {
    const policy = capacity.requestPolicy;
    const range = policy?.validRange;
    const key =
      policy === undefined
        ? String(capacity.value)
        : `${capacity.value}|${policy.default}|${range?.min}|${range?.max}|${range?.step}|${policy.validValues?.join(',')}`;
    let rule = this.rules.get(key);
    if (rule === undefined) {
      const total = quantity(capacity.value);
      rule = total === undefined ? null : capacityRule(total, policy);
      this.rules.set(key, rule);
    }
    return rule ?? undefined;
  }
}

function setIfDefined<K extends string>(out: Partial<Record<K, number>>, key: K, value: number | undefined): void {
  if (value !== undefined) out[key] = value;
}

function capacityRule(total: number, policy: ReceivedRequestPolicy | undefined): CapacityRule {
  const rule: { -readonly [K in keyof CapacityRule]?: CapacityRule[K] } = { total };
  setIfDefined(rule, 'default', quantity(policy?.default));
  setIfDefined(rule, 'min', quantity(policy?.validRange?.min));
  setIfDefined(rule, 'max', quantity(policy?.validRange?.max));
  setIfDefined(rule, 'step', quantity(policy?.validRange?.step));
  const values = policy?.validValues?.map(quantity).filter((v): v is number => v !== undefined);
  if (values !== undefined && values.length > 0) rule.validValues = values.sort((a, b) => a - b);
  return rule as CapacityRule;
}

/**
 * What a request on a shared device takes of one capacity (KEP-5075): a request is rounded up to
 * the next valid value, or to the range's minimum and step; no request takes the policy's default,
 * or without a policy the whole capacity. `undefined`: no amount of this capacity satisfies it.
 */
export function consumedAmount(rule: CapacityRule, requested: number | undefined): number | undefined {
  if (requested === undefined) return rule.default ?? rule.total;
  let amount = requested;
  if (rule.validValues !== undefined) {
    amount = rule.validValues.find((v) => v >= requested) ?? NaN;
  } else if (rule.min !== undefined || rule.step !== undefined) {
    const min = rule.min ?? 0;
    amount = Math.max(amount, min);
    if (rule.step !== undefined && rule.step > 0) amount = min + Math.ceil((amount - min) / rule.step) * rule.step;
    if (rule.max !== undefined && amount > rule.max) return undefined;
  }
  return Number.isNaN(amount) || amount > rule.total ? undefined : amount;
}

/**
 * What one allocation of `card`'s shared device with these capacity requests takes, by capacity;
 * `undefined` when the card cannot serve them (a capacity it lacks, or more than any valid amount).
 */
export function shareConsumption(
  card: PublishedCard,
  requests: Readonly<Record<string, number>>,
): Record<string, number> | undefined {
  if (card.sharedDevice === undefined) return undefined;
  for (const name of Object.keys(requests)) if (!Object.hasOwn(card.capacity, name)) return undefined;
  const out: Record<string, number> = {};
  for (const [name, rule] of Object.entries(card.capacity)) {
    const amount = consumedAmount(rule, Object.hasOwn(requests, name) ? requests[name] : undefined);
    if (amount === undefined) return undefined;
    out[name] = amount;
  }
  return out;
}

/** Neither device of the card is allocated, and no taint keeps new claims off it. */
export function isFreeWhole(card: PublishedCard, use: CardUse, health: CardHealth = UNTAINTED): boolean {
  return card.wholeDevice !== undefined && !use.wholeAllocated && use.shares === 0 && !health.blocked;
}

/**
 * Free capacity of a card that can still be shared (not allocated whole, not tainted: the taint of
 * a card is on both its devices); `undefined` otherwise.
 */
export function freeSharedCapacity(
  card: PublishedCard,
  use: CardUse,
  health: CardHealth = UNTAINTED,
): Record<string, number> | undefined {
  if (card.sharedDevice === undefined || use.wholeAllocated || health.blocked) return undefined;
  const free: Record<string, number> = {};
  for (const [name, rule] of Object.entries(card.capacity)) free[name] = rule.total - (use.consumed[name] ?? 0);
  return free;
}

function attributeString(device: ReceivedDevice, driver: string, name: string): string | undefined {
  const attributes = device.attributes;
  if (attributes === undefined) return undefined;
  // Unqualified names are in the driver's domain; a publisher may also spell them out.
  if (Object.hasOwn(attributes, name)) return attributes[name]?.string;
  const qualified = `${driver}/${name}`;
  return Object.hasOwn(attributes, qualified) ? attributes[qualified]?.string : undefined;
}

/** The card's multi-allocatable device (`card-<i>-shared`), the one whose capacity is handed out. */
export function isSharedDevice(device: ReceivedDevice, driver: string): boolean {
  return device.allowMultipleAllocations === true || attributeString(device, driver, ATTRIBUTE.mode) === MODE_SHARED;
}

/** Both devices of a card consume its counter set; a device without one is paired by name. */
function cardName(device: ReceivedDevice, shared: boolean): string {
  const counterSet = device.consumesCounters?.[0]?.counterSet;
  if (counterSet !== undefined) return counterSet.endsWith('-counters') ? counterSet.slice(0, -9) : counterSet;
  return shared && device.name.endsWith('-shared') ? device.name.slice(0, -7) : device.name;
}

/** card-2 before card-10: the index compared as a number where both names end in one. */
function byCardName(a: PublishedCard, b: PublishedCard): number {
  const na = Number(/(\d+)$/.exec(a.name)?.[1]);
  const nb = Number(/(\d+)$/.exec(b.name)?.[1]);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** One pool's current slices turned into cards, and its devices by name (for the claims' results). */
interface PoolCards {
  readonly slices: readonly ReceivedResourceSlice[];
  readonly cards: readonly PublishedCard[];
  readonly byDevice: ReadonlyMap<string, PublishedCard>;
}

function poolCards(slices: readonly ReceivedResourceSlice[], rules: RuleCache): PoolCards {
  type Building = { -readonly [K in keyof PublishedCard]: PublishedCard[K] } & {
    capacity: Record<string, CapacityRule>;
    taints: ReceivedDeviceTaint[];
  };
  const cards = new Map<string, Building>();
  const devices: [string, Building][] = [];
  for (const slice of slices) {
    const { driver, pool } = slice.spec;
    const node = slice.spec.nodeName ?? pool.name;
    for (const device of slice.spec.devices ?? []) {
      const shared = isSharedDevice(device, driver);
      const name = cardName(device, shared);
      let card = cards.get(name);
      if (card === undefined) {
        card = {
          name,
          node,
          driver,
          pool: pool.name,
          productKey: undefined,
          wholeDevice: undefined,
          sharedDevice: undefined,
          capacity: {},
          taints: [],
        };
        cards.set(name, card);
      }
      card.productKey ??= attributeString(device, driver, ATTRIBUTE.productKey);
      if (device.taints !== undefined) card.taints.push(...device.taints);
      if (shared) {
        card.sharedDevice = device.name;
        for (const [capacityName, capacity] of Object.entries(device.capacity ?? {})) {
          const rule = rules.rule(capacity);
          if (rule !== undefined) card.capacity[capacityName] = rule;
        }
      } else {
        card.wholeDevice = device.name;
      }
      devices.push([device.name, card]);
    }
  }
  return { slices, cards: [...cards.values()].sort(byCardName), byDevice: new Map(devices) };
}

function sameSlices(a: readonly ReceivedResourceSlice[], b: readonly ReceivedResourceSlice[]): boolean {
  return a.length === b.length && a.every((slice, i) => slice === b[i]);
}

/**
 * The cards of each pool from the last build, reused while the pool's slices are the same
 * objects (an informer's store replaces an object on change, never edits it): a pass over 5,000
 * unchanged pools then turns no slice into cards again. Memoisation only: a build with a cache
 * gives the ledger a build without one gives.
 */
export class SliceCache {
  private pools = new Map<string, PoolCards>();
  private readonly rules = new RuleCache();

  /** The pools' cards for this build's current slices; forgets pools no longer current. */
  cardsOf(current: ReadonlyMap<string, readonly ReceivedResourceSlice[]>): Map<string, PoolCards> {
    const next = new Map<string, PoolCards>();
    for (const [key, slices] of current) {
      const known = this.pools.get(key);
      next.set(key, known !== undefined && sameSlices(known.slices, slices) ? known : poolCards(slices, this.rules));
    }
    this.pools = next;
    return next;
  }
}

/**
 * The slices of each of our pools that count (the newest generation, only when it is complete), by
 * driver and node: a pool counts only on the node it is named after.
 */
function currentPools(slices: Iterable<ReceivedResourceSlice>): {
  current: Map<string, ReceivedResourceSlice[]>;
  incompletePools: number;
} {
  const pools = new Map<string, ReceivedResourceSlice[]>();
  for (const slice of slices) {
    if (!OUR_DRIVERS.has(slice.spec.driver)) continue;
    // Our pools are named after their node: a slice whose pool names another node (or that names
    // no node) is not one of ours, whoever wrote it, and must not mix into that node's pool.
    if (slice.spec.nodeName === undefined || slice.spec.pool.name !== slice.spec.nodeName) continue;
    const key = `${slice.spec.driver}\u0000${slice.spec.pool.name}`;
    const list = pools.get(key);
    if (list === undefined) pools.set(key, [slice]);
    else list.push(slice);
  }
  let incompletePools = 0;
  for (const [key, list] of pools) {
    let newest = 0;
    for (const slice of list) newest = Math.max(newest, slice.spec.pool.generation);
    const ofNewest = list.filter((s) => s.spec.pool.generation === newest);
    let expected = 1;
    for (const slice of ofNewest) expected = Math.max(expected, slice.spec.pool.resourceSliceCount ?? 1);
    if (ofNewest.length < expected) {
      incompletePools++;
      pools.delete(key);
    } else if (ofNewest.length !== list.length) {
      pools.set(key, ofNewest);
    }
  }
  return { current: pools, incompletePools };
}

interface MutableClaim {
  readonly namespace: string;
  readonly name: string;
  readonly pods: readonly string[];
  whole: boolean;
  consumed: Record<string, number>;
}

interface MutableUse {
  wholeAllocated: boolean;
  shares: number;
  consumed: Record<string, number>;
  claims: MutableClaim[];
}

/** The claim's entry on a card's use: one per claim, however many of the card's devices it holds. */
function claimEntry(use: MutableUse, claim: ReceivedResourceClaim): MutableClaim {
  const { namespace = '', name } = claim.metadata;
  // A claim's results on one card come together (its results are read in a row).
  const last = use.claims.at(-1);
  if (last !== undefined && last.name === name && last.namespace === namespace) return last;
  const pods = (claim.status?.reservedFor ?? []).flatMap((r) => (r.name === undefined ? [] : [r.name]));
  const entry: MutableClaim = { namespace, name, pods, whole: false, consumed: {} };
  use.claims.push(entry);
  return entry;
}

function addConsumed(into: Record<string, number>, name: string, amount: number): void {
  into[name] = (into[name] ?? 0) + amount;
}

function recordAllocations(
  pools: ReadonlyMap<string, PoolCards>,
  claims: Iterable<ReceivedResourceClaim>,
): { uses: Map<PublishedCard, MutableUse>; unknown: number } {
  const uses = new Map<PublishedCard, MutableUse>();
  let unknown = 0;
  for (const claim of claims) {
    // An allocated claim holds its devices whether or not a pod has reserved it yet.
    for (const result of claim.status?.allocation?.devices?.results ?? []) {
      if (!OUR_DRIVERS.has(result.driver)) continue;
      const card = pools.get(`${result.driver}\u0000${result.pool}`)?.byDevice.get(result.device);
      if (card === undefined) {
        // A card gone from the slices (or an older pool generation): nothing left to take from.
        unknown++;
        continue;
      }
      let use = uses.get(card);
      if (use === undefined) uses.set(card, (use = { wholeAllocated: false, shares: 0, consumed: {}, claims: [] }));
      const holder = claimEntry(use, claim);
      if (result.device !== card.sharedDevice) {
        use.wholeAllocated = true;
        holder.whole = true;
        continue;
      }
      use.shares++;
      if (result.consumedCapacity !== undefined) {
        for (const [name, raw] of Object.entries(result.consumedCapacity)) {
          addConsumed(use.consumed, name, quantity(raw) ?? 0);
          addConsumed(holder.consumed, name, quantity(raw) ?? 0);
        }
      } else {
        for (const [name, amount] of Object.entries(shareConsumption(card, {}) ?? {})) {
          addConsumed(use.consumed, name, amount);
          addConsumed(holder.consumed, name, amount);
        }
      }
    }
  }
  return { uses, unknown };
}

/**
 * The health of every card with a taint: its slices' taints and those of the rules selecting either
 * of its devices (rules are few, so each is matched against the pools it can select; a rule naming
 * its driver and pool looks at that pool only). Other drivers' devices are not ours to count.
 */
function recordHealth(
  pools: ReadonlyMap<string, PoolCards>,
  rules: Iterable<ReceivedDeviceTaintRule>,
): Map<PublishedCard, CardHealth> {
  const taints = new Map<PublishedCard, ReceivedDeviceTaint[]>();
  const add = (card: PublishedCard, more: readonly ReceivedDeviceTaint[]) => {
    const list = taints.get(card);
    if (list === undefined) taints.set(card, [...more]);
    else list.push(...more);
  };
  for (const pool of pools.values()) for (const card of pool.cards) if (card.taints.length > 0) add(card, card.taints);
  for (const rule of rules) {
    const selector = rule.spec.deviceSelector;
    const named = selector?.driver !== undefined && selector.pool !== undefined;
    const one = named ? pools.get(`${selector.driver}\u0000${selector.pool}`) : undefined;
    const candidates = !named ? pools.values() : one !== undefined ? [one] : [];
    for (const pool of candidates) {
      const [first] = pool.slices;
      if (first === undefined) continue;
      const { driver } = first.spec;
      const poolName = first.spec.pool.name;
      const devices = selector?.device !== undefined ? [selector.device] : pool.byDevice.keys();
      for (const device of devices) {
        const card = pool.byDevice.get(device);
        if (card !== undefined && ruleSelects(rule, driver, poolName, device)) add(card, [rule.spec.taint]);
      }
    }
  }
  const health = new Map<PublishedCard, CardHealth>();
  for (const [card, list] of taints) health.set(card, cardHealth(list));
  return health;
}

/** The ledger of one moment: our cards per node, and what the claims hold of each. */
export class DeviceLedger {
  private readonly freeWholeMemo = new Map<string, Map<string, number>>();

  constructor(
    private readonly nodes: ReadonlyMap<string, readonly PublishedCard[]>,
    private readonly uses: ReadonlyMap<PublishedCard, CardUse>,
    /** Pools whose newest generation is incomplete: their cards are left out. */
    readonly incompletePools: number,
    /** Allocated devices of ours no current slice publishes (gone cards, old generations). */
    readonly unknownAllocations: number,
    /** Cards with a taint; every other card is `UNTAINTED`. */
    private readonly healths: ReadonlyMap<PublishedCard, CardHealth> = new Map(),
  ) {}

  /** Our cards on `node`, by driver and then card index; empty for a node without slices. */
  cards(node: string): readonly PublishedCard[] {
    return this.nodes.get(node) ?? [];
  }

  /** What the claims hold of `card`. */
  use(card: PublishedCard): CardUse {
    return this.uses.get(card) ?? UNUSED;
  }

  /**
   * The taints on `card` (its slices' and the DeviceTaintRules'): a card with one that blocks
   * (cordoned, unhealthy, or any other `NoSchedule`/`NoExecute`) is not free, whole or shared.
   */
  health(card: PublishedCard): CardHealth {
    return this.healths.get(card) ?? UNTAINTED;
  }

  /**
   * Free whole cards on `node` that `matches` accepts, remembered under `signature` (the same
   * signature must always come with the same predicate): every decision of a pass asks it of every
   * node of a pool, so each node is counted once per kind of ask, not once per pod.
   */
  freeWhole(node: string, signature: string, matches: (card: PublishedCard) => boolean): number {
    let bySignature = this.freeWholeMemo.get(signature);
    if (bySignature === undefined) this.freeWholeMemo.set(signature, (bySignature = new Map()));
    let free = bySignature.get(node);
    if (free === undefined) {
      free = 0;
      for (const card of this.cards(node))
        if (matches(card) && isFreeWhole(card, this.use(card), this.health(card))) free++;
      bySignature.set(node, free);
    }
    return free;
  }

  /** Names of the nodes with at least one card, sorted. */
  nodeNames(): string[] {
    return [...this.nodes.keys()].sort();
  }

  /** Per node and model, sorted by node, then driver, then model. Cards without a model are left out. */
  summary(): NodeModelSummary[] {
    const out: NodeModelSummary[] = [];
    for (const node of this.nodeNames()) {
      const groups = new Map<string, PublishedCard[]>();
      for (const card of this.cards(node)) {
        if (card.productKey === undefined) continue;
        const key = `${card.driver}\u0000${card.productKey}`;
        const list = groups.get(key);
        if (list === undefined) groups.set(key, [card]);
        else list.push(card);
      }
      for (const key of [...groups.keys()].sort()) out.push(this.summarise(node, groups.get(key) ?? []));
    }
    return out;
  }

  private summarise(node: string, cards: readonly PublishedCard[]): NodeModelSummary {
    const [first] = cards;
    const consumed: Record<string, number> = {};
    const freeShared: { card: string; free: Record<string, number> }[] = [];
    let allocatedWhole = 0;
    let sharedInUse = 0;
    let freeWhole = 0;
    let tainted = 0;
    for (const card of cards) {
      const use = this.use(card);
      const health = this.health(card);
      for (const [name, amount] of Object.entries(use.consumed)) consumed[name] = (consumed[name] ?? 0) + amount;
      const free = freeSharedCapacity(card, use, health);
      if (free !== undefined) freeShared.push({ card: card.name, free });
      if (use.wholeAllocated) allocatedWhole++;
      if (use.shares > 0) sharedInUse++;
      if (health.blocked) tainted++;
      if (isFreeWhole(card, use, health)) freeWhole++;
    }
    return {
      node,
      driver: first?.driver ?? '',
      productKey: first?.productKey ?? '',
      published: cards.length,
      allocatedWhole,
      sharedInUse,
      freeWhole,
      tainted,
      consumed,
      freeShared,
    };
  }
}

/**
 * The ledger from every ResourceSlice and ResourceClaim the caller holds: other drivers' objects
 * are skipped, only each pool's newest complete generation counts, and an allocation of a device
 * no current slice publishes takes nothing. `cache` (kept by the caller across builds) spares
 * turning unchanged pools into cards again. `taintRules` are the cluster's DeviceTaintRules (the
 * slices never show them): a card either of whose devices a rule selects carries its taint.
 * @example buildDeviceLedger(slices, claims).summary()
 * // [{ node: 'gpu-a', driver: 'nvidia.gpustack.ai', productKey: 'nvidia-h200', published: 8,
 * //    allocatedWhole: 3, sharedInUse: 1, freeWhole: 4, consumed: { memory: 21474836480, … }, freeShared: […] }]
 */
export function buildDeviceLedger(
  slices: Iterable<ReceivedResourceSlice>,
  claims: Iterable<ReceivedResourceClaim>,
  cache: SliceCache = new SliceCache(),
  taintRules: Iterable<ReceivedDeviceTaintRule> = [],
): DeviceLedger {
  const { current, incompletePools } = currentPools(slices);
  const pools = cache.cardsOf(current);
  const nodes = new Map<string, PublishedCard[]>();
  for (const key of [...pools.keys()].sort()) {
    for (const card of pools.get(key)?.cards ?? []) {
      const list = nodes.get(card.node);
      if (list === undefined) nodes.set(card.node, [card]);
      else list.push(card);
    }
  }
  const { uses, unknown } = recordAllocations(pools, claims);
  return new DeviceLedger(nodes, uses, incompletePools, unknown, recordHealth(pools, taintRules));
}
