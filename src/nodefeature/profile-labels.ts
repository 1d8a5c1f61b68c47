/**
 * @module Stage 3, the node-profile decorator's labels (docs/architecture.md#labels): `gpustack.ai/managed`, the
 * general (CPU) key, the per-card `.sliced.*` capacity labels, `cpu-only`, and — where our agent
 * has published nothing for a manufacturer — device labels derived from a vendor's labels.
 */
import type { DeviceLabelSource, ManufacturerName } from '../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ACCELERATOR_KEY_MAX,
  CPU_NAME_ANNOTATION,
  CPU_ONLY_LABEL,
  CREDITS_PER_CARD,
  DERIVED_LABELS_ANNOTATION,
  GENERAL_PREFIX,
  GENERIC_KEY,
  MANAGED_LABEL,
  NFD_CPU_FAMILY_LABEL,
  NFD_CPU_MODEL_LABEL,
  NFD_CPU_VENDOR_LABEL,
  SLICED_SUFFIXES,
} from './constants.js';
import { deriveDeviceLabels } from './derived-labels.js';
import { acceleratorKeyManufacturer, constructGeneralKey, generalKeyManufacturer } from './keys.js';
import { coresPercentagePerCard } from './derived-from-manufacturer.js';
import { readMemoryLabel } from './memory.js';
import { extractAcceleratorKeys, readCount, readCpuCores } from './node-facts.js';

export interface ProfileOptions {
  readonly nodeManagement: 'Automatic' | 'Manual';
  readonly generalKey: 'Generic' | 'CPUModel';
  readonly mixedOnNode: boolean;
  readonly manufacturers: ReadonlySet<ManufacturerName>;
  /** The setting `deviceLabelSources`; `['Agent']` derives nothing. */
  readonly deviceLabelSources: readonly DeviceLabelSource[];
  /** Device resource per manufacturer where the settings override it. */
  readonly deviceResources?: Readonly<Partial<Record<ManufacturerName, string>>> | undefined;
}

export interface ProfileNodeInput {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  /** `status.capacity.cpu` as the API server reports it (`"224"`, `"3500m"`). */
  readonly cpuCapacity?: string | number | undefined;
  /** `status.capacity`, for vendors that count cards only there (Ascend's device plugin). */
  readonly capacity?: Readonly<Record<string, string | number>> | undefined;
}

/** What node-profile answers for one node: a value sets, `null` removes; keys it does not own are absent. */
export interface NodeProfile {
  readonly labels: Record<string, string | null>;
  readonly annotations: Record<string, string | null>;
}

/** True for every label key the node-profile decorator owns (and so may remove). */
export function isProfileOwnedLabel(key: string): boolean {
  if (key.startsWith(GENERAL_PREFIX) || key === CPU_ONLY_LABEL) return true;
  if (!key.startsWith(ACCELERATABLE_PREFIX)) return false;
  return SLICED_SUFFIXES.some(
    (suffix) =>
      key.endsWith(suffix) && acceleratorKeyManufacturer(key.slice(ACCELERATABLE_PREFIX.length)) !== undefined,
  );
}

function generalKeyOf(node: ProfileNodeInput, options: ProfileOptions): string {
  if (options.generalKey === 'Generic') return GENERIC_KEY;
  const labels = node.labels ?? {};
  const cpuName = node.annotations?.[CPU_NAME_ANNOTATION];
  return constructGeneralKey({
    vendor: labels[NFD_CPU_VENDOR_LABEL],
    cpuName,
    family: labels[NFD_CPU_FAMILY_LABEL],
    model: labels[NFD_CPU_MODEL_LABEL],
  });
}

function constructGeneralLabels(node: ProfileNodeInput, options: ProfileOptions, out: Record<string, string>): void {
  const gKey = generalKeyOf(node, options);
  // "general.feature.gpustack.ai/amd-epyc-7763=true" and "general.feature.gpustack.ai/amd=true"
  out[`${GENERAL_PREFIX}${gKey}`] = 'true';
  if (gKey !== GENERIC_KEY) out[`${GENERAL_PREFIX}${generalKeyManufacturer(gKey)}`] = 'true';
  const cores = readCpuCores(node.cpuCapacity);
  // "general.feature.gpustack.ai/generic.count=224" — ceil, so 3500m counts as 4 cores
  if (cores.ok) out[`${GENERAL_PREFIX}${gKey}.count`] = String(cores.value);
}

function constructSlicedLabels(
  labels: Readonly<Record<string, string>>,
  options: ProfileOptions,
  out: Record<string, string>,
): number {
  const keys = extractAcceleratorKeys(labels, options.manufacturers);
  for (const aKey of keys) {
    const prefix = `${ACCELERATABLE_PREFIX}${aKey}`;
    // A key longer than our budget (an older agent's) would make "<aKey>.sliced.*" an invalid label key.
    if (aKey.length > ACCELERATOR_KEY_MAX) continue;
    // The chain's own test (readCount): a model it will not pool gets no per-card capacity either.
    if (!readCount(labels[`${prefix}.count`]).ok) continue;
    const mfr = acceleratorKeyManufacturer(aKey) as ManufacturerName;
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.sliced.units=1600000" (per card)
    out[`${prefix}.sliced.units`] = String(CREDITS_PER_CARD);
    out[`${prefix}.sliced.cores-percentage`] = String(coresPercentagePerCard(mfr));
    out[`${prefix}.sliced.memory-percentage`] = '100';
    const memory = readMemoryLabel(labels[`${prefix}.memory`]);
    // "….sliced.memory-mib=81920": MiB of the rounded .memory label, not the detector's figure;
    // none for an unknown (0) memory: a consumer divides by it
    if (memory.ok && memory.mib > 0) out[`${prefix}.sliced.memory-mib`] = String(memory.mib);
  }
  return keys.length;
}

/**
 * `current` after a decorator's answer: a value sets the key, `null` removes it (what Metacontroller
 * does with node-profile's labels and annotations).
 * @example applyChanges({ a: '1', b: '2' }, { a: null, c: '3' }) // { b: '2', c: '3' }
 */
export function applyChanges(
  current: Readonly<Record<string, string>> | undefined,
  changes: Readonly<Record<string, string | null>>,
): Record<string, string> {
  const out: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/**
 * The node-profile decorator's answer for one node (docs/architecture.md#labels, stage 3): the labels it wants,
 * and `null` for every owned label present on the node that it no longer wants. Keys it does
 * not own are never mentioned; an existing `gpustack.ai/managed` value is never overwritten.
 * Device labels it derives from a vendor's labels are its own too, recorded in the annotation
 * `feature.gpustack.ai/derived-device-labels` (see `deriveDeviceLabels`).
 */
export function constructProfile(node: ProfileNodeInput, options: ProfileOptions): NodeProfile {
  const labels = node.labels ?? {};
  const desired: Record<string, string> = {};
  const existingManaged = labels[MANAGED_LABEL];
  if (existingManaged === undefined && options.nodeManagement === 'Automatic') desired[MANAGED_LABEL] = 'true';
  const managed = (existingManaged ?? desired[MANAGED_LABEL]) === 'true';
  const derivation = deriveDeviceLabels(
    { labels, annotations: node.annotations, capacity: node.capacity },
    {
      sources: options.deviceLabelSources,
      manufacturers: options.manufacturers,
      deviceResources: options.deviceResources,
      managed,
    },
  );
  // Capacity labels follow the device labels the node will have once this answer is applied.
  // Nothing derived or dropped (the common case): the node's labels as they are, without a copy.
  const effective = Object.keys(derivation.labels).length > 0 ? applyChanges(labels, derivation.labels) : labels;
  if (managed) {
    constructGeneralLabels(node, options, desired);
    const accelerators = constructSlicedLabels(effective, options, desired);
    // "feature.gpustack.ai/cpu-only=true" lets CPU flavors avoid accelerated nodes
    if (!options.mixedOnNode && accelerators === 0 && effective[ACCELERATABLE_LABEL] !== 'true')
      desired[CPU_ONLY_LABEL] = 'true';
  }
  const result: Record<string, string | null> = { ...desired, ...derivation.labels };
  for (const key of Object.keys(effective)) {
    if (isProfileOwnedLabel(key) && desired[key] === undefined) result[key] = null;
  }
  return {
    labels: result,
    annotations: derivation.record === undefined ? {} : { [DERIVED_LABELS_ANNOTATION]: derivation.record },
  };
}

/** The labels of `constructProfile`. */
export function constructProfileLabels(node: ProfileNodeInput, options: ProfileOptions): Record<string, string | null> {
  return constructProfile(node, options).labels;
}
