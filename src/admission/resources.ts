/**
 * @module What the checker watches: Kueue v1beta2 Workloads and ResourceFlavors, Nodes, Pods, the
 * SchedulingChain `default`, and resource.k8s.io/v1 ResourceSlices, ResourceClaims and
 * ResourceClaimTemplates and the DeviceTaintRules (the card ledger), each parsed once at the boundary with the loose schemas the
 * decision reads.
 */
import type { z } from 'zod';
import { GPUSTACK_API_VERSION, NodeSchema, SCHEDULING_CHAIN_NAME, type KubeObject, type Node } from '../k8s/index.js';
import {
  DEVICE_TAINT_RULES_RESOURCE,
  ReceivedDeviceTaintRuleSchema,
  ReceivedResourceClaimSchema,
  ReceivedResourceClaimTemplateSchema,
  ReceivedInstanceTypeSchema,
  ReceivedResourceSliceSchema,
  resourcePath,
  type ReceivedInstanceType,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceClaim,
  type ReceivedResourceClaimTemplate,
  type ReceivedResourceSlice,
} from '../dra/index.js';
import {
  slimNode,
  slimPod,
  slimDeviceTaintRule,
  slimResourceClaim,
  slimInstanceType,
  slimResourceClaimTemplate,
  slimResourceFlavor,
  slimResourceSlice,
  slimWorkload,
} from './store-fields.js';
import { ReceivedSchedulingChainSchema, type ReceivedSchedulingChain } from './received-chain.js';
import {
  ReceivedResourceFlavorSchema,
  PodSchema,
  WorkloadSchema,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from '../placement/index.js';

export const KUEUE_API = '/apis/kueue.x-k8s.io/v1beta2';

/** One collection the checker lists and watches across all namespaces. */
export interface WatchedResource<T extends KubeObject> {
  /** Short name for logs and the health report: `workloads`, `pods`. */
  readonly name: string;
  /** Collection path, may carry a field selector. */
  readonly path: string;
  readonly schema: z.ZodType<T>;
  /** What the store keeps of a parsed object (`store-fields.ts`): the fields the checker reads. */
  readonly slim: (object: T) => T;
}

export const WORKLOADS: WatchedResource<Workload> = {
  name: 'workloads',
  path: `${KUEUE_API}/workloads`,
  schema: WorkloadSchema,
  slim: slimWorkload,
};
export const RESOURCE_FLAVORS: WatchedResource<ReceivedResourceFlavor> = {
  name: 'resourceflavors',
  path: `${KUEUE_API}/resourceflavors`,
  schema: ReceivedResourceFlavorSchema,
  slim: slimResourceFlavor,
};
export const NODES: WatchedResource<Node> = {
  name: 'nodes',
  path: '/api/v1/nodes',
  schema: NodeSchema,
  slim: slimNode,
};
/** Terminated Pods hold no cards (the decision ignores them too): leaving them out keeps the store small. */
export const PODS: WatchedResource<Pod> = {
  name: 'pods',
  path: `/api/v1/pods?fieldSelector=${encodeURIComponent('status.phase!=Succeeded,status.phase!=Failed')}`,
  schema: PodSchema,
  slim: slimPod,
};

/** Every driver's slices (a field selector takes one driver, we have nine): others are slimmed to their pool. */
export const RESOURCE_SLICES: WatchedResource<ReceivedResourceSlice> = {
  name: 'resourceslices',
  path: resourcePath('resourceslices'),
  schema: ReceivedResourceSliceSchema,
  slim: slimResourceSlice,
};
export const RESOURCE_CLAIMS: WatchedResource<ReceivedResourceClaim> = {
  name: 'resourceclaims',
  path: resourcePath('resourceclaims'),
  schema: ReceivedResourceClaimSchema,
  slim: slimResourceClaim,
};
export const RESOURCE_CLAIM_TEMPLATES: WatchedResource<ReceivedResourceClaimTemplate> = {
  name: 'resourceclaimtemplates',
  path: resourcePath('resourceclaimtemplates'),
  schema: ReceivedResourceClaimTemplateSchema,
  slim: slimResourceClaimTemplate,
};

/**
 * DeviceTaintRules at the version the cluster serves (`resource.k8s.io/v1` or `v1beta2`, found by
 * discovery): the cordons the ledger subtracts. Every rule, not only ours: any blocking taint keeps
 * the scheduler off a device.
 */
export function deviceTaintRules(groupVersion: string): WatchedResource<ReceivedDeviceTaintRule> {
  return {
    name: DEVICE_TAINT_RULES_RESOURCE,
    path: resourcePath(DEVICE_TAINT_RULES_RESOURCE, { groupVersion }),
    schema: ReceivedDeviceTaintRuleSchema,
    slim: slimDeviceTaintRule,
  };
}

export const INSTANCE_TYPES: WatchedResource<ReceivedInstanceType> = {
  name: 'instancetypes',
  path: `/apis/${GPUSTACK_API_VERSION}/instancetypes`,
  schema: ReceivedInstanceTypeSchema,
  slim: slimInstanceType,
};

export const SCHEDULING_CHAINS: WatchedResource<ReceivedSchedulingChain> = {
  name: 'schedulingchains',
  path: `/apis/${GPUSTACK_API_VERSION}/schedulingchains?fieldSelector=${encodeURIComponent(`metadata.name=${SCHEDULING_CHAIN_NAME}`)}`,
  schema: ReceivedSchedulingChainSchema,
  // One object, its spec read whole by the chain's own helpers: nothing to gain.
  slim: (chain) => chain,
};

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(metadata: { readonly name: string; readonly namespace?: string | undefined }): string {
  return metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name;
}

/** The resourceVersion of an object as received (the loose metadata schema passes it through untyped). */
export function resourceVersionOf(object: { readonly metadata: object }): string | undefined {
  const value = (object.metadata as { resourceVersion?: unknown }).resourceVersion;
  return typeof value === 'string' ? value : undefined;
}
