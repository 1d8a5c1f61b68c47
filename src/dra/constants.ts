/**
 * @module The names docs/architecture.md#dra fixes for device allocation through DRA (resource.k8s.io/v1): one
 * driver per manufacturer, the attributes and capacities every card carries, the two devices of
 * a card (whole or shared, never both), the DeviceClasses the chain emits and the API limits.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { CREDITS_PER_CARD, SYSTEM_DOMAIN } from '../nodefeature/index.js';

export const RESOURCE_API_VERSION = 'resource.k8s.io/v1';

/** `nvidia.gpustack.ai`: the DRA driver (and attribute domain) of one manufacturer. */
export function driverName(mfr: ManufacturerName): string {
  return `${mfr}.${SYSTEM_DOMAIN}`;
}

/** Attribute names, in the driver's domain (C identifiers ≤ 32 characters, API validation). */
export const ATTRIBUTE = {
  manufacturer: 'manufacturer',
  productKey: 'productKey',
  productName: 'productName',
  family: 'family',
  computeCapability: 'computeCapability',
  driverVersion: 'driverVersion',
  uuid: 'uuid',
  index: 'index',
  pciBusID: 'pciBusID',
  numaNode: 'numaNode',
  /** `whole` or `shared`: which of a card's two devices this is. */
  mode: 'mode',
} as const;

/** Standard attributes other drivers' devices (NICs) align with by `matchAttribute`. */
export const STANDARD_ATTRIBUTE = {
  pcieRoot: 'resource.kubernetes.io/pcieRoot',
} as const;

export const MODE_WHOLE = 'whole';
export const MODE_SHARED = 'shared';

/** Capacity names of a card. */
export const CAPACITY = { memory: 'memory', cores: 'cores', units: 'units' } as const;
/** `cores`: percent of a card. */
export const CORES_PER_CARD = 100;
/** `units`: the credits of one card (M), so a claim's units and Kueue's credits agree. */
export const UNITS_PER_CARD = CREDITS_PER_CARD;
/** A share is one tenth of a card: units, memory and cores. */
export const SHARES_PER_CARD = 10;
/** The smallest memory a slice by capacity may ask. */
export const MIN_SLICE_MEMORY = '1Gi';

/** `card-<index>`: the whole card. */
export function wholeDeviceName(index: number): string {
  return `card-${index}`;
}
/** `card-<index>-shared`: the same card, multi-allocatable by capacity. */
export function sharedDeviceName(index: number): string {
  return `card-${index}-shared`;
}
/** The counter set both devices of a card consume entirely. */
export function counterSetName(index: number): string {
  return `card-${index}-counters`;
}

export const DEVICE_CLASS_PREFIX = 'gpustack-';
/** `gpustack-<mfr>` / `gpustack-<aKey>`: whole cards. */
export function wholeClassName(keyOrMfr: string): string {
  return `${DEVICE_CLASS_PREFIX}${keyOrMfr}`;
}
/** `gpustack-<mfr>-shared` / `gpustack-<aKey>-shared`: shares and slices of the same cards. */
export function sharedClassName(keyOrMfr: string): string {
  return `${DEVICE_CLASS_PREFIX}${keyOrMfr}-shared`;
}

/** Validation limits of resource.k8s.io/v1 in Kubernetes 1.36 (docs/architecture.md#dra-api-limits). */
export const LIMITS = {
  devicesPerSlice: 128,
  devicesPerSliceWithCounters: 64,
  counterSetsPerSlice: 8,
  consumesCountersPerDevice: 2,
  attributesAndCapacitiesPerDevice: 32,
  nameMax: 32,
} as const;
