/**
 * @module Label construction for stage 2 (the agent's device labels, and those node-profile
 * derives from a vendor's labels), docs/architecture.md#labels. Every value passes one sanitiser.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { byText } from '../k8s/index.js';
import { ACCELERATABLE_LABEL, ACCELERATABLE_PREFIX } from './constants.js';
import { constructAcceleratorKey } from './keys.js';
import { isManufacturer, type Card } from '../contracts/index.js';
import { formatMemoryMiB } from './memory.js';
import { sanitizeLabelValue } from './names.js';

/**
 * What the labels read of a card: the fields that make its model. The rest of a `Card` (index,
 * UUID, PCI address) tells cards of one model apart and is the ResourceSlices' business.
 */
export type LabelledCard = Pick<
  Card,
  | 'manufacturer'
  | 'product'
  | 'memoryMiB'
  | 'cores'
  | 'family'
  | 'computeCapability'
  | 'driverVersion'
  | 'runtimeVersion'
>;

/**
 * One device model of a node: what the agent builds from its cards, and what node-profile
 * derives from a vendor's labels (GPU Feature Discovery, …). Both become labels through
 * `constructModelLabels`, so the names and the 63-character rule are the same.
 */
export interface DeviceModel extends LabelledCard {
  /** Product name as reported (`NVIDIA H100 80GB HBM3`); the aKey and `.product` come from it. */
  readonly product: string;
  /** Per-card memory in MiB; 0 when unknown (the `.memory` label is then `0`). */
  readonly memoryMiB: number;
  /** Cards of this model on the node. */
  readonly count: number;
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

/** `80Gi` → `80g`: the memory suffix that tells apart two groups of one product (docs/architecture.md#labels). */
function memorySuffix(memory: string): string {
  return memory.replace(/i$/, '').toLowerCase();
}

/**
 * The model groups of some models by aKey. Two groups that would share an aKey (same product,
 * different memory) both get a memory suffix; groups whose keys coincide with the same memory
 * (products that normalise alike, e.g. cut at the key budget) are one model.
 */
function groupsByKey(models: readonly DeviceModel[]): Map<string, ModelGroup[]> {
  const groups = groupModels(models.filter((m) => m.count > 0));
  const plainKeys = groups.map((g) => constructAcceleratorKey(g.mfr, g.product));
  const byKey = new Map<string, ModelGroup[]>();
  for (const [i, group] of groups.entries()) {
    const collides = new Set(groups.filter((_, j) => plainKeys[j] === plainKeys[i]).map((g) => g.memory)).size > 1;
    const aKey = collides
      ? constructAcceleratorKey(group.mfr, group.product, memorySuffix(group.memory))
      : (plainKeys[i] as string);
    byKey.set(aKey, [...(byKey.get(aKey) ?? []), group]);
  }
  return byKey;
}

/**
 * The aKey of every card, in the order given, exactly as `constructDeviceLabels` keys the same
 * cards (so a ResourceSlice's `productKey` names the model the labels count it under);
 * `undefined` for a manufacturer we do not know.
 */
export function deviceAcceleratorKeys(devices: readonly LabelledCard[]): (string | undefined)[] {
  const models = devices.map((d) =>
    isManufacturer(d.manufacturer) ? { ...d, manufacturer: d.manufacturer, count: 1 } : undefined,
  );
  const keyOf = new Map<DeviceModel, string>();
  for (const [aKey, groups] of groupsByKey(models.filter((m) => m !== undefined)))
    for (const group of groups) for (const model of group.models) keyOf.set(model, aKey);
  return models.map((m) => (m === undefined ? undefined : keyOf.get(m)));
}

/**
 * The device labels of some models, per manufacturer and per model group (same product and
 * memory); without `feature.gpustack.ai/acceleratable`, which only the agent writes. Two groups
 * that would share an aKey (same product, different memory) both get a memory suffix instead of
 * overwriting each other.
 */
export function constructModelLabels(models: readonly DeviceModel[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [aKey, sameKey] of groupsByKey(models)) {
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
export function constructDeviceLabels(devices: readonly LabelledCard[]): Record<string, string> {
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
