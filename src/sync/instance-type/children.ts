/** @module Desired children of an InstanceType: its same-named ClusterQueue and one LocalQueue per eligible namespace. */
import {
  KUEUE_API_VERSION,
  formatDecimalQuantity,
  type ClusterQueue,
  type InstanceTypeSpec,
  type LocalQueue,
  type ManufacturerName,
} from '../../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ARCH_LABEL,
  CLUSTER_QUEUE_ANNOTATION,
  CREDITS_PER_CARD,
  NODE_DEVICES_CHECK_NAME,
  OS_LABEL,
  RESOURCE_TYPE_INSTANCE_TYPES,
  RESOURCE_TYPE_LABEL,
  creditsResource,
} from '../../nodefeature/index.js';
import { cardsResource } from '../../dra/index.js';
import type { SelectedFlavor } from './flavors.js';

export interface QueuePlan {
  readonly name: string;
  readonly spec: InstanceTypeSpec;
  readonly keyLabel: string | undefined;
  /** Device pool: the manufacturer whose credits the queue covers; CPU pool: undefined. */
  readonly manufacturer: ManufacturerName | undefined;
  readonly flavors: readonly SelectedFlavor[];
  readonly admissionCheck: boolean;
}

/**
 * The resources a queue covers with their nominalQuota per flavor, summed over its nodes: a device
 * pool's capacity × M credits and its capacity in whole DRA cards (what Kueue before 0.18 counts
 * claims in, docs/architecture.md#kueue-objects), a CPU pool's cores.
 */
function quotasOf(plan: QueuePlan, flavor: SelectedFlavor): { name: string; nominalQuota: string }[] {
  if (!plan.manufacturer) return [{ name: 'cpu', nominalQuota: formatDecimalQuantity(flavor.capacity) }];
  return [
    {
      name: creditsResource(plan.manufacturer),
      nominalQuota: formatDecimalQuantity(BigInt(flavor.capacity) * BigInt(CREDITS_PER_CARD)),
    },
    { name: cardsResource(plan.manufacturer), nominalQuota: formatDecimalQuantity(flavor.capacity) },
  ];
}

/**
 * The ClusterQueue: no cohort, one resource group, `Hold` when it has no flavors (an empty plan
 * with `IgnoreUndeclared` would admit everything) or the type is inactive.
 */
export function buildClusterQueue(plan: QueuePlan): ClusterQueue {
  const covered = plan.manufacturer ? [creditsResource(plan.manufacturer), cardsResource(plan.manufacturer)] : ['cpu'];
  const hold = plan.flavors.length === 0 || plan.spec.inactive === true;
  const labels: Record<string, string> = {
    [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_INSTANCE_TYPES,
    [OS_LABEL]: plan.spec.os,
    [ARCH_LABEL]: plan.spec.arch,
    [ACCELERATABLE_LABEL]: String(plan.spec.acceleratable),
  };
  if (plan.keyLabel) labels[plan.keyLabel] = 'true';
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'ClusterQueue',
    metadata: { name: plan.name, labels },
    spec: {
      namespaceSelector: {},
      ...(plan.flavors.length > 0
        ? {
            resourceGroups: [
              {
                coveredResources: covered,
                flavors: plan.flavors.map((f) => ({ name: f.name, resources: quotasOf(plan, f) })),
              },
            ],
          }
        : {}),
      preemption: { withinClusterQueue: 'LowerPriority' },
      stopPolicy: hold ? 'Hold' : 'None',
      ...(plan.admissionCheck
        ? { admissionChecksStrategy: { admissionChecks: [{ name: NODE_DEVICES_CHECK_NAME }] } }
        : {}),
    },
  };
}

/**
 * The LocalQueue of a ClusterQueue in one namespace, named `localQueue` (`localQueueName` of the
 * ClusterQueue: 31 characters, fits any label; hashed once per sync, not once per namespace).
 */
export function buildLocalQueue(clusterQueue: string, localQueue: string, namespace: string): LocalQueue {
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'LocalQueue',
    metadata: { name: localQueue, namespace, annotations: { [CLUSTER_QUEUE_ANNOTATION]: clusterQueue } },
    spec: { clusterQueue },
  };
}
