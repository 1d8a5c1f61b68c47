/**
 * @module The ResourceSlices one node publishes (docs/architecture.md#resourceslices): per manufacturer with cards, one pool
 * named after the node for driver `<mfr>.gpustack.ai`. Every card has a counter set
 * `{memory, units}` (in slices that carry only counters) and two devices that both consume all
 * of it, so a card is allocated whole or shared, never both: `card-<i>` (exclusive) and
 * `card-<i>-shared` (multi-allocatable by capacity, a claim without a capacity request gets one
 * tenth). The pool's generation is the publisher's business; the builder writes 0.
 */
import {
  MAX_CARD_MEMORY_MIB,
  constructAcceleratorKey,
  deviceAcceleratorKeys,
  fnv1a64Hex,
} from '../nodefeature/index.js';
import { isManufacturer, type Card } from '../contracts/index.js';
import { formatDecimalQuantity, type ManufacturerName } from '../k8s/index.js';
import {
  ATTRIBUTE,
  CAPACITY,
  CORES_PER_CARD,
  LIMITS,
  MIN_SLICE_MEMORY,
  MODE_SHARED,
  MODE_WHOLE,
  RESOURCE_API_VERSION,
  SHARES_PER_CARD,
  UNITS_PER_CARD,
  counterSetName,
  driverName,
  sharedDeviceName,
  wholeDeviceName,
} from './constants.js';
import {
  ATTRIBUTE_VALUE_MAX,
  ResourceSliceSchema,
  type CounterSet,
  type DeviceAttribute,
  type DeviceCapacity,
  type ResourceSlice,
  type SliceDevice,
} from './resource-slice.js';
import { unhealthyTaint, type CardProblem } from './device-health.js';
import { OWNER_TAINT } from './device-owner.js';

/**
 * One card to publish: a detected `Card` (strings already cut at NUL; memory that is not a number,
 * ≤ 0 or beyond 16 TiB is published without memory capacity and counter), and why it is unhealthy
 * if it is.
 */
export interface SliceCard extends Card {
  /** Why the card is unhealthy: both of its devices are published with a `NoSchedule` taint. */
  readonly problem?: CardProblem | undefined;
  /**
   * The node's device plugin is taking the card's manufacturer over while claims still hold some of
   * its cards (docs/architecture.md#device-owner): both devices are tainted `gpustack.ai/device-owner`, so no new claim lands.
   */
  readonly handover?: boolean | undefined;
}

/** The Node the slices belong to: the owner reference needs its uid, so they go with it. */
export interface SliceNode {
  readonly name: string;
  /** `undefined` (`detect`, no API server): no owner reference. */
  readonly uid?: string | undefined;
}

/** The desired slices of one manufacturer's pool, in name order: counter slices, then device slices. */
export interface DesiredPool {
  readonly manufacturer: ManufacturerName;
  readonly driver: string;
  readonly slices: readonly ResourceSlice[];
}

export interface DesiredSlices {
  /** One pool per manufacturer with at least one card, by manufacturer name. */
  readonly pools: readonly DesiredPool[];
  /** What was left out or published without a figure, one sentence each (the agent logs them). */
  readonly problems: readonly string[];
}

/** Cards per counter slice (one counter set each) and per device slice (two devices each). */
export const CARDS_PER_COUNTER_SLICE = LIMITS.counterSetsPerSlice;
export const CARDS_PER_DEVICE_SLICE = Math.floor(LIMITS.devicesPerSliceWithCounters / 2);

const SLICE_NAME_MAX = 253;
/** Room kept for `-<mfr>-counters-<n>` after the node part of a slice name. */
const SLICE_SUFFIX_ROOM = 40;

/**
 * `<node>-<mfr>-counters-<n>` / `<node>-<mfr>-devices-<n>`. A node name too long to leave room is
 * cut and followed by the FNV-1a hash of the whole name, so two long names that share a prefix
 * never share slices.
 * @example sliceName('gpu-1', 'nvidia', 'devices', 0) // 'gpu-1-nvidia-devices-0'
 */
export function sliceName(node: string, mfr: ManufacturerName, part: 'counters' | 'devices', n: number): string {
  const room = SLICE_NAME_MAX - SLICE_SUFFIX_ROOM;
  const nodePart = node.length <= room ? node : `${node.slice(0, room - 17).replace(/[-.]+$/, '')}-${fnv1a64Hex(node)}`;
  return `${nodePart}-${mfr}-${part}-${n}`;
}

/** `9.0` → `9.0.0`, `550.54.15` stays; `535.104.05`, `gfx942`, `CANN 8.0` are not semver-like. */
function asVersion(text: string): string | undefined {
  if (!/^(0|[1-9]\d*)(\.(0|[1-9]\d*)){0,2}$/.test(text)) return undefined;
  const parts = text.split('.');
  while (parts.length < 3) parts.push('0');
  return parts.join('.');
}

function textAttribute(text: string | undefined): DeviceAttribute | undefined {
  const value = text?.trim().slice(0, ATTRIBUTE_VALUE_MAX);
  return value ? { string: value } : undefined;
}

function versionAttribute(text: string | undefined): DeviceAttribute | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  const version = asVersion(value);
  return version !== undefined ? { version } : textAttribute(value);
}

function plausibleMemory(memory: number | undefined): number | undefined {
  if (typeof memory !== 'number' || !Number.isFinite(memory) || memory < 1 || memory > MAX_CARD_MEMORY_MIB)
    return undefined;
  return Math.floor(memory);
}

function attributesOf(card: SliceCard, mfr: ManufacturerName, productKey: string): Record<string, DeviceAttribute> {
  const attributes: Record<string, DeviceAttribute | undefined> = {
    [ATTRIBUTE.manufacturer]: { string: mfr },
    [ATTRIBUTE.productKey]: { string: productKey },
    [ATTRIBUTE.productName]: textAttribute(card.product),
    [ATTRIBUTE.family]: textAttribute(card.family),
    [ATTRIBUTE.computeCapability]: versionAttribute(card.computeCapability),
    [ATTRIBUTE.driverVersion]: versionAttribute(card.driverVersion),
    [ATTRIBUTE.uuid]: textAttribute(card.uuid),
    [ATTRIBUTE.index]: { int: card.index },
    [ATTRIBUTE.pciBusID]: textAttribute(card.pciBusId),
    [ATTRIBUTE.numaNode]:
      typeof card.numaNode === 'number' && Number.isInteger(card.numaNode) && card.numaNode >= 0
        ? { int: card.numaNode }
        : undefined,
    // resource.kubernetes.io/pcieRoot is left out: upstream defines it as the root complex
    // (`pci<domain>:<bus>`) found by resolving the device's path in sysfs, which the bus id
    // alone does not give (a card on bus 0x18 may hang under root bus 0x17 or 0x00).
  };
  return Object.fromEntries(Object.entries(attributes).filter((e): e is [string, DeviceAttribute] => !!e[1]));
}

interface CardFigures {
  readonly memoryMiB: number | undefined;
}

function counters(figures: CardFigures): Record<string, { value: string }> {
  return {
    ...(figures.memoryMiB !== undefined ? { [CAPACITY.memory]: { value: `${figures.memoryMiB}Mi` } } : {}),
    [CAPACITY.units]: { value: formatDecimalQuantity(UNITS_PER_CARD) },
  };
}

function wholeCapacity(figures: CardFigures): Record<string, DeviceCapacity> {
  return {
    ...(figures.memoryMiB !== undefined ? { [CAPACITY.memory]: { value: `${figures.memoryMiB}Mi` } } : {}),
    [CAPACITY.cores]: { value: String(CORES_PER_CARD) },
    [CAPACITY.units]: { value: formatDecimalQuantity(UNITS_PER_CARD) },
  };
}

const MIN_SLICE_MEMORY_MIB = 1024;

/**
 * A tenth of the card by default; memory at least 1Gi (a card under 1Gi: the whole card), and
 * the default never under the minimum, which the API requires.
 */
function sharedCapacity(figures: CardFigures): Record<string, DeviceCapacity> {
  const capacity: Record<string, DeviceCapacity> = {};
  if (figures.memoryMiB !== undefined) {
    const min = Math.min(MIN_SLICE_MEMORY_MIB, figures.memoryMiB);
    const share = Math.max(min, Math.floor(figures.memoryMiB / SHARES_PER_CARD));
    capacity[CAPACITY.memory] = {
      value: `${figures.memoryMiB}Mi`,
      requestPolicy: {
        default: `${share}Mi`,
        validRange: { min: min === MIN_SLICE_MEMORY_MIB ? MIN_SLICE_MEMORY : `${min}Mi` },
      },
    };
  }
  capacity[CAPACITY.cores] = {
    value: String(CORES_PER_CARD),
    requestPolicy: { default: String(CORES_PER_CARD / SHARES_PER_CARD), validRange: { min: '1' } },
  };
  capacity[CAPACITY.units] = {
    value: formatDecimalQuantity(UNITS_PER_CARD),
    requestPolicy: {
      default: formatDecimalQuantity(UNITS_PER_CARD / SHARES_PER_CARD),
      validRange: { min: '1' },
    },
  };
  return capacity;
}

interface PlacedCard {
  readonly card: SliceCard;
  readonly productKey: string;
  readonly figures: CardFigures;
}

function devicesOf(placed: PlacedCard, mfr: ManufacturerName): SliceDevice[] {
  const { card, productKey, figures } = placed;
  const attributes = attributesOf(card, mfr, productKey);
  const consumesCounters = [{ counterSet: counterSetName(card.index), counters: counters(figures) }];
  const list = [
    ...(card.problem !== undefined ? [unhealthyTaint(card.problem)] : []),
    ...(card.handover === true ? [OWNER_TAINT] : []),
  ];
  const taints = list.length > 0 ? { taints: list } : {};
  return [
    {
      name: wholeDeviceName(card.index),
      attributes: { ...attributes, [ATTRIBUTE.mode]: { string: MODE_WHOLE } },
      capacity: wholeCapacity(figures),
      consumesCounters,
      ...taints,
    },
    {
      name: sharedDeviceName(card.index),
      attributes: { ...attributes, [ATTRIBUTE.mode]: { string: MODE_SHARED } },
      capacity: sharedCapacity(figures),
      allowMultipleAllocations: true,
      consumesCounters,
      ...taints,
    },
  ];
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function poolSlices(node: SliceNode, mfr: ManufacturerName, cards: readonly PlacedCard[]): ResourceSlice[] {
  const driver = driverName(mfr);
  const counterGroups = chunks(cards, CARDS_PER_COUNTER_SLICE);
  const deviceGroups = chunks(cards, CARDS_PER_DEVICE_SLICE);
  const resourceSliceCount = counterGroups.length + deviceGroups.length;
  const base = (name: string): Pick<ResourceSlice, 'apiVersion' | 'kind' | 'metadata'> => ({
    apiVersion: RESOURCE_API_VERSION,
    kind: 'ResourceSlice',
    metadata: {
      name,
      ...(node.uid !== undefined
        ? { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true }] }
        : {}),
    },
  });
  const spec = { driver, nodeName: node.name, pool: { name: node.name, generation: 0, resourceSliceCount } };
  const slices: ResourceSlice[] = [
    ...counterGroups.map((group, n) => ({
      ...base(sliceName(node.name, mfr, 'counters', n)),
      spec: {
        ...spec,
        sharedCounters: group.map((p): CounterSet => ({
          name: counterSetName(p.card.index),
          counters: counters(p.figures),
        })),
      },
    })),
    ...deviceGroups.map((group, n) => ({
      ...base(sliceName(node.name, mfr, 'devices', n)),
      spec: { ...spec, devices: group.flatMap((p) => devicesOf(p, mfr)) },
    })),
  ];
  // A slice the API would reject fails here, with the field that is wrong.
  return slices.map((slice) => ResourceSliceSchema.parse(slice));
}

/**
 * The desired slices of one node. Cards of a manufacturer we do not know, or with an index that
 * is not a non-negative integer or repeats one, are left out and reported; a card with
 * implausible memory is published without memory and reported.
 */
export function desiredSlices(node: SliceNode, cards: readonly SliceCard[]): DesiredSlices {
  const problems: string[] = [];
  const usable: SliceCard[] = [];
  const seen = new Set<string>();
  for (const card of cards) {
    const mfr = card.manufacturer;
    if (!isManufacturer(mfr)) {
      problems.push(`${mfr} card ${card.index}: unknown manufacturer; not published`);
      continue;
    }
    if (!Number.isSafeInteger(card.index) || card.index < 0) {
      problems.push(`${mfr} card ${card.index}: index is not a non-negative integer; not published`);
      continue;
    }
    if (seen.has(`${mfr}/${card.index}`)) {
      problems.push(`${mfr} card ${card.index}: index reported twice; the first card is published`);
      continue;
    }
    seen.add(`${mfr}/${card.index}`);
    usable.push(card);
  }
  const figures = usable.map((card): CardFigures => ({ memoryMiB: plausibleMemory(card.memoryMiB) }));
  for (const [i, card] of usable.entries())
    if (figures[i]?.memoryMiB === undefined)
      problems.push(
        `${card.manufacturer} card ${card.index}: implausible memory ${card.memoryMiB} MiB; ` +
          'published without memory capacity and counter',
      );
  // The labels key the cards they keep (plausible memory); the others take the key of their product alone.
  const kept = usable.flatMap((card, i) => {
    const memoryMiB = figures[i]?.memoryMiB;
    return memoryMiB !== undefined ? [{ card: { ...card, memoryMiB }, at: i }] : [];
  });
  const keys = new Map<number, string | undefined>();
  const keptKeys = deviceAcceleratorKeys(kept.map((k) => k.card));
  for (const [j, k] of kept.entries()) keys.set(k.at, keptKeys[j]);
  const byMfr = new Map<ManufacturerName, PlacedCard[]>();
  for (const [i, card] of usable.entries()) {
    const productKey = keys.get(i) ?? constructAcceleratorKey(card.manufacturer, card.product);
    const placed = { card, productKey, figures: figures[i] ?? { memoryMiB: undefined } };
    byMfr.set(card.manufacturer, [...(byMfr.get(card.manufacturer) ?? []), placed]);
  }
  const pools = [...byMfr.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([mfr, placed]) => ({
      manufacturer: mfr,
      driver: driverName(mfr),
      slices: poolSlices(
        node,
        mfr,
        [...placed].sort((a, b) => a.card.index - b.card.index),
      ),
    }));
  return { pools, problems };
}

/** The same slices with `pool.generation` set on every one. */
export function withGeneration(slices: readonly ResourceSlice[], generation: number): ResourceSlice[] {
  return slices.map((slice) => ({ ...slice, spec: { ...slice.spec, pool: { ...slice.spec.pool, generation } } }));
}
