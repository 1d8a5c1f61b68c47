/**
 * @module The Kueue manager configuration the chain needs (DESIGN §4.1), generated from the
 * manufacturer table — every device request folds into `credits.gpustack.ai/<mfr>` — and merged
 * into a configuration a cluster already runs: its keys are kept, ours are replaced.
 */
import { MANUFACTURER_NAMES } from '../k8s/index.js';
import { CREDITS_PER_CARD, MANUFACTURERS, creditsResource } from '../nodefeature/index.js';

export const KUEUE_CONFIG_API_VERSION = 'config.kueue.x-k8s.io/v1beta2';
/** The oldest Kueue whose manager reads a `config.kueue.x-k8s.io/v1beta2` Configuration with our fields. */
export const OLDEST_KUEUE_MINOR = 17;
/** `resources.quotaCheckStrategy` and its gate: absent before 0.19 (strict decoding refuses them), beta from 0.19. */
export const QUOTA_CHECK_STRATEGY_MINOR = 19;
export const DEFAULT_KUEUE_MINOR = 19;

const SHARE_CREDITS = CREDITS_PER_CARD / 10;

type Transformation = { input: string; strategy: 'Replace'; outputs: Record<string, string> };
type Json = Record<string, unknown>;

export interface KueueTarget {
  /** Kueue 0.<minor>: what the manager's strict decoder accepts. */
  readonly minor: number;
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
    // Long queue names never reach Pod labels: Pods carry the 31-character LocalQueue name only.
    featureGates: { AssignQueueLabelsForPods: false, ...(checksQuota ? { QuotaCheckStrategy: true } : {}) },
    resources: {
      // A device queue covers only credits; cpu/memory it does not declare must not block admission.
      ...(checksQuota ? { quotaCheckStrategy: 'IgnoreUndeclared' } : {}),
      transformations: buildTransformations(),
    },
  };
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
 * transformations of our device resources replaced (others kept, in their order, ours after);
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

  const ours = buildKueueConfig(target) as {
    featureGates: Json;
    resources: Json & { transformations: Transformation[] };
  };
  const notes: string[] = [];
  const ourInputs = new Set(ours.resources.transformations.map((t) => t.input));
  const kept = current.filter((t: unknown) => !(isObject(t) && ourInputs.has(String(t['input']))));
  if (kept.length < current.length)
    notes.push(`replaced ${current.length - kept.length} transformations of our device resources`);
  const mergedGates: Json = { ...gates, ...ours.featureGates };
  const mergedResources: Json = {
    ...resources,
    ...ours.resources,
    transformations: [...kept, ...ours.resources.transformations],
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
  return {
    ok: true,
    notes,
    config: {
      ...existing,
      apiVersion: KUEUE_CONFIG_API_VERSION,
      kind: 'Configuration',
      featureGates: mergedGates,
      resources: mergedResources,
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
