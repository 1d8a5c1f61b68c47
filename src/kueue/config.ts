/**
 * @module The Kueue manager configuration the chain needs (docs/architecture.md#kueue-configuration), generated from the
 * manufacturer table — every device request folds into `credits.gpustack.ai/<mfr>`, and DRA claims
 * on our whole-card DeviceClasses are mapped to a quota resource the device queues cover — and
 * merged into a configuration a cluster already runs: its keys are kept, ours are replaced.
 */
import { MANUFACTURER_NAMES, type ManufacturerName } from '../k8s/index.js';
import {
  CAPACITY,
  DEVICE_CLASS_PREFIX,
  cardsResource,
  MODE_WHOLE,
  deviceClassExpression,
  driverName,
  modelClassKey,
  wholeClassName,
} from '../dra/index.js';
import { CREDITS_PER_CARD, acceleratorKeyManufacturer, creditsResource } from '../nodefeature/index.js';
import { MANUFACTURERS } from '../contracts/index.js';

export const KUEUE_CONFIG_API_VERSION = 'config.kueue.x-k8s.io/v1beta2';
/** The oldest Kueue whose manager reads a `config.kueue.x-k8s.io/v1beta2` Configuration with our fields. */
export const OLDEST_KUEUE_MINOR = 17;
/** `resources.quotaCheckStrategy` and its gate: absent before 0.19 (strict decoding refuses them), beta from 0.19. */
export const QUOTA_CHECK_STRATEGY_MINOR = 19;
export const DEFAULT_KUEUE_MINOR = 19;
/**
 * From 0.18 the DRA gate is `KueueDRAIntegration` (beta, on) and `DynamicResourceAllocation` is
 * locked off (gone in 0.19); mappings take counter `sources` (`KueueDRAIntegrationPartitionableDevices`,
 * alpha in 0.18, beta in 0.19), so a whole card is charged its `units` counter: M credits.
 */
export const DRA_COUNTER_MINOR = 18;
/** Kueue's validation limits of `resources.deviceClassMappings` (pkg/config/validation.go, 0.17–0.19). */
export const KUEUE_MAX_DEVICE_CLASS_MAPPINGS = 16;
export const KUEUE_MAX_CLASSES_PER_MAPPING = 8;

/** The DRA gates each Kueue minor knows; the ones it does not know would stop the manager. */
const DRA_GATES_BEFORE_18 = { DynamicResourceAllocation: true } as const;
const DRA_GATES_FROM_18 = {
  KueueDRAIntegration: true,
  KueueDRAIntegrationPartitionableDevices: true,
  // Off: `<base>.shared` in plain requests stays an extended resource for Kueue, so the
  // transformation charges a share its tenth of a card (the resolved DRA path would charge it as
  // an uncovered `<base>.shared` resource, ignored under IgnoreUndeclared).
  KueueDRAIntegrationExtendedResource: false,
} as const;
const ALL_DRA_GATES = [...Object.keys(DRA_GATES_BEFORE_18), ...Object.keys(DRA_GATES_FROM_18)];

const SHARE_CREDITS = CREDITS_PER_CARD / 10;

/**
 * The job frameworks Kueue must manage for the workloads docs/architecture.md#workloads describes, as
 * Kueue 0.17–0.19 name them (apis/config/v1beta2 `integrations.frameworks`): Jobs (Kueue's default,
 * kept because naming any framework replaces it), JobSet training gangs, LeaderWorkerSet groups
 * (multi-node inference), and Deployments of Pods (single-node inference) through the Pod integration,
 * which the Deployment integration needs. Kueue defers a framework whose CRD is not served until it is.
 */
export const KUEUE_FRAMEWORKS = [
  'batch/job',
  'jobset.x-k8s.io/jobset',
  'leaderworkerset.x-k8s.io/leaderworkerset',
  'pod',
  'deployment',
] as const;
/** What Kueue manages when a configuration names no framework (its defaulting). */
const KUEUE_DEFAULT_FRAMEWORKS = ['batch/job'];

type Transformation = { input: string; strategy: 'Replace'; outputs: Record<string, string> };
type Json = Record<string, unknown>;

export interface KueueTarget {
  /** Kueue 0.<minor>: what the manager's strict decoder accepts. */
  readonly minor: number;
  /**
   * Device models (aKeys) whose `gpustack-<aKey>` class is mapped beside `gpustack-<mfr>`. Kueue
   * lists classes by name (no selector), so model classes are known only from a node dump
   * (`kueue-config --nodes`); a claim on an unmapped class is inadmissible in Kueue.
   */
  readonly productKeys?: readonly string[];
}

/**
 * The quota resource DRA claims on `mfr`'s whole-card classes draw on: its credits from Kueue 0.18
 * (a card charged its `units` counter, M), `cards.gpustack.ai/<mfr>` before (one per card; the
 * device ClusterQueues cover both).
 */
export function draQuotaResource(mfr: ManufacturerName, minor: number): string {
  return minor >= DRA_COUNTER_MINOR ? creditsResource(mfr) : cardsResource(mfr);
}

export interface DeviceClassMapping {
  name: string;
  deviceClassNames: string[];
  sources?: { counter: { name: string; driver: string; deviceSelector: { cel: { expression: string } } } }[];
}

export interface DeviceClassMappingPlan {
  readonly mappings: DeviceClassMapping[];
  /** Model classes left out: a mapping lists at most 8 classes. */
  readonly leftOut: string[];
}

/**
 * One mapping per manufacturer: `gpustack-<mfr>` and the model classes of `productKeys` (whole
 * cards only) → {@link draQuotaResource}. Shared classes are not mapped: with our model a shared
 * device consumes a whole card's counters, so a counter source would charge a share as a card;
 * shares reach Kueue as `<base>.shared` requests instead, which the transformations charge a tenth.
 * @example planDeviceClassMappings({ minor: 17 }).mappings[0] // { name: 'cards.gpustack.ai/amd', deviceClassNames: ['gpustack-amd'] }
 */
export function planDeviceClassMappings(target: KueueTarget): DeviceClassMappingPlan {
  const models = new Map<ManufacturerName, string[]>();
  for (const productKey of [...new Set(target.productKeys ?? [])].sort()) {
    const mfr = acceleratorKeyManufacturer(productKey);
    const key = modelClassKey(productKey);
    if (mfr === undefined || key === undefined) continue;
    const list = models.get(mfr) ?? [];
    if (!list.includes(wholeClassName(key))) list.push(wholeClassName(key));
    models.set(mfr, list);
  }
  const leftOut: string[] = [];
  const mappings = MANUFACTURER_NAMES.map((mfr): DeviceClassMapping => {
    const modelClasses = models.get(mfr) ?? [];
    const kept = modelClasses.slice(0, KUEUE_MAX_CLASSES_PER_MAPPING - 1);
    leftOut.push(...modelClasses.slice(kept.length));
    const mapping: DeviceClassMapping = {
      name: draQuotaResource(mfr, target.minor),
      deviceClassNames: [wholeClassName(mfr), ...kept],
    };
    if (target.minor < DRA_COUNTER_MINOR) return mapping;
    // Every whole device of the manufacturer: the claim's own class and selectors narrow it down.
    const deviceSelector = { cel: { expression: deviceClassExpression({ manufacturer: mfr }, MODE_WHOLE) } };
    return { ...mapping, sources: [{ counter: { name: CAPACITY.units, driver: driverName(mfr), deviceSelector } }] };
  });
  return { mappings, leftOut };
}

/** The device transformations: a card, a share (a tenth) and a slice unit, per manufacturer. */
export function buildTransformations(): Transformation[] {
  return MANUFACTURER_NAMES.flatMap((mfr) => {
    const base = MANUFACTURERS[mfr].deviceResource;
    const credits = creditsResource(mfr);
    return [
      { input: base, strategy: 'Replace' as const, outputs: { [credits]: String(CREDITS_PER_CARD) } },
      { input: `${base}.shared`, strategy: 'Replace' as const, outputs: { [credits]: String(SHARE_CREDITS) } },
      { input: `${base}.sliced.units`, strategy: 'Replace' as const, outputs: { [credits]: '1' } },
    ];
  });
}

/**
 * Our part of the configuration for `target`.
 * @example buildKueueConfig({ minor: 19 }).resources // { quotaCheckStrategy: 'IgnoreUndeclared', transformations: [...] }
 */
export function buildKueueConfig(target: KueueTarget = { minor: DEFAULT_KUEUE_MINOR }): Json {
  const checksQuota = target.minor >= QUOTA_CHECK_STRATEGY_MINOR;
  return {
    apiVersion: KUEUE_CONFIG_API_VERSION,
    kind: 'Configuration',
    featureGates: {
      // Long queue names never reach Pod labels: Pods carry the 31-character LocalQueue name only.
      AssignQueueLabelsForPods: false,
      ...(checksQuota ? { QuotaCheckStrategy: true } : {}),
      ...(target.minor >= DRA_COUNTER_MINOR ? DRA_GATES_FROM_18 : DRA_GATES_BEFORE_18),
    },
    resources: {
      // A device queue covers only credits; cpu/memory it does not declare must not block admission.
      ...(checksQuota ? { quotaCheckStrategy: 'IgnoreUndeclared' } : {}),
      transformations: buildTransformations(),
      deviceClassMappings: planDeviceClassMappings(target).mappings,
    },
    integrations: { frameworks: [...KUEUE_FRAMEWORKS] },
  };
}

/** True for a mapping of ours: its name is one of our quota resources, or it lists one of our classes. */
function isOurMapping(mapping: unknown): boolean {
  if (!isObject(mapping)) return false;
  const ourNames = new Set(MANUFACTURER_NAMES.flatMap((m) => [creditsResource(m), cardsResource(m)]));
  if (ourNames.has(String(mapping['name']))) return true;
  // A class is mapped to one resource only: a mapping of yours that lists a class of ours would clash.
  const classes = mapping['deviceClassNames'];
  return Array.isArray(classes) && classes.some((c) => String(c).startsWith(DEVICE_CLASS_PREFIX));
}

export type MergeResult = { readonly ok: true; readonly config: Json; readonly notes: string[] } | MergeError;
export interface MergeError {
  readonly ok: false;
  readonly message: string;
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The mapping at `key` ({} when absent), or why it is not one. */
function objectAt(config: Json, key: string): { readonly value: Json } | MergeError {
  const value = config[key];
  if (value === undefined || value === null) return { value: {} };
  return isObject(value)
    ? { value }
    : { ok: false, message: `${key}: expected a mapping, got ${JSON.stringify(value)}` };
}

/**
 * `existing` with our part merged in for `target`: every key kept; our feature gates set; the
 * transformations of our device resources replaced (others kept, in their order, ours after); the
 * job frameworks of {@link KUEUE_FRAMEWORKS} added to `integrations.frameworks` (yours kept first);
 * `resources.quotaCheckStrategy` set where the version knows it and removed (with its gate)
 * where it does not, because the manager refuses to start on a field or gate it does not know.
 * `notes` says what was overwritten or removed.
 */
export function mergeKueueConfig(existing: unknown, target: KueueTarget = { minor: DEFAULT_KUEUE_MINOR }): MergeResult {
  if (existing === undefined || existing === null) existing = {};
  if (!isObject(existing)) return { ok: false, message: 'the configuration to merge into is not a mapping' };
  const { apiVersion, kind } = existing;
  if (apiVersion !== undefined && apiVersion !== KUEUE_CONFIG_API_VERSION)
    return {
      ok: false,
      message: `apiVersion: expected ${KUEUE_CONFIG_API_VERSION}, got ${JSON.stringify(apiVersion)}`,
    };
  if (kind !== undefined && kind !== 'Configuration')
    return { ok: false, message: `kind: expected Configuration, got ${JSON.stringify(kind)}` };
  const gatesAt = objectAt(existing, 'featureGates');
  if (!('value' in gatesAt)) return gatesAt;
  const resourcesAt = objectAt(existing, 'resources');
  if (!('value' in resourcesAt)) return resourcesAt;
  const gates = gatesAt.value;
  const resources = resourcesAt.value;
  const current = resources['transformations'] ?? [];
  if (!Array.isArray(current)) return { ok: false, message: 'resources.transformations: expected a list' };
  const currentMappings = resources['deviceClassMappings'] ?? [];
  if (!Array.isArray(currentMappings)) return { ok: false, message: 'resources.deviceClassMappings: expected a list' };
  const integrationsAt = objectAt(existing, 'integrations');
  if (!('value' in integrationsAt)) return integrationsAt;
  const integrations = integrationsAt.value;
  const frameworks = integrations['frameworks'] ?? [];
  if (!Array.isArray(frameworks) || frameworks.some((f) => typeof f !== 'string'))
    return { ok: false, message: 'integrations.frameworks: expected a list of framework names' };

  const ours = buildKueueConfig(target) as {
    featureGates: Json;
    resources: Json & { transformations: Transformation[]; deviceClassMappings: DeviceClassMapping[] };
  };
  const notes: string[] = [];
  const ourInputs = new Set(ours.resources.transformations.map((t) => t.input));
  const kept = current.filter((t: unknown) => !(isObject(t) && ourInputs.has(String(t['input']))));
  if (kept.length < current.length)
    notes.push(`replaced ${current.length - kept.length} transformations of our device resources`);
  const keptMappings = currentMappings.filter((m: unknown) => !isOurMapping(m));
  if (keptMappings.length < currentMappings.length)
    notes.push(`replaced ${currentMappings.length - keptMappings.length} deviceClassMappings of our DeviceClasses`);
  const mappings = [...keptMappings, ...ours.resources.deviceClassMappings];
  if (mappings.length > KUEUE_MAX_DEVICE_CLASS_MAPPINGS)
    return {
      ok: false,
      message:
        `resources.deviceClassMappings: ${keptMappings.length} of yours and our ` +
        `${ours.resources.deviceClassMappings.length} exceed the ${KUEUE_MAX_DEVICE_CLASS_MAPPINGS} Kueue accepts`,
    };
  // A DRA gate the target does not know (or has locked) stops the manager: keep only ours.
  const mergedGates: Json = { ...gates, ...ours.featureGates };
  for (const gate of ALL_DRA_GATES) {
    if (gate in ours.featureGates || !(gate in mergedGates)) continue;
    notes.push(`removed featureGates.${gate}: Kueue 0.${target.minor} does not accept it`);
    delete mergedGates[gate];
  }
  const mergedResources: Json = {
    ...resources,
    ...ours.resources,
    transformations: [...kept, ...ours.resources.transformations],
    deviceClassMappings: mappings,
  };
  if (target.minor < QUOTA_CHECK_STRATEGY_MINOR) {
    if ('QuotaCheckStrategy' in mergedGates)
      notes.push(`removed featureGates.QuotaCheckStrategy: Kueue 0.${target.minor} does not know it`);
    if ('quotaCheckStrategy' in mergedResources)
      notes.push(`removed resources.quotaCheckStrategy: Kueue 0.${target.minor} does not know it`);
    delete mergedGates['QuotaCheckStrategy'];
    delete mergedResources['quotaCheckStrategy'];
  } else if (resources['quotaCheckStrategy'] !== undefined && resources['quotaCheckStrategy'] !== 'IgnoreUndeclared') {
    notes.push(`resources.quotaCheckStrategy ${JSON.stringify(resources['quotaCheckStrategy'])} → IgnoreUndeclared`);
  }
  for (const [gate, value] of Object.entries(ours.featureGates)) {
    if (gates[gate] !== undefined && gates[gate] !== value)
      notes.push(`featureGates.${gate} ${String(gates[gate])} → ${String(value)}`);
  }
  // Yours kept in their order (none named: Kueue's default, which naming any would drop), ours added.
  const keptFrameworks = frameworks.length > 0 ? (frameworks as string[]) : KUEUE_DEFAULT_FRAMEWORKS;
  const added = KUEUE_FRAMEWORKS.filter((f) => !keptFrameworks.includes(f));
  if (frameworks.length > 0 && added.length > 0) notes.push(`added integrations.frameworks ${added.join(', ')}`);
  return {
    ok: true,
    notes,
    config: {
      ...existing,
      apiVersion: KUEUE_CONFIG_API_VERSION,
      kind: 'Configuration',
      featureGates: mergedGates,
      resources: mergedResources,
      integrations: { ...integrations, frameworks: [...keptFrameworks, ...added] },
    },
  };
}

/**
 * `0.19`, `v0.19.2`, `0.17.0` → the minor; undefined for anything else or older than we support.
 * @example kueueMinor('v0.19.2') // 19
 */
export function kueueMinor(version: string): number | undefined {
  const match = /^v?0\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(version.trim());
  const minor = match ? Number(match[1]) : undefined;
  return minor !== undefined && minor >= OLDEST_KUEUE_MINOR ? minor : undefined;
}
