/** @module SchedulingChain status: computed from the related Nodes and the observed InstanceTypes. */
import {
  buildCondition,
  type Condition,
  type ConditionInput,
  type InstanceType,
  type SchedulingChainStatus,
} from '../../k8s/index.js';
import type { ChainPlan } from './pools.js';

/** Status lists are bounded: a status object must stay far below the API server's size limit. */
export const MAX_SKIPPED_IN_STATUS = 100;

/**
 * Status after a successful plan: pools (live and sticky), managed nodes, skipped nodes with
 * reasons, labels of pooled nodes that could not be read, and `TopologyReady` (`topology-status.ts`).
 */
export function computeChainStatus(
  plan: ChainPlan,
  observedTypes: readonly InstanceType[],
  topology: ConditionInput,
  previous: readonly Condition[] | undefined,
  now: string,
): SchedulingChainStatus {
  const live = new Set(plan.pools.map((p) => p.name));
  const pools = [
    ...plan.pools.map((pool) => ({
      name: pool.name,
      acceleratable: pool.acceleratable,
      nodes: pool.nodes,
      flavors: pool.flavors.map((f) => f.name),
    })),
    ...observedTypes
      .filter((t) => !live.has(t.metadata.name))
      .map((t) => ({ name: t.metadata.name, acceleratable: t.spec.acceleratable, nodes: 0, flavors: [] })),
  ].sort((a, b) => (a.name < b.name ? -1 : 1));
  const conditions = [
    buildCondition(
      {
        type: 'Ready',
        status: 'True',
        reason: 'Synced',
        message: `${pools.length} pools from ${plan.managedNodes} managed nodes`,
      },
      previous,
      now,
    ),
    buildCondition(
      plan.skippedNodes === 0
        ? { type: 'NodesSkipped', status: 'False', reason: 'AllNodesPooled', message: 'every managed node is pooled' }
        : {
            type: 'NodesSkipped',
            status: 'True',
            reason: 'InvalidNodeLabels',
            message: `${plan.skippedNodes} nodes are left out of some pools; see status.skippedNodes`,
          },
      previous,
      now,
    ),
    buildCondition(topology, previous, now),
  ];
  return {
    pools,
    managedNodes: plan.managedNodes,
    ...(plan.skipped.length > 0
      ? { skippedNodes: plan.skipped.slice(0, MAX_SKIPPED_IN_STATUS).map((s) => ({ ...s })) }
      : {}),
    ...(plan.warnings.length > 0
      ? { unreadableLabels: plan.warnings.slice(0, MAX_SKIPPED_IN_STATUS).map((s) => ({ ...s })) }
      : {}),
    conditions,
  };
}

/** Status while the chain cannot plan: `Ready=False` with the reason; pools are not recomputed. */
export function computeRefusedStatus(
  reason: string,
  message: string,
  managedNodes: number,
  previous: readonly Condition[] | undefined,
  now: string,
): SchedulingChainStatus {
  return {
    pools: [],
    managedNodes,
    conditions: [buildCondition({ type: 'Ready', status: 'False', reason, message }, previous, now)],
  };
}
