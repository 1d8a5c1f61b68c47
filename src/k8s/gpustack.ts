/**
 * @module Our CRDs (`worker.gpustack.ai/v1alpha1`, cluster-scoped): SchedulingChain (the
 * settings) and InstanceType. The settings schema carries the defaults of docs/architecture.md#settings; the CRD
 * OpenAPI rejects bad values at admission, `resolveSettings` is the second line of defence.
 */
import { z } from 'zod';
import {
  ConditionSchema,
  KubeObjectSchema,
  boundEchoedDepth,
  LabelSelectorSchema,
  LabelsSchema,
  OutputConditionSchema,
  ReceivedLabelsSchema,
  TolerationSchema,
} from './objects.js';
import { summarizeIssues } from './paths.js';
import { LABEL_NAME_MAX, LABEL_NAME_PATTERN, isLabelKey } from './validation.js';

export const GPUSTACK_API_VERSION = 'worker.gpustack.ai/v1alpha1';
export const SCHEDULING_CHAIN_NAME = 'default';
export const DEFAULT_SYSTEM_NAMESPACE = 'gpustack-system';
export const DISPLAY_NAME_MAX = 64;
export const DESCRIPTION_MAX = 1024;
/**
 * Longest aKey (`spec.acceleratorGroup`): `acceleratable.feature.gpustack.ai/<aKey>.sliced.memory-percentage`,
 * its longest label, must keep a name part of at most 63 characters (docs/architecture.md#keys).
 */
export const ACCELERATOR_GROUP_MAX = LABEL_NAME_MAX - '.sliced.memory-percentage'.length;
/** Longest gKey (`spec.generalGroup`): `general.feature.gpustack.ai/<gKey>.capacity` must stay a valid label key. */
export const GENERAL_GROUP_MAX = LABEL_NAME_MAX - '.capacity'.length;

export const MANUFACTURER_NAMES = [
  'amd',
  'ascend',
  'cambricon',
  'hygon',
  'iluvatar',
  'metax',
  'mthreads',
  'nvidia',
  'thead',
] as const;
export const ManufacturerNameSchema = z.enum(MANUFACTURER_NAMES);
export type ManufacturerName = z.infer<typeof ManufacturerNameSchema>;

/**
 * Where node-profile may take a node's device labels from, in order: `Agent` (ours: never
 * overwritten, so it always comes first) and the vendor tools that already label nodes —
 * NVIDIA GPU Feature Discovery (`nvidia.com/gpu.*`), AMD's node labeller (`amd.com/gpu.*`) and
 * Ascend's device plugin (`huawei.com/npu.chip.*`).
 */
export const DEVICE_LABEL_SOURCES = ['Agent', 'NVIDIAGFD', 'AMDNodeLabeller', 'AscendDevicePlugin'] as const;
export const DeviceLabelSourceSchema = z.enum(DEVICE_LABEL_SOURCES);
export type DeviceLabelSource = z.infer<typeof DeviceLabelSourceSchema>;

export const DeviceLabelSourcesSchema = z
  .array(DeviceLabelSourceSchema)
  .min(1)
  .max(DEVICE_LABEL_SOURCES.length)
  .refine((sources) => new Set(sources).size === sources.length, { message: 'each source at most once' })
  .refine((sources) => sources[0] === 'Agent', {
    message: 'must start with Agent: labels our agent publishes are never overwritten',
  })
  .default([...DEVICE_LABEL_SOURCES]);

export const ManufacturerSettingSchema = z.strictObject({
  name: ManufacturerNameSchema,
  /** Device resource the manufacturer's device plugin advertises, e.g. `nvidia.com/gpu`. */
  resourceName: z.string().min(1).optional(),
});

/**
 * Who hands out a manufacturer's cards on a node (docs/architecture.md#device-owner): `Auto` decides per node from
 * what the Node advertises (its vendor's device plugin, or DRA); `DRA` and `DevicePlugin` force a side.
 */
export const DeviceOwnerSettingSchema = z.enum(['Auto', 'DRA', 'DevicePlugin']);
export type DeviceOwnerSetting = z.infer<typeof DeviceOwnerSettingSchema>;

/** The label every Kueue Topology ends with; a settings list may not name it (it is always last). */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
/** Kueue's Topology takes at most 16 levels; the hostname is always the last one. */
export const TOPOLOGY_MAX_LEVELS = 16;

/**
 * Topology-aware placement (docs/architecture.md#topology). Absent or `Disabled`: no profile, no
 * Topology, flavors as before. `Auto`: every managed Node gets a topology profile from the level
 * labels it carries (`levels`, or the well-known ones), `kubernetes.io/hostname` last.
 */
export const TopologySettingSchema = z.strictObject({
  mode: z.enum(['Disabled', 'Auto']).default('Disabled'),
  /**
   * The level labels, coarse to fine, replacing the well-known list (a TopologySource's levels):
   * a Node's levels are the longest prefix of this list it carries.
   */
  levels: z
    .array(
      z
        .string()
        .refine(isLabelKey, 'must be a label key')
        .refine((key) => key !== HOSTNAME_LABEL, `${HOSTNAME_LABEL} is always the last level; leave it out`),
    )
    .min(1)
    .max(TOPOLOGY_MAX_LEVELS - 1)
    .refine((keys) => new Set(keys).size === keys.length, 'levels must be unique')
    .optional(),
});
export type TopologySetting = z.infer<typeof TopologySettingSchema>;

export const SchedulingChainSpecSchema = z.strictObject({
  nodeManagement: z.enum(['Automatic', 'Manual']).default('Automatic'),
  generalKey: z.enum(['Generic', 'CPUModel']).default('Generic'),
  mixedOnNode: z.boolean().default(true),
  deriveInstanceTypes: z.boolean().default(true),
  admissionCheck: z.enum(['Enabled', 'Disabled']).default('Enabled'),
  /** Namespaces that get a LocalQueue per InstanceType; absent = all but kube-system and the system namespace. */
  localQueueNamespaces: LabelSelectorSchema.optional(),
  systemNamespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .max(63)
    .default(DEFAULT_SYSTEM_NAMESPACE),
  /** Enabled manufacturers; absent = all nine with their default device resources. */
  manufacturers: z.array(ManufacturerSettingSchema).optional(),
  /** Per manufacturer, who owns its cards on a node; absent = `Auto` for every one. */
  deviceOwners: z.partialRecord(ManufacturerNameSchema, DeviceOwnerSettingSchema).optional(),
  /**
   * Device-label sources in order (`Agent` first): for a manufacturer our agent has published no
   * labels for, node-profile derives them from the first vendor source that labelled the node.
   * `[Agent]` turns derivation off.
   */
  deviceLabelSources: DeviceLabelSourcesSchema,
  /**
   * Shards of the NodeProfiles (docs/architecture.md#node-shards): node-profile puts each new Node in
   * one, a NodeShard summarises each, and the chain reads the summaries, so no hook request holds
   * every Node. A Node keeps its shard when this changes; only Nodes that join later use the new count.
   */
  nodeShards: z.number().int().min(1).max(1024).default(32),
  /** Topology profiles, Kueue Topologies and topology-qualified flavors; absent = `Disabled` (no default is filled in, so a chain without it renders as before). */
  topology: TopologySettingSchema.optional(),
  /** Tolerations per flavor kind; absent `device` = tolerate the manufacturer's device-resource taint. */
  flavorTolerations: z
    .strictObject({
      cpu: z.array(TolerationSchema).max(8).optional(),
      device: z.array(TolerationSchema).max(8).optional(),
    })
    .optional(),
});
/** Settings with every default filled in. */
export type Settings = z.infer<typeof SchedulingChainSpecSchema>;

export const PoolStatusSchema = z.strictObject({
  name: z.string(),
  acceleratable: z.boolean(),
  nodes: z.number().int(),
  flavors: z.array(z.string()),
});

export const SkippedNodeSchema = z.strictObject({ name: z.string(), reason: z.string(), message: z.string() });

export const SchedulingChainStatusSchema = z.strictObject({
  pools: z.array(PoolStatusSchema),
  managedNodes: z.number().int(),
  skippedNodes: z.array(SkippedNodeSchema).optional(),
  /** Labels of pooled nodes that could not be read (a `.memory` pooled as unknown), with the reason. */
  unreadableLabels: z.array(SkippedNodeSchema).optional(),
  conditions: z.array(OutputConditionSchema),
});
export type SchedulingChainStatus = z.infer<typeof SchedulingChainStatusSchema>;

/** The SchedulingChain as received: spec left unparsed so bad settings become a condition, not a 400. */
export const SchedulingChainSchema = KubeObjectSchema.extend({
  spec: z.unknown().optional(),
  status: z.looseObject({ conditions: z.array(ConditionSchema).optional() }).nullish(),
});
export type SchedulingChain = z.infer<typeof SchedulingChainSchema>;

/**
 * The ChainSettings `default`: the SchedulingChain's resolved settings (spec only, no status),
 * which the chain writes as its child only when they change. node-profile relates it instead of
 * the chain, so a chain status write (one Node's cards) re-syncs no Node. Spec left unparsed, as
 * the chain's: it is resolved by `resolveSettings` with the same schema.
 */
export const ChainSettingsSchema = KubeObjectSchema.extend({ spec: z.unknown().optional() });
export type ChainSettings = z.infer<typeof ChainSettingsSchema>;

/** The ChainSettings as the chain emits it: the settings with every default filled in. */
export const ChainSettingsOutputSchema = z.strictObject({
  apiVersion: z.literal(GPUSTACK_API_VERSION),
  kind: z.literal('ChainSettings'),
  metadata: z.strictObject({ name: z.string(), labels: LabelsSchema.optional() }),
  spec: SchedulingChainSpecSchema,
});
export type ChainSettingsOutput = z.output<typeof ChainSettingsOutputSchema>;

/**
 * What the chain reads of one managed Node — its gpustack.ai labels, os and arch, the cpu-name
 * annotation and `status.capacity.cpu`, as node-profile leaves them — written by node-profile as
 * the Node's attachment (same name). The chain relates these instead of Nodes: about 1 KB per Node
 * instead of the ~24 KB of a Node a kubelet writes (images, conditions), which Metacontroller
 * otherwise reads, marshals and sends on every chain sync.
 */
export const NodeProfileSpecSchema = z.strictObject({
  labels: LabelsSchema,
  annotations: LabelsSchema.optional(),
  cpuCapacity: z.string().optional(),
});
export type NodeProfileSpec = z.infer<typeof NodeProfileSpecSchema>;

/** A NodeProfile as related to the chain: its spec is all the chain reads of the Node. */
export const NodeProfileSchema = KubeObjectSchema.extend({
  spec: z.looseObject({
    labels: ReceivedLabelsSchema.default({}),
    annotations: ReceivedLabelsSchema.optional(),
    cpuCapacity: z.union([z.string(), z.number()]).optional(),
  }),
});
export type NodeProfile = z.infer<typeof NodeProfileSchema>;

/** The NodeProfile as node-profile emits it. */
export const NodeProfileOutputSchema = z.strictObject({
  apiVersion: z.literal(GPUSTACK_API_VERSION),
  kind: z.literal('NodeProfile'),
  metadata: z.strictObject({ name: z.string(), labels: LabelsSchema.optional() }),
  spec: NodeProfileSpecSchema,
});
export type NodeProfileOutput = z.output<typeof NodeProfileOutputSchema>;

export const UnitResourcesSchema = z.strictObject({ cpu: z.string(), ram: z.string() });

/**
 * A string that ends up in a label — a value (`os`, `arch`) or the name part of a key (the pool
 * keys) —: non-empty, at most `max` characters, alphanumerics with inner `-_.`.
 */
function labelText(max: number) {
  return z
    .string()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters (it is written into a label)`)
    .regex(
      LABEL_NAME_PATTERN,
      'must be letters, digits, "-", "_" or "." and begin and end with a letter or digit (it is written into a label)',
    );
}

/** The spec's fields with their types only: how a received InstanceType is read. */
const INSTANCE_TYPE_SPEC_FIELDS = {
  displayName: z.string().optional(),
  description: z.string().optional(),
  inactive: z.boolean().optional(),
  acceleratable: z.boolean(),
  acceleratorGroup: z.string().optional(),
  generalGroup: z.string().default('generic'),
  os: z.string(),
  arch: z.string(),
  unitResources: UnitResourcesSchema.optional(),
  localStorage: z.string().optional(),
};

/**
 * The spec with its rules: what the CRD admits (generated from this schema) and what the chain
 * emits. `os`, `arch` and the pool keys are written into the labels of the ClusterQueue.
 */
export const InstanceTypeSpecSchema = z.strictObject({
  ...INSTANCE_TYPE_SPEC_FIELDS,
  displayName: z.string().max(DISPLAY_NAME_MAX).optional(),
  description: z.string().max(DESCRIPTION_MAX).optional(),
  acceleratorGroup: labelText(ACCELERATOR_GROUP_MAX).optional(),
  generalGroup: labelText(GENERAL_GROUP_MAX).default('generic'),
  os: labelText(LABEL_NAME_MAX),
  arch: labelText(LABEL_NAME_MAX),
});
export type InstanceTypeSpec = z.infer<typeof InstanceTypeSpecSchema>;

/**
 * An InstanceType as received (parent of the instance-type controller, child of the chain): the
 * spec read by type only, so a value that breaks a rule (an object stored before the CRD had it)
 * becomes a condition through {@link checkInstanceTypeSpec}, not a 400. `flavors` and `capacity`
 * are the last reported ones, kept while the spec is invalid.
 */
export const InstanceTypeSchema = KubeObjectSchema.extend({
  // Fields it does not know pass through, and an observed one may be sent back as it came.
  spec: boundEchoedDepth(z.looseObject(INSTANCE_TYPE_SPEC_FIELDS)),
  status: z
    .looseObject({
      conditions: z.array(ConditionSchema).optional(),
      flavors: z.array(z.string()).optional().catch(undefined),
      capacity: z.string().optional().catch(undefined),
    })
    .nullish(),
});
export type InstanceType = z.infer<typeof InstanceTypeSchema>;

const InstanceTypeSpecRulesSchema = z.looseObject(InstanceTypeSpecSchema.shape);

export type SpecCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

/**
 * Checks a received InstanceType spec against the rules the CRD enforces (the second line of
 * defence): a bounded message naming each failing field, never a throw.
 * @example checkInstanceTypeSpec({ acceleratable: false, os: 'linux/amd64', arch: 'amd64' })
 * // { ok: false, message: 'spec.os: must be letters, …' }
 */
export function checkInstanceTypeSpec(spec: unknown): SpecCheck {
  const parsed = InstanceTypeSpecRulesSchema.safeParse(spec);
  return parsed.success ? { ok: true } : { ok: false, message: summarizeIssues(parsed.error.issues, ['spec']) };
}

/** An InstanceType as the chain emits it. */
export const InstanceTypeOutputSchema = z.strictObject({
  apiVersion: z.literal(GPUSTACK_API_VERSION),
  kind: z.literal('InstanceType'),
  metadata: z.strictObject({ name: z.string(), labels: LabelsSchema.optional(), annotations: LabelsSchema.optional() }),
  spec: InstanceTypeSpecSchema,
});
export type InstanceTypeOutput = z.infer<typeof InstanceTypeOutputSchema>;

/**
 * The pool's cards from the DRA ledger (ResourceSlices minus ResourceClaims), as the admission
 * checker last counted them: published, allocated whole, in use by shares, free whole (neither
 * held nor tainted), cordoned (`gpustack-operator cards cordon`, held or not: their flavor's
 * quota is that much smaller) and unhealthy (the agent's taint). The last two are absent in what
 * a checker before them wrote.
 */
export const InstanceTypeDevicesSchema = z.strictObject({
  published: z.number().int().nonnegative(),
  allocated: z.number().int().nonnegative(),
  shared: z.number().int().nonnegative(),
  free: z.number().int().nonnegative(),
  /**
   * Cards of the pool on nodes whose vendor device plugin owns them (docs/architecture.md#device-owner): not
   * published to DRA, requested as `<base>`; absent when none.
   */
  devicePlugin: z.number().int().nonnegative().optional(),
  cordoned: z.number().int().nonnegative().optional(),
  unhealthy: z.number().int().nonnegative().optional(),
});
export type InstanceTypeDevices = z.infer<typeof InstanceTypeDevicesSchema>;

export const InstanceTypeStatusSchema = z.strictObject({
  phase: z.enum(['Active', 'Inactive', 'Pending', 'Terminating']),
  entrance: z.string(),
  flavors: z.array(z.string()),
  capacity: z.string(),
  conditions: z.array(OutputConditionSchema),
  devices: InstanceTypeDevicesSchema.optional(),
});
export type InstanceTypeStatus = z.infer<typeof InstanceTypeStatusSchema>;

/**
 * One group of a NodeShard's summary: the Nodes of the shard whose NodeProfiles read the same
 * (labels, cpu-name annotation, CPU capacity), so the chain reads them as one. `first` is the
 * smallest name (a flavor takes its identity from its first Node by name); `names`, the first
 * `MAX_GROUP_NAMES` names, only where the group's labels can leave a Node out of a pool or be
 * unreadable, so the chain can name the skipped Nodes as before.
 */
export const NodeGroupSchema = z.strictObject({
  nodes: z.number().int().min(1),
  first: z.string(),
  labels: LabelsSchema,
  annotations: LabelsSchema.optional(),
  cpuCapacity: z.string().optional(),
  names: z.array(z.string()).optional(),
});
export type NodeGroup = z.infer<typeof NodeGroupSchema>;

/** The names a group carries at most: the chain reports at most this many skipped Nodes (`MAX_SKIPPED_IN_STATUS`). */
export const MAX_GROUP_NAMES = 100;

export const NodeShardSpecSchema = z.strictObject({ index: z.number().int().min(0) });
/**
 * The latest arrival of a shard's NodeProfiles, by their creation times (the API server's clock):
 * its newest profile and the oldest reached from it without a gap. The chain paces its syncs by it
 * while Nodes join (docs/architecture.md#join-pacing).
 */
export const NodeShardArrivalSchema = z.strictObject({
  since: z.string(),
  newest: z.string(),
  /** NodeProfiles created from `since` to `newest`: a pool joining at once is held before it lasted 2 s. */
  nodes: z.number().int().min(1).optional(),
});
export type NodeShardArrival = z.infer<typeof NodeShardArrivalSchema>;
export const NodeShardStatusSchema = z.strictObject({
  /** NodeProfiles in the shard. */
  profiles: z.number().int(),
  groups: z.array(NodeGroupSchema),
  arrival: NodeShardArrivalSchema.optional(),
});
export type NodeShardStatus = z.infer<typeof NodeShardStatusSchema>;

/** A NodeShard as received: the shard controller reads its spec, the chain its status. */
export const NodeShardSchema = KubeObjectSchema.extend({
  spec: z.looseObject({ index: z.number().int().min(0) }),
  status: z
    .looseObject({
      profiles: z.number().int().optional(),
      groups: z
        .array(
          z.looseObject({
            nodes: z.number().int().min(1),
            first: z.string(),
            labels: ReceivedLabelsSchema.default({}),
            annotations: ReceivedLabelsSchema.optional(),
            cpuCapacity: z.union([z.string(), z.number()]).optional(),
            names: z.array(z.string()).optional(),
          }),
        )
        .optional(),
      // A pacing hint only: one that does not parse is no arrival, never a refused chain.
      arrival: z
        .looseObject({ since: z.string(), newest: z.string(), nodes: z.number().int().min(1).optional() })
        .optional()
        .catch(undefined),
    })
    .nullish(),
});
export type NodeShard = z.infer<typeof NodeShardSchema>;

/** The NodeShard as the chain emits it (its status is the shard controller's). */
export const NodeShardOutputSchema = z.strictObject({
  apiVersion: z.literal(GPUSTACK_API_VERSION),
  kind: z.literal('NodeShard'),
  metadata: z.strictObject({ name: z.string(), labels: LabelsSchema.optional() }),
  spec: NodeShardSpecSchema,
});
export type NodeShardOutput = z.output<typeof NodeShardOutputSchema>;
