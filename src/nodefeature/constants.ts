/**
 * @module Every label, annotation and resource key of the chain, composed from a few prefixes
 * (docs/architecture.md#label-algebra). One place, so a key is spelled once.
 */
import { ACCELERATOR_GROUP_MAX, GENERAL_GROUP_MAX } from '../k8s/index.js';

export const SYSTEM_DOMAIN = 'gpustack.ai';

// "feature.gpustack.ai/<name>" — node facts
export const FEATURE_PREFIX = `feature.${SYSTEM_DOMAIN}/`;
// "acceleratable.feature.gpustack.ai/<aKey>[.<suffix>]" — device models and their per-card capacity
export const ACCELERATABLE_PREFIX = `acceleratable.${FEATURE_PREFIX}`;
// "general.feature.gpustack.ai/<gKey>[.count]" — the CPU (general) pool key
export const GENERAL_PREFIX = `general.${FEATURE_PREFIX}`;
// "credits.gpustack.ai/<mfr>" — the Kueue resource every device request folds into
export const CREDITS_PREFIX = `credits.${SYSTEM_DOMAIN}/`;
// "note.gpustack.ai/<note>" — human-facing flavor annotations
export const NOTE_PREFIX = `note.${SYSTEM_DOMAIN}/`;
export const SCHEDULE_PREFIX = `schedule.${SYSTEM_DOMAIN}/`;

/** The largest card memory we believe (16 TiB); beyond it a vendor library answered garbage. */
export const MAX_CARD_MEMORY_MIB = 16 * 1024 * 1024;

export const MANAGED_LABEL = `${SYSTEM_DOMAIN}/managed`;
export const CONTROLLED_LABEL = `${SYSTEM_DOMAIN}/controlled`;
/**
 * Set by node-profile on a managed Node once it has written the Node's NodeProfile: the chain
 * relates managed Nodes without it (an upgrade, a profile not yet written) and reads them whole.
 */
export const PROFILED_LABEL = `${SYSTEM_DOMAIN}/profiled`;
/**
 * Set by node-profile on each NodeProfile: the shard whose NodeShard summarises it
 * (docs/architecture.md#node-shards). Kept once set, so a Node never moves between shards.
 */
export const NODE_SHARD_LABEL = `${SYSTEM_DOMAIN}/node-shard`;
/** Node label (and flavor label and nodeLabel): the Node's topology profile, `fnv64-<16 hex>` (22 characters). */
export const TOPOLOGY_PROFILE_LABEL = `topology.${SYSTEM_DOMAIN}/profile`;
/** Node annotation: the levels of the profile, comma-separated (label keys hold no comma), so the chain can build the Topology. */
export const TOPOLOGY_LEVELS_ANNOTATION = `topology.${SYSTEM_DOMAIN}/levels`;
export const ACCELERATABLE_LABEL = `${FEATURE_PREFIX}acceleratable`;
export const CPU_ONLY_LABEL = `${FEATURE_PREFIX}cpu-only`;
export const CPU_NAME_ANNOTATION = `${FEATURE_PREFIX}cpu-name`;
/** Node annotation: the device labels node-profile derived from a vendor's labels, as JSON `{key: value}`. */
export const DERIVED_LABELS_ANNOTATION = `${FEATURE_PREFIX}derived-device-labels`;
/** Node annotation: the label keys our agent publishes in `node-labels` mode, comma-separated. */
export const AGENT_LABELS_ANNOTATION = `${FEATURE_PREFIX}agent-labels`;
/** Node annotation of NFD's master: the labels it manages (our agent's, by NodeFeature or feature file). */
export const NFD_FEATURE_LABELS_ANNOTATION = 'nfd.node.kubernetes.io/feature-labels';
/** The label prefix NFD leaves out of its feature-labels annotation. */
export const NFD_DEFAULT_LABEL_PREFIX = 'feature.node.kubernetes.io/';
export const RESOURCE_TYPE_LABEL = `resource.${SYSTEM_DOMAIN}/type`;
export const CLUSTER_QUEUE_ANNOTATION = `${SCHEDULE_PREFIX}cluster-queue`;
export const QUEUE_ENTRANCE_LABEL = `${SCHEDULE_PREFIX}queue-entrance`;
export const DERIVED_FROM_NODE_LABEL = `${SCHEDULE_PREFIX}derived-from-node`;
export const PART_OF_LABEL = 'app.kubernetes.io/part-of';
export const PART_OF_VALUE = 'gpustack-operator';

export const RESOURCE_TYPE_NODES = 'nodes';
export const RESOURCE_TYPE_INSTANCE_TYPES = 'instancetypes';

export const OS_LABEL = 'kubernetes.io/os';
export const ARCH_LABEL = 'kubernetes.io/arch';

// Node Feature Discovery's CPU labels, inputs of the CPU-model general key.
export const NFD_CPU_VENDOR_LABEL = 'feature.node.kubernetes.io/cpu-model.vendor_id';
export const NFD_CPU_FAMILY_LABEL = 'feature.node.kubernetes.io/cpu-model.family';
export const NFD_CPU_MODEL_LABEL = 'feature.node.kubernetes.io/cpu-model.id';

export const NODE_DEVICES_CHECK_NAME = 'gpustack-node-devices';
export const NODE_DEVICES_CONTROLLER_NAME = `worker.${SYSTEM_DOMAIN}/node-devices`;

/** The general key when CPUs are not told apart (setting `generalKey: Generic`). */
export const GENERIC_KEY = 'generic';

/** Credits of one whole card: every device request folds into this unit (one share = M/10). */
export const CREDITS_PER_CARD = 1_600_000;

// Label-key budgets: the name part after "/" is at most 63 characters, so each key leaves room
// for the longest suffix written after it.
export const LABEL_NAME_MAX = 63;
/** ".sliced.memory-percentage", the longest suffix behind an aKey (the InstanceType CRD bounds acceleratorGroup alike). */
export const ACCELERATOR_KEY_MAX = ACCELERATOR_GROUP_MAX;
/** ".capacity" (ResourceFlavor label), the longest suffix behind a gKey (the InstanceType CRD bounds generalGroup alike). */
export const GENERAL_KEY_MAX = GENERAL_GROUP_MAX;

/** Per-card capacity suffixes the node-profile decorator owns under ACCELERATABLE_PREFIX. */
export const SLICED_SUFFIXES = [
  '.sliced.units',
  '.sliced.cores-percentage',
  '.sliced.memory-percentage',
  '.sliced.memory-mib',
] as const;
