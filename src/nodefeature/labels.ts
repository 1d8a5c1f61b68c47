/**
 * @module Label construction for stage 2 (the agent's device labels) and stage 3 (the
 * node-profile decorator's capacity labels), DESIGN §3.1. Every value passes one sanitiser.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { byText } from '../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ACCELERATOR_KEY_MAX,
  CPU_NAME_ANNOTATION,
  CPU_ONLY_LABEL,
  CREDITS_PER_CARD,
  GENERAL_PREFIX,
  GENERIC_KEY,
  MANAGED_LABEL,
  NFD_CPU_FAMILY_LABEL,
  NFD_CPU_MODEL_LABEL,
  NFD_CPU_VENDOR_LABEL,
  SLICED_SUFFIXES,
} from './constants.js';
import {
  acceleratorKeyManufacturer,
  constructAcceleratorKey,
  constructGeneralKey,
  generalKeyManufacturer,
} from './keys.js';
import { coresPercentagePerCard, isManufacturer } from './manufacturers.js';
import { formatMemoryMiB, readMemoryLabel } from './memory.js';
import { sanitizeLabelValue } from './names.js';
import { extractAcceleratorKeys, readCount, readCpuCores } from './node-facts.js';

/** One detected card, as the agent hands it over (a subset of the addon's `Device`). */
export interface DeviceFacts {
  readonly manufacturer: string;
  readonly product: string;
  readonly memoryMiB: number;
  readonly cores?: number;
  readonly family?: string;
  readonly computeCapability?: string;
  readonly driverVersion?: string;
  readonly runtimeVersion?: string;
}

/**
 * One device model of a node: what the agent builds from its cards, and what node-profile
 * derives from a vendor's labels (GPU Feature Discovery, …). Both become labels through
 * `constructModelLabels`, so the names and the 63-character rule are the same.
 */
export interface DeviceModel {
  readonly manufacturer: ManufacturerName;
  /** Product name as reported (`NVIDIA H100 80GB HBM3`); the aKey and `.product` come from it. */
  readonly product: string;
  /** Per-card memory in MiB; 0 when unknown (the `.memory` label is then `0`). */
  readonly memoryMiB: number;
  /** Cards of this model on the node. */
  readonly count: number;
  readonly cores?: number;
  readonly family?: string;
  readonly computeCapability?: string;
  readonly driverVersion?: string;
  readonly runtimeVersion?: string;
}

interface ModelGroup {
  readonly mfr: ManufacturerName;
  readonly product: string;
  readonly memory: string;
  readonly models: DeviceModel[];
}

function groupModels(models: readonly DeviceModel[]): ModelGroup[] {
  const groups = new Map<string, ModelGroup>();
  for (const model of models) {
    const memory = formatMemoryMiB(model.memoryMiB);
    const id = `${model.manufacturer}\u0000${model.product}\u0000${memory}`;
    const group = groups.get(id) ?? { mfr: model.manufacturer, product: model.product, memory, models: [] };
    group.models.push(model);
    groups.set(id, group);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}

/** `80Gi` → `80g`: the memory suffix that tells apart two groups of one product (reference §3.2). */
function memorySuffix(memory: string): string {
  return memory.replace(/i$/, '').toLowerCase();
}

/**
 * The device labels of some models, per manufacturer and per model group (same product and
 * memory); without `feature.gpustack.ai/acceleratable`, which only the agent writes. Two groups
 * that would share an aKey (same product, different memory) both get a memory suffix instead of
 * overwriting each other.
 */
export function constructModelLabels(models: readonly DeviceModel[]): Record<string, string> {
  const groups = groupModels(models.filter((m) => m.count > 0));
  const labels: Record<string, string> = {};
  const plainKeys = groups.map((g) => constructAcceleratorKey(g.mfr, g.product));
  // Groups whose keys coincide with the same memory (products that normalise alike, e.g. cut at
  // the key budget) are one model: their cards are counted together, not overwritten.
  const byKey = new Map<string, ModelGroup[]>();
  for (const [i, group] of groups.entries()) {
    const collides = new Set(groups.filter((_, j) => plainKeys[j] === plainKeys[i]).map((g) => g.memory)).size > 1;
    const aKey = collides
      ? constructAcceleratorKey(group.mfr, group.product, memorySuffix(group.memory))
      : (plainKeys[i] as string);
    byKey.set(aKey, [...(byKey.get(aKey) ?? []), group]);
  }
  for (const [aKey, sameKey] of byKey) {
    const group: ModelGroup = { ...(sameKey[0] as ModelGroup), models: sameKey.flatMap((g) => g.models) };
    const prefix = `${ACCELERATABLE_PREFIX}${aKey}`;
    // "acceleratable.feature.gpustack.ai/nvidia=true" (+ ".driver-version", ".runtime-version")
    labels[`${ACCELERATABLE_PREFIX}${group.mfr}`] = 'true';
    setSanitized(
      labels,
      `${ACCELERATABLE_PREFIX}${group.mfr}.driver-version`,
      reported(group.models, (m) => m.driverVersion),
    );
    setSanitized(
      labels,
      `${ACCELERATABLE_PREFIX}${group.mfr}.runtime-version`,
      reported(group.models, (m) => m.runtimeVersion),
    );
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3=true"
    labels[prefix] = 'true';
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.product=NVIDIA-H100-80GB-HBM3"
    setSanitized(labels, `${prefix}.product`, group.product);
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.memory=80Gi"
    labels[`${prefix}.memory`] = group.memory;
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.cores=16896"
    labels[`${prefix}.cores`] = String(Math.max(0, ...group.models.map((m) => Math.trunc(m.cores ?? 0))));
    // "acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count=8"
    labels[`${prefix}.count`] = String(group.models.reduce((sum, m) => sum + m.count, 0));
    setSanitized(
      labels,
      `${prefix}.family`,
      reported(group.models, (m) => m.family),
    );
    setSanitized(
      labels,
      `${prefix}.comcap`,
      reported(group.models, (m) => m.computeCapability),
    );
  }
  return labels;
}

/**
 * The stage-2 labels of a node from its detected devices: `feature.gpustack.ai/acceleratable`,
 * then the labels of every model (`constructModelLabels`, one card at a time).
 */
export function constructDeviceLabels(devices: readonly DeviceFacts[]): Record<string, string> {
  const models: DeviceModel[] = devices.flatMap((d) =>
    isManufacturer(d.manufacturer) ? [{ ...d, manufacturer: d.manufacturer, count: 1 }] : [],
  );
  // "feature.gpustack.ai/acceleratable=true|false"
  return { [ACCELERATABLE_LABEL]: models.length > 0 ? 'true' : 'false', ...constructModelLabels(models) };
}

/**
 * The detail the models of one group report, whatever their order: the smallest non-empty
 * sanitised value (cards of one model normally agree; one may fail to report).
 */
function reported(
  models: readonly DeviceModel[],
  detail: (model: DeviceModel) => string | undefined,
): string | undefined {
  return models
    .map((m) => sanitizeLabelValue(detail(m) ?? ''))
    .filter((v) => v !== '')
    .sort(byText)[0];
}

function setSanitized(labels: Record<string, string>, key: string, value: string | undefined): void {
  const clean = value === undefined ? '' : sanitizeLabelValue(value);
  if (clean !== '') labels[key] = clean;
}

export interface ProfileOptions {
  readonly nodeManagement: 'Automatic' | 'Manual';
  readonly generalKey: 'Generic' | 'CPUModel';
  readonly mixedOnNode: boolean;
  readonly manufacturers: ReadonlySet<ManufacturerName>;
}

export interface ProfileNodeInput {
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  /** `status.capacity.cpu` as the API server reports it (`"224"`, `"3500m"`). */
  readonly cpuCapacity?: string | number;
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
    ...(labels[NFD_CPU_VENDOR_LABEL] !== undefined ? { vendor: labels[NFD_CPU_VENDOR_LABEL] } : {}),
    ...(cpuName !== undefined ? { cpuName } : {}),
    ...(labels[NFD_CPU_FAMILY_LABEL] !== undefined ? { family: labels[NFD_CPU_FAMILY_LABEL] } : {}),
    ...(labels[NFD_CPU_MODEL_LABEL] !== undefined ? { model: labels[NFD_CPU_MODEL_LABEL] } : {}),
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
 * The node-profile decorator's answer for one node (DESIGN §3.1, stage 3): the labels it wants,
 * and `null` for every owned label present on the node that it no longer wants. Keys it does
 * not own are never mentioned; an existing `gpustack.ai/managed` value is never overwritten.
 */
export function constructProfileLabels(node: ProfileNodeInput, options: ProfileOptions): Record<string, string | null> {
  const labels = node.labels ?? {};
  const desired: Record<string, string> = {};
  const existingManaged = labels[MANAGED_LABEL];
  if (existingManaged === undefined && options.nodeManagement === 'Automatic') desired[MANAGED_LABEL] = 'true';
  const managed = (existingManaged ?? desired[MANAGED_LABEL]) === 'true';
  if (managed) {
    constructGeneralLabels(node, options, desired);
    const accelerators = constructSlicedLabels(labels, options, desired);
    // "feature.gpustack.ai/cpu-only=true" lets CPU flavors avoid accelerated nodes
    if (!options.mixedOnNode && accelerators === 0 && labels[ACCELERATABLE_LABEL] !== 'true')
      desired[CPU_ONLY_LABEL] = 'true';
  }
  const result: Record<string, string | null> = { ...desired };
  for (const key of Object.keys(labels)) {
    if (isProfileOwnedLabel(key) && desired[key] === undefined) result[key] = null;
  }
  return result;
}
