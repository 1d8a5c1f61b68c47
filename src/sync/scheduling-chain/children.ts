/**
 * @module Desired children of the SchedulingChain: one ResourceFlavor per flavor plan, one derived
 * InstanceType per pool (sticky: kept after its nodes leave), and the `gpustack-node-devices`
 * AdmissionCheck. Each builder takes derived values, never the request.
 */
import {
  GPUSTACK_API_VERSION,
  KUEUE_API_VERSION,
  DISPLAY_NAME_MAX,
  SCHEDULING_CHAIN_NAME,
  type AdmissionCheck,
  type ChainSettingsOutput,
  type InstanceType,
  type InstanceTypeOutput,
  type InstanceTypeSpec,
  type Labels,
  type NodeShardOutput,
  type ResourceFlavor,
  type Settings,
  type Topology,
} from '../../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ARCH_LABEL,
  CPU_ONLY_LABEL,
  CPU_UNIT_RESOURCES,
  DEFAULT_LOCAL_STORAGE,
  DERIVED_FROM_NODE_LABEL,
  GENERAL_PREFIX,
  GENERIC_KEY,
  MANAGED_LABEL,
  NODE_DEVICES_CHECK_NAME,
  NODE_DEVICES_CONTROLLER_NAME,
  NOTE_PREFIX,
  OS_LABEL,
  PART_OF_LABEL,
  PART_OF_VALUE,
  QUEUE_ENTRANCE_LABEL,
  RESOURCE_TYPE_LABEL,
  RESOURCE_TYPE_NODES,
  RESOURCE_TYPE_TOPOLOGY,
  TOPOLOGY_PROFILE_LABEL,
  localQueueName,
  nodeShardName,
  topologyName,
  unitResourcesFor,
} from '../../nodefeature/index.js';
import { flavorTolerations } from '../../contracts/index.js';
import { cpuManufacturerOf, type FlavorPlan, type PoolPlan } from './pools.js';

function flavorNotes(flavor: FlavorPlan): Labels {
  const notes: Record<string, string | undefined> = {
    acceleratable: String(flavor.manufacturer !== undefined),
    manufacturer: flavor.manufacturer ?? cpuManufacturerOf(flavor),
    product: flavor.device?.product ?? flavor.cpuName,
    memory: flavor.device?.memory,
    cores: flavor.device?.cores,
    family: flavor.device?.family,
  };
  const out: Labels = {};
  for (const [note, value] of Object.entries(notes)) {
    // "note.gpustack.ai/product=NVIDIA-H100-80GB-HBM3"
    if (value) out[`${NOTE_PREFIX}${note}`] = value;
  }
  return out;
}

/** One ResourceFlavor: labels describe the pool, `nodeLabels` pin exactly its nodes (docs/architecture.md#kueue-objects). */
export function buildResourceFlavor(flavor: FlavorPlan, settings: Settings): ResourceFlavor {
  const acceleratable = flavor.manufacturer !== undefined;
  const count = String(flavor.count);
  const nodeLabels: Labels = {
    [MANAGED_LABEL]: 'true',
    [OS_LABEL]: flavor.os,
    [ARCH_LABEL]: flavor.arch,
    [flavor.keyLabel]: 'true',
    [`${flavor.keyLabel}.count`]: count,
  };
  // CPU flavors must not land on accelerated nodes when those feed no CPU pool.
  if (!acceleratable && !settings.mixedOnNode) nodeLabels[CPU_ONLY_LABEL] = 'true';
  // The profile keeps apart the flavors of one kind of Node under two Topologies: Kueue's TAS
  // counts the Nodes a flavor's nodeLabels select.
  const profile = flavor.topology?.profile;
  if (profile !== undefined) nodeLabels[TOPOLOGY_PROFILE_LABEL] = profile;
  const tolerations = flavorTolerations(settings, flavor.manufacturer);
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'ResourceFlavor',
    metadata: {
      name: flavor.name,
      labels: {
        [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_NODES,
        [OS_LABEL]: flavor.os,
        [ARCH_LABEL]: flavor.arch,
        [ACCELERATABLE_LABEL]: String(acceleratable),
        [flavor.keyLabel]: 'true',
        [`${flavor.keyLabel}.count`]: count,
        // "<keyLabel>.capacity" = nodes × per-node count
        [`${flavor.keyLabel}.capacity`]: String(flavor.nodes * flavor.count),
        ...(profile !== undefined ? { [TOPOLOGY_PROFILE_LABEL]: profile } : {}),
      },
      annotations: flavorNotes(flavor),
    },
    spec: {
      nodeLabels,
      ...(tolerations.length > 0 ? { tolerations } : {}),
      ...(profile !== undefined ? { topologyName: topologyName(profile) } : {}),
    },
  };
}

/** The Kueue Topology of a profile: its levels, coarse to fine, `kubernetes.io/hostname` last. */
export function buildTopology(profile: string, levels: readonly string[]): Topology {
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'Topology',
    metadata: {
      name: topologyName(profile),
      labels: {
        [PART_OF_LABEL]: PART_OF_VALUE,
        [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_TOPOLOGY,
        [TOPOLOGY_PROFILE_LABEL]: profile,
      },
    },
    spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
  };
}

/** The fields an admin may edit on a derived InstanceType; the chain never overwrites them. */
type AdminFields = Pick<InstanceTypeSpec, 'displayName' | 'description' | 'inactive'>;

function adminFieldsOf(observed: InstanceType | undefined): AdminFields {
  const spec = observed?.spec;
  if (!spec) return {};
  return {
    ...(spec.displayName !== undefined ? { displayName: spec.displayName } : {}),
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(spec.inactive !== undefined ? { inactive: spec.inactive } : {}),
  };
}

function instanceTypeLabels(name: string, spec: InstanceTypeSpec): Labels {
  // A sticky type re-emitted from an observed child may lack acceleratorGroup: write no key label then.
  const keyLabel = !spec.acceleratable
    ? `${GENERAL_PREFIX}${spec.generalGroup}`
    : spec.acceleratorGroup
      ? `${ACCELERATABLE_PREFIX}${spec.acceleratorGroup}`
      : undefined;
  return {
    [DERIVED_FROM_NODE_LABEL]: 'true',
    [QUEUE_ENTRANCE_LABEL]: localQueueName(name),
    [OS_LABEL]: spec.os,
    [ARCH_LABEL]: spec.arch,
    [ACCELERATABLE_LABEL]: String(spec.acceleratable),
    ...(keyLabel !== undefined ? { [keyLabel]: 'true' } : {}),
  };
}

function derivedSpec(pool: PoolPlan): InstanceTypeSpec {
  const first = pool.flavors[0];
  if (pool.manufacturer !== undefined) {
    const product = first?.device?.product ?? pool.key;
    return {
      displayName: product.slice(0, DISPLAY_NAME_MAX),
      acceleratable: true,
      acceleratorGroup: pool.key,
      generalGroup: GENERIC_KEY,
      os: pool.os,
      arch: pool.arch,
      unitResources: { ...unitResourcesFor(pool.manufacturer, product) },
      localStorage: DEFAULT_LOCAL_STORAGE,
    };
  }
  const displayName = pool.key === GENERIC_KEY ? 'CPU-only' : (first?.cpuName ?? pool.key);
  return {
    displayName: displayName.slice(0, DISPLAY_NAME_MAX),
    acceleratable: false,
    generalGroup: pool.key,
    os: pool.os,
    arch: pool.arch,
    unitResources: { ...CPU_UNIT_RESOURCES },
    localStorage: DEFAULT_LOCAL_STORAGE,
  };
}

/** An InstanceType as the chain emits it: our spec, with the admin-editable fields of the observed one. */
export function buildInstanceType(
  name: string,
  spec: InstanceTypeSpec,
  observed: InstanceType | undefined,
): InstanceTypeOutput {
  const merged: InstanceTypeSpec = { ...spec, ...adminFieldsOf(observed) };
  return {
    apiVersion: GPUSTACK_API_VERSION,
    kind: 'InstanceType',
    metadata: { name, labels: instanceTypeLabels(name, merged) },
    spec: merged,
  };
}

/** The derived InstanceType of a live pool. */
export function buildDerivedInstanceType(pool: PoolPlan, observed: InstanceType | undefined): InstanceTypeOutput {
  return buildInstanceType(pool.name, derivedSpec(pool), observed);
}

/** A pool seen before but without nodes now keeps its InstanceType as it was observed (sticky). */
export function buildStickyInstanceType(observed: InstanceType): InstanceTypeOutput {
  const { displayName: _d, description: _s, inactive: _i, ...identity } = observed.spec;
  const spec: InstanceTypeSpec = {
    acceleratable: identity.acceleratable,
    ...(identity.acceleratorGroup !== undefined ? { acceleratorGroup: identity.acceleratorGroup } : {}),
    generalGroup: identity.generalGroup,
    os: identity.os,
    arch: identity.arch,
    ...(identity.unitResources !== undefined ? { unitResources: identity.unitResources } : {}),
    ...(identity.localStorage !== undefined ? { localStorage: identity.localStorage } : {}),
  };
  return buildInstanceType(observed.metadata.name, spec, observed);
}

/** The per-card AdmissionCheck; the node-devices-check decorator marks it Active. */
export function buildAdmissionCheck(): AdmissionCheck {
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'AdmissionCheck',
    metadata: { name: NODE_DEVICES_CHECK_NAME, labels: { [PART_OF_LABEL]: PART_OF_VALUE } },
    spec: { controllerName: NODE_DEVICES_CONTROLLER_NAME },
  };
}

/**
 * The ChainSettings `default`: the resolved settings, for node-profile to relate. It changes only
 * when the settings do, so a status write of the chain re-syncs no Node.
 */
export function buildChainSettings(settings: Settings): ChainSettingsOutput {
  return {
    apiVersion: GPUSTACK_API_VERSION,
    kind: 'ChainSettings',
    metadata: { name: SCHEDULING_CHAIN_NAME, labels: { [PART_OF_LABEL]: PART_OF_VALUE } },
    spec: settings,
  };
}

/** The NodeShard of shard `index`: the node-shard controller writes its summary into its status. */
export function buildNodeShard(index: number): NodeShardOutput {
  return {
    apiVersion: GPUSTACK_API_VERSION,
    kind: 'NodeShard',
    metadata: { name: nodeShardName(index), labels: { [PART_OF_LABEL]: PART_OF_VALUE } },
    spec: { index },
  };
}
