/**
 * @module The DeviceClasses of docs/architecture.md#device-classes: per manufacturer `gpustack-<mfr>` (its whole cards) and
 * `gpustack-<mfr>-shared` (shares and slices of the same cards, the one class that maps
 * `<base>.shared`), per device model `gpustack-<aKey>` and `gpustack-<aKey>-shared`. The whole
 * class maps `<base>` itself, so `nvidia.com/gpu: 1` in a plain Pod gets a whole card through DRA on
 * nodes whose device plugin does not serve it (docs/architecture.md#device-owner). A card is
 * published as two devices (mode `whole` and `shared`) that consume one counter set, so the
 * classes select by mode and the scheduler can never hand out a card both ways.
 */
import { z } from 'zod';
import { MANUFACTURER_NAMES, isDnsSubdomain, type ManufacturerName } from '../k8s/index.js';
import {
  ACCELERATABLE_PREFIX,
  PART_OF_LABEL,
  PART_OF_VALUE,
  RESOURCE_TYPE_LABEL,
  SYSTEM_DOMAIN,
  acceleratorKeyManufacturer,
} from '../nodefeature/index.js';
import { MANUFACTURERS } from '../contracts/index.js';
import {
  ATTRIBUTE,
  MODE_SHARED,
  MODE_WHOLE,
  RESOURCE_API_VERSION,
  driverName,
  sharedClassName,
  wholeClassName,
} from './constants.js';

/** `resource.gpustack.ai/type=deviceclasses`: `kubectl get deviceclasses -l resource.gpustack.ai/type=deviceclasses`. */
export const RESOURCE_TYPE_DEVICE_CLASSES = 'deviceclasses';
/** The manufacturer of a class's cards (every class of ours carries it). */
export const DEVICE_CLASS_MANUFACTURER_LABEL = `resource.${SYSTEM_DOMAIN}/manufacturer`;
/** `whole` or `shared`: which of a card's devices the class selects. */
export const DEVICE_CLASS_MODE_LABEL = `resource.${SYSTEM_DOMAIN}/device-mode`;

const DeviceClassMetaSchema = z.strictObject({
  name: z.string().refine(isDnsSubdomain, 'a DeviceClass name is a DNS subdomain of at most 253 characters'),
  labels: z.record(z.string(), z.string()),
});

/** A DeviceClass as the chain emits it (resource.k8s.io/v1): selectors and, on one class, the extended resource. */
export const DeviceClassSchema = z.strictObject({
  apiVersion: z.literal(RESOURCE_API_VERSION),
  kind: z.literal('DeviceClass'),
  metadata: DeviceClassMetaSchema,
  spec: z.strictObject({
    selectors: z.array(z.strictObject({ cel: z.strictObject({ expression: z.string().min(1) }) })).min(1),
    extendedResourceName: z.string().optional(),
  }),
});
export type DeviceClass = z.infer<typeof DeviceClassSchema>;

/** What a class selects: every card of a manufacturer, or one model (aKey). */
export interface DeviceClassScope {
  readonly manufacturer: ManufacturerName;
  /** The aKey (`nvidia-h100-80gb-hbm3`); absent = every card of the manufacturer. */
  readonly productKey?: string;
}

/** `device.attributes["nvidia.gpustack.ai"].mode`: attributes are qualified by the driver's domain in CEL. */
function attribute(mfr: ManufacturerName, name: string): string {
  return `device.attributes[${JSON.stringify(driverName(mfr))}].${name}`;
}

/**
 * The CEL selector of a class. The driver test comes first: CEL's `&&` absorbs the error a missing
 * attribute raises on another driver's device, so the class never fails on foreign devices.
 * @example deviceClassExpression({ manufacturer: 'nvidia' }, 'whole')
 * // 'device.driver == "nvidia.gpustack.ai" && device.attributes["nvidia.gpustack.ai"].mode == "whole"'
 */
export function deviceClassExpression(scope: DeviceClassScope, mode: typeof MODE_WHOLE | typeof MODE_SHARED): string {
  const { manufacturer: mfr, productKey } = scope;
  const terms = [`device.driver == ${JSON.stringify(driverName(mfr))}`];
  if (productKey !== undefined) terms.push(`${attribute(mfr, ATTRIBUTE.productKey)} == ${JSON.stringify(productKey)}`);
  terms.push(`${attribute(mfr, ATTRIBUTE.mode)} == ${JSON.stringify(mode)}`);
  return terms.join(' && ');
}

/**
 * `cards.gpustack.ai/<mfr>`: whole cards claimed through DRA, one per card. Kueue before 0.18 counts
 * a DeviceClass mapping in devices and cannot charge a card M credits, so the device ClusterQueues
 * also cover this resource (the pool's cards) and kueue-config maps the whole-card classes to it there.
 */
export function cardsResource(mfr: ManufacturerName): string {
  return `cards.${SYSTEM_DOMAIN}/${mfr}`;
}

/** `<base>.shared` (`nvidia.com/gpu.shared`): the extended resource the manufacturer's shared class serves. */
export function sharedExtendedResource(mfr: ManufacturerName): string {
  return `${MANUFACTURERS[mfr].deviceResource}.shared`;
}

/**
 * The class-name part of an aKey: aKeys are label values (`_` and upper case allowed), class
 * names DNS subdomains. Undefined when no valid name results.
 */
export function modelClassKey(aKey: string): string | undefined {
  const key = aKey.toLowerCase().replaceAll('_', '-');
  return isDnsSubdomain(sharedClassName(key)) ? key : undefined;
}

/** The device resource a manufacturer's whole class maps: its flavors' and the checker's (`deviceResourceOf`). */
export type DeviceResourceOf = (mfr: ManufacturerName) => string;

const TABLE_RESOURCE: DeviceResourceOf = (mfr) => MANUFACTURERS[mfr].deviceResource;

/** The extended resource a class maps: `<base>` on the whole class, `<base>.shared` on the shared one, none on a model's. */
function extendedResourceOf(
  scope: DeviceClassScope,
  shared: boolean,
  resourceOf: DeviceResourceOf,
): string | undefined {
  if (scope.productKey !== undefined) return undefined;
  return shared ? sharedExtendedResource(scope.manufacturer) : resourceOf(scope.manufacturer);
}

function buildClass(
  scope: DeviceClassScope,
  key: string,
  mode: typeof MODE_WHOLE | typeof MODE_SHARED,
  resourceOf: DeviceResourceOf,
): DeviceClass {
  const shared = mode === MODE_SHARED;
  const labels: Record<string, string> = {
    [PART_OF_LABEL]: PART_OF_VALUE,
    [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_DEVICE_CLASSES,
    [DEVICE_CLASS_MANUFACTURER_LABEL]: scope.manufacturer,
    [DEVICE_CLASS_MODE_LABEL]: mode,
    // The pool's key label, as on its flavors and queue: `-l acceleratable.feature.gpustack.ai/<aKey>`.
    ...(scope.productKey !== undefined ? { [`${ACCELERATABLE_PREFIX}${scope.productKey}`]: 'true' } : {}),
  };
  // Only the manufacturer's classes map extended resources, one each: a second class naming the
  // same resource would leave the scheduler to pick one of them at random.
  const extended = extendedResourceOf(scope, shared, resourceOf);
  return {
    apiVersion: RESOURCE_API_VERSION,
    kind: 'DeviceClass',
    metadata: { name: shared ? sharedClassName(key) : wholeClassName(key), labels },
    spec: {
      selectors: [{ cel: { expression: deviceClassExpression(scope, mode) } }],
      ...(extended !== undefined ? { extendedResourceName: extended } : {}),
    },
  };
}

/**
 * Every DeviceClass for the enabled manufacturers and the device models (aKeys) of the pools,
 * sorted by name; `resourceOf` names the device resource each whole class maps (the settings'
 * `deviceResourceOf`, else the table's). An aKey of a manufacturer we do not know, or one that yields no valid name,
 * gets no class; two aKeys that yield the same name (`a_b`, `a-b`) share the first one's.
 * @example buildDeviceClasses(new Set(['nvidia']), ['nvidia-h200']).map((c) => c.metadata.name)
 * // ['gpustack-nvidia', 'gpustack-nvidia-h200', 'gpustack-nvidia-h200-shared', 'gpustack-nvidia-shared']
 */
export function buildDeviceClasses(
  manufacturers: ReadonlySet<ManufacturerName>,
  productKeys: Iterable<string>,
  resourceOf: DeviceResourceOf = TABLE_RESOURCE,
): DeviceClass[] {
  const classes = new Map<string, DeviceClass>();
  const add = (scope: DeviceClassScope, key: string): void => {
    for (const mode of [MODE_WHOLE, MODE_SHARED] as const) {
      const deviceClass = buildClass(scope, key, mode, resourceOf);
      if (!classes.has(deviceClass.metadata.name)) classes.set(deviceClass.metadata.name, deviceClass);
    }
  };
  for (const mfr of MANUFACTURER_NAMES) if (manufacturers.has(mfr)) add({ manufacturer: mfr }, mfr);
  for (const productKey of [...new Set(productKeys)].sort()) {
    const manufacturer = acceleratorKeyManufacturer(productKey);
    const key = modelClassKey(productKey);
    if (manufacturer === undefined || key === undefined) continue;
    add({ manufacturer, productKey }, key);
  }
  return [...classes.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
}
