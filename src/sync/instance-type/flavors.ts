/**
 * @module Which ResourceFlavors feed an InstanceType's ClusterQueue: those whose labels match the
 * type's identity (os, arch, acceleratable and its pool key), read from the related flavors.
 */
import { KUEUE_MAX_FLAVORS_PER_GROUP, type InstanceTypeSpec } from '../../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ARCH_LABEL,
  GENERAL_PREFIX,
  OS_LABEL,
  RESOURCE_TYPE_LABEL,
  RESOURCE_TYPE_NODES,
  parseCount,
} from '../../nodefeature/index.js';
import { isTerminating } from '../common/index.js';
import type { ReceivedObject } from './schema.js';

export interface SelectedFlavor {
  readonly name: string;
  readonly count: number;
  readonly capacity: number;
}

export interface FlavorSelection {
  readonly flavors: SelectedFlavor[];
  /** Flavors that matched the pool but were left out, with why. */
  readonly dropped: { readonly name: string; readonly reason: 'TooManyFlavors' | 'InvalidFlavorLabels' }[];
}

/** The label that names the pool: `acceleratable.feature.gpustack.ai/<aKey>` or `general.feature.gpustack.ai/<gKey>`. */
export function poolKeyLabel(spec: InstanceTypeSpec): string | undefined {
  if (!spec.acceleratable) return `${GENERAL_PREFIX}${spec.generalGroup}`;
  return spec.acceleratorGroup ? `${ACCELERATABLE_PREFIX}${spec.acceleratorGroup}` : undefined;
}

function matchesPool(flavor: ReceivedObject, spec: InstanceTypeSpec, keyLabel: string): boolean {
  const labels = flavor.metadata.labels ?? {};
  return (
    labels[RESOURCE_TYPE_LABEL] === RESOURCE_TYPE_NODES &&
    labels[OS_LABEL] === spec.os &&
    labels[ARCH_LABEL] === spec.arch &&
    labels[ACCELERATABLE_LABEL] === String(spec.acceleratable) &&
    labels[keyLabel] === 'true'
  );
}

/** Every related flavor of the pool, terminating ones included (what `TopologyReady` reads). */
export function poolFlavors(related: readonly ReceivedObject[], spec: InstanceTypeSpec): ReceivedObject[] {
  const keyLabel = poolKeyLabel(spec);
  return keyLabel === undefined ? [] : related.filter((flavor) => matchesPool(flavor, spec, keyLabel));
}

function byCountThenName(a: SelectedFlavor, b: SelectedFlavor): number {
  return a.count - b.count || (a.name < b.name ? -1 : 1);
}

/**
 * The pool's flavors, sorted by per-node count then name. Terminating flavors count as absent
 * (keeping one deadlocks on Kueue's in-use finalizer). Over 64: the 64 largest by capacity stay.
 */
export function selectFlavors(related: readonly ReceivedObject[], spec: InstanceTypeSpec): FlavorSelection {
  const keyLabel = poolKeyLabel(spec);
  if (keyLabel === undefined) return { flavors: [], dropped: [] };
  const valid: SelectedFlavor[] = [];
  const dropped: FlavorSelection['dropped'][number][] = [];
  for (const flavor of related) {
    if (isTerminating(flavor) || !matchesPool(flavor, spec, keyLabel)) continue;
    const labels = flavor.metadata.labels ?? {};
    const count = parseCount(labels[`${keyLabel}.count`]);
    const capacity = parseCount(labels[`${keyLabel}.capacity`], Number.MAX_SAFE_INTEGER);
    if (count === undefined || capacity === undefined)
      dropped.push({ name: flavor.metadata.name, reason: 'InvalidFlavorLabels' });
    else valid.push({ name: flavor.metadata.name, count, capacity });
  }
  const byCapacity = [...valid].sort((a, b) => b.capacity - a.capacity || (a.name < b.name ? -1 : 1));
  const kept = byCapacity.slice(0, KUEUE_MAX_FLAVORS_PER_GROUP);
  for (const flavor of byCapacity.slice(KUEUE_MAX_FLAVORS_PER_GROUP))
    dropped.push({ name: flavor.name, reason: 'TooManyFlavors' });
  return { flavors: kept.sort(byCountThenName), dropped: dropped.sort((a, b) => (a.name < b.name ? -1 : 1)) };
}
