/**
 * @module The per-card ledger (DESIGN §8): our ResourceSlices say which cards each node has, the
 * ResourceClaims' allocations say which of them are taken, whole or by capacity. A card has two
 * devices (`card-<i>` whole, `card-<i>-shared` by capacity) consuming one counter set, so it is free
 * whole only while neither is allocated, and its shared device holds what the claims consumed.
 * Only the newest generation of each pool counts (an agent mid-update publishes the next one beside
 * the old), and an incomplete pool (fewer slices than `resourceSliceCount`) offers nothing, as the
 * scheduler does not allocate from one either. Pure.
 */
import { parseQuantity, type ManufacturerName, MANUFACTURER_NAMES } from '../k8s/index.js';
import { ATTRIBUTE, MODE_SHARED, driverName } from './constants.js';
import type {
  ReceivedDevice,
  ReceivedQuantity,
  ReceivedRequestPolicy,
  ReceivedResourceClaim,
  ReceivedResourceSlice,
} from './received.js';

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

/** One card: its devices, its model, and what the claims took of it. */
export interface LedgerCard {
  /** `card-<i>`: the counter set's card, or the device name without `-shared`. */
  readonly name: string;
  readonly node: string;
  readonly driver: string;
  readonly productKey: string | undefined;
  readonly wholeDevice: string | undefined;
  readonly sharedDevice: string | undefined;
  /** The shared device's capacities; empty when the card has no shared device. */
  readonly capacity: Readonly<Record<string, CapacityRule>>;
  readonly wholeAllocated: boolean;
  /** Allocations of the shared device. */
  readonly shares: number;
  /** Capacity taken on the shared device, by name. */
  readonly consumed: Readonly<Record<string, number>>;
}

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
  /** Capacity consumed on shared devices, summed over the cards. */
  readonly consumed: Readonly<Record<string, number>>;
  /** Free capacity per card that can still be shared (free whole cards included). */
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
  card: LedgerCard,
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

function attributeString(device: ReceivedDevice, driver: string, name: string): string | undefined {
  const attributes = device.attributes;
  if (attributes === undefined) return undefined;
  // Unqualified names are in the driver's domain; a publisher may also spell them out.
  const value = Object.hasOwn(attributes, name)
    ? attributes[name]
    : Object.hasOwn(attributes, `${driver}/${name}`)
      ? attributes[`${driver}/${name}`]
      : undefined;
  return value?.string;
}

function isSharedDevice(device: ReceivedDevice, driver: string): boolean {
  return device.allowMultipleAllocations === true || attributeString(device, driver, ATTRIBUTE.mode) === MODE_SHARED;
}

/** Both devices of a card consume its counter set; a device without one is paired by name. */
function cardName(device: ReceivedDevice, shared: boolean): string {
  const counterSet = device.consumesCounters?.[0]?.counterSet;
  if (counterSet !== undefined) return counterSet.endsWith('-counters') ? counterSet.slice(0, -9) : counterSet;
  return shared && device.name.endsWith('-shared') ? device.name.slice(0, -7) : device.name;
}

interface MutableCard {
  name: string;
  node: string;
  driver: string;
  productKey: string | undefined;
  wholeDevice: string | undefined;
  sharedDevice: string | undefined;
  capacity: Record<string, CapacityRule>;
  wholeAllocated: boolean;
  shares: number;
  consumed: Record<string, number>;
}

/** The slices of each of our pools that count: the newest generation, only when it is complete. */
function currentSlices(slices: Iterable<ReceivedResourceSlice>): {
  current: ReceivedResourceSlice[];
  incompletePools: number;
} {
  const pools = new Map<string, ReceivedResourceSlice[]>();
  for (const slice of slices) {
    if (!OUR_DRIVERS.has(slice.spec.driver)) continue;
    const key = `${slice.spec.driver}\u0000${slice.spec.pool.name}`;
    const list = pools.get(key);
    if (list === undefined) pools.set(key, [slice]);
    else list.push(slice);
  }
  const current: ReceivedResourceSlice[] = [];
  let incompletePools = 0;
  for (const list of pools.values()) {
    const newest = Math.max(...list.map((s) => s.spec.pool.generation));
    const ofNewest = list.filter((s) => s.spec.pool.generation === newest);
    const expected = Math.max(...ofNewest.map((s) => s.spec.pool.resourceSliceCount ?? 1));
    if (ofNewest.length < expected) {
      incompletePools++;
      continue;
    }
    current.push(...ofNewest);
  }
  return { current, incompletePools };
}

function addDevice(cards: Map<string, MutableCard>, byDevice: Map<string, MutableCard>, slice: ReceivedResourceSlice) {
  const { driver, pool } = slice.spec;
  const node = slice.spec.nodeName ?? pool.name;
  for (const device of slice.spec.devices ?? []) {
    const shared = isSharedDevice(device, driver);
    const name = cardName(device, shared);
    const key = `${driver}\u0000${pool.name}\u0000${name}`;
    let card = cards.get(key);
    if (card === undefined) {
      card = {
        name,
        node,
        driver,
        productKey: undefined,
        wholeDevice: undefined,
        sharedDevice: undefined,
        capacity: {},
        wholeAllocated: false,
        shares: 0,
        consumed: {},
      };
      cards.set(key, card);
    }
    card.productKey ??= attributeString(device, driver, ATTRIBUTE.productKey);
    if (shared) {
      card.sharedDevice = device.name;
      for (const [capacityName, capacity] of Object.entries(device.capacity ?? {})) {
        const total = quantity(capacity.value);
        if (total !== undefined) card.capacity[capacityName] = capacityRule(total, capacity.requestPolicy);
      }
    } else {
      card.wholeDevice = device.name;
    }
    byDevice.set(`${driver}\u0000${pool.name}\u0000${device.name}`, card);
  }
}

function recordAllocations(
  byDevice: ReadonlyMap<string, MutableCard>,
  claims: Iterable<ReceivedResourceClaim>,
): number {
  let unknown = 0;
  for (const claim of claims) {
    // An allocated claim holds its devices whether or not a pod has reserved it yet.
    for (const result of claim.status?.allocation?.devices?.results ?? []) {
      if (!OUR_DRIVERS.has(result.driver)) continue;
      const card = byDevice.get(`${result.driver}\u0000${result.pool}\u0000${result.device}`);
      if (card === undefined) {
        // A card gone from the slices (or an older pool generation): nothing left to take from.
        unknown++;
        continue;
      }
      if (result.device !== card.sharedDevice) {
        card.wholeAllocated = true;
        continue;
      }
      card.shares++;
      const consumed =
        result.consumedCapacity !== undefined
          ? Object.fromEntries(Object.entries(result.consumedCapacity).map(([k, v]) => [k, quantity(v) ?? 0]))
          : (shareConsumption(card, {}) ?? {});
      for (const [name, amount] of Object.entries(consumed)) card.consumed[name] = (card.consumed[name] ?? 0) + amount;
    }
  }
  return unknown;
}

function byName(a: { name: string }, b: { name: string }): number {
  // card-2 before card-10: compare the index numerically where both carry one.
  const na = Number(/(\d+)$/.exec(a.name)?.[1]);
  const nb = Number(/(\d+)$/.exec(b.name)?.[1]);
  if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A card nobody holds: both devices unallocated. */
export function isFreeWhole(card: LedgerCard): boolean {
  return card.wholeDevice !== undefined && !card.wholeAllocated && card.shares === 0;
}

/** Free capacity of a card that can still be shared (not allocated whole); `undefined` otherwise. */
export function freeSharedCapacity(card: LedgerCard): Record<string, number> | undefined {
  if (card.sharedDevice === undefined || card.wholeAllocated) return undefined;
  const free: Record<string, number> = {};
  for (const [name, rule] of Object.entries(card.capacity)) free[name] = rule.total - (card.consumed[name] ?? 0);
  return free;
}

/** The ledger of one moment: our cards per node, with what the claims took. */
export class DeviceLedger {
  private readonly nodes: ReadonlyMap<string, readonly LedgerCard[]>;

  constructor(
    cards: Iterable<LedgerCard>,
    /** Pools whose newest generation is incomplete: their cards are left out. */
    readonly incompletePools: number,
    /** Allocated devices of ours no current slice publishes (gone cards, old generations). */
    readonly unknownAllocations: number,
  ) {
    const nodes = new Map<string, LedgerCard[]>();
    for (const card of cards) {
      const list = nodes.get(card.node);
      if (list === undefined) nodes.set(card.node, [card]);
      else list.push(card);
    }
    for (const list of nodes.values())
      list.sort((a, b) => (a.driver !== b.driver ? (a.driver < b.driver ? -1 : 1) : byName(a, b)));
    this.nodes = nodes;
  }

  /** Our cards on `node`, by driver and then card index; empty for a node without slices. */
  cards(node: string): readonly LedgerCard[] {
    return this.nodes.get(node) ?? [];
  }

  /** Names of the nodes with at least one card, sorted. */
  nodeNames(): string[] {
    return [...this.nodes.keys()].sort();
  }

  /** Per node and model, sorted by node, then driver, then model. Cards without a model are left out. */
  summary(): NodeModelSummary[] {
    const out: NodeModelSummary[] = [];
    for (const node of this.nodeNames()) {
      const groups = new Map<string, LedgerCard[]>();
      for (const card of this.cards(node)) {
        if (card.productKey === undefined) continue;
        const key = `${card.driver}\u0000${card.productKey}`;
        const list = groups.get(key);
        if (list === undefined) groups.set(key, [card]);
        else list.push(card);
      }
      for (const key of [...groups.keys()].sort()) out.push(summarise(node, groups.get(key) ?? []));
    }
    return out;
  }
}

function summarise(node: string, cards: readonly LedgerCard[]): NodeModelSummary {
  const [first] = cards;
  const consumed: Record<string, number> = {};
  const freeShared: { card: string; free: Record<string, number> }[] = [];
  for (const card of cards) {
    for (const [name, amount] of Object.entries(card.consumed)) consumed[name] = (consumed[name] ?? 0) + amount;
    const free = freeSharedCapacity(card);
    if (free !== undefined) freeShared.push({ card: card.name, free });
  }
  return {
    node,
    driver: first?.driver ?? '',
    productKey: first?.productKey ?? '',
    published: cards.length,
    allocatedWhole: cards.filter((c) => c.wholeAllocated).length,
    sharedInUse: cards.filter((c) => c.shares > 0).length,
    freeWhole: cards.filter(isFreeWhole).length,
    consumed,
    freeShared,
  };
}

/**
 * The ledger from every ResourceSlice and ResourceClaim the caller holds: other drivers' objects
 * are skipped, only each pool's newest complete generation counts, and an allocation of a device
 * no current slice publishes takes nothing.
 * @example buildDeviceLedger(slices, claims).summary()
 * // [{ node: 'gpu-a', driver: 'nvidia.gpustack.ai', productKey: 'nvidia-h200', published: 8,
 * //    allocatedWhole: 3, sharedInUse: 1, freeWhole: 4, consumed: { memory: 21474836480, … }, freeShared: […] }]
 */
export function buildDeviceLedger(
  slices: Iterable<ReceivedResourceSlice>,
  claims: Iterable<ReceivedResourceClaim>,
): DeviceLedger {
  const { current, incompletePools } = currentSlices(slices);
  const cards = new Map<string, MutableCard>();
  const byDevice = new Map<string, MutableCard>();
  for (const slice of current) addDevice(cards, byDevice, slice);
  const unknown = recordAllocations(byDevice, claims);
  return new DeviceLedger(cards.values(), incompletePools, unknown);
}
