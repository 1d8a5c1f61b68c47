/**
 * @module From managed Nodes to pools: every node contributes one CPU flavor (unless
 * `mixedOnNode: false` and it has accelerators) and one device flavor per aKey; nodes pool into a
 * flavor only with the same key, os, arch and count (docs/architecture.md#object-names).
 */
import type { KubeObject, ManufacturerName, NodeProfile, NodeShard, Settings } from '../../k8s/index.js';
import {
  ACCELERATABLE_PREFIX,
  GENERAL_PREFIX,
  GENERIC_KEY,
  MANAGED_LABEL,
  clusterQueueName,
  cpuFlavorName,
  deviceFlavorName,
  extractNodeFacts,
  generalKeyManufacturer,
  readTopology,
  type AcceleratorFacts,
  type NodeFacts,
  type NodeLabelsInput,
  type NodeProblemReason,
} from '../../nodefeature/index.js';

export interface FlavorPlan {
  readonly name: string;
  readonly pool: string;
  /** The gKey or aKey; `keyLabel` is its full label. */
  readonly key: string;
  readonly keyLabel: string;
  readonly os: string;
  readonly arch: string;
  /** Cores per node (CPU flavor) or cards per node (device flavor). */
  readonly count: number;
  readonly manufacturer?: ManufacturerName;
  /** Nodes contributing. */
  nodes: number;
  /** The contributing members (`NodeMember.view.name`): a pool counts a member's Nodes once. */
  readonly members: string[];
  /** Facts of the first contributing node (by name): every contributor shares the identity. */
  readonly device?: AcceleratorFacts;
  readonly cpuName?: string;
  /** The topology profile of its Nodes and its levels (docs/architecture.md#topology); none while topology is off. */
  readonly topology?: FlavorTopology;
}

export interface FlavorTopology {
  readonly profile: string;
  readonly levels: readonly string[];
}

/** A flavor's name: the pre-topology name, qualified by the profile when its Nodes have one. */
function qualified(name: string, topology: FlavorTopology | undefined): string {
  return topology === undefined ? name : `${name}-${topology.profile}`;
}

export interface PoolPlan {
  readonly name: string;
  readonly key: string;
  readonly os: string;
  readonly arch: string;
  readonly acceleratable: boolean;
  readonly manufacturer?: ManufacturerName;
  readonly flavors: FlavorPlan[];
  /** Nodes in any of its flavors, each once. */
  nodes: number;
}

export interface SkippedNode {
  readonly name: string;
  readonly reason: NodeProblemReason;
  readonly message: string;
}

/**
 * Managed Nodes that read the same, as the chain plans them: one Node (a NodeProfile, a Node read
 * whole) or a group of a NodeShard's summary. Facts and problems depend on the view only, so the
 * plan of a member equals that of its Nodes one by one (test/render/shards.test.ts).
 */
export interface NodeMember {
  /** What the chain reads of each of its Nodes; `name` is the first of them by name. */
  readonly view: NodeLabelsInput;
  readonly nodes: number;
  /** Its Nodes' names in order, the first `MAX_GROUP_NAMES` at least where the chain may name them. */
  readonly names: readonly string[];
}

export interface ChainPlan {
  readonly managedNodes: number;
  readonly flavors: FlavorPlan[];
  readonly pools: PoolPlan[];
  /**
   * Nodes left out of a pool, by name: every entry of the first `MAX_GROUP_NAMES` names of each
   * member (so the first `MAX_SKIPPED_IN_STATUS` entries are those of the Nodes one by one).
   */
  readonly skipped: SkippedNode[];
  /** Distinct Nodes with an entry in `skipped`, all of them counted. */
  readonly skippedNodes: number;
  /** Labels that could not be read on pooled nodes (same shape as a skipped node, listed as `skipped`). */
  readonly warnings: SkippedNode[];
}

type FlavorIdentity = Omit<FlavorPlan, 'nodes' | 'members'>;

function addToFlavor(flavors: Map<string, FlavorPlan>, plan: FlavorIdentity, member: NodeMember): void {
  const existing = flavors.get(plan.name);
  if (existing) {
    existing.nodes += member.nodes;
    existing.members.push(member.view.name);
  } else flavors.set(plan.name, { ...plan, nodes: member.nodes, members: [member.view.name] });
}

function contributeCpu(
  facts: NodeFacts,
  flavors: Map<string, FlavorPlan>,
  member: NodeMember,
  topology: FlavorTopology | undefined,
): void {
  const { general, os, arch } = facts;
  if (!general || !os || !arch) return;
  addToFlavor(
    flavors,
    {
      name: qualified(cpuFlavorName(general.key, os, arch, general.cores), topology),
      pool: clusterQueueName(general.key, os, arch),
      key: general.key,
      keyLabel: `${GENERAL_PREFIX}${general.key}`,
      os,
      arch,
      count: general.cores,
      ...(general.key !== GENERIC_KEY && general.cpuName ? { cpuName: general.cpuName } : {}),
      ...(topology !== undefined ? { topology } : {}),
    },
    member,
  );
}

function contributeDevices(
  facts: NodeFacts,
  flavors: Map<string, FlavorPlan>,
  member: NodeMember,
  topology: FlavorTopology | undefined,
): void {
  const { os, arch } = facts;
  if (!os || !arch) return;
  for (const device of facts.accelerators) {
    addToFlavor(
      flavors,
      {
        name: qualified(deviceFlavorName(device.key, os, arch, device.count), topology),
        pool: clusterQueueName(device.key, os, arch),
        key: device.key,
        keyLabel: `${ACCELERATABLE_PREFIX}${device.key}`,
        os,
        arch,
        count: device.count,
        manufacturer: device.manufacturer,
        device,
        ...(topology !== undefined ? { topology } : {}),
      },
      member,
    );
  }
}

function groupPools(flavors: readonly FlavorPlan[], sizes: ReadonlyMap<string, number>): PoolPlan[] {
  const pools = new Map<string, PoolPlan>();
  const poolMembers = new Map<string, Set<string>>();
  for (const flavor of flavors) {
    const pool = pools.get(flavor.pool) ?? {
      name: flavor.pool,
      key: flavor.key,
      os: flavor.os,
      arch: flavor.arch,
      acceleratable: flavor.manufacturer !== undefined,
      ...(flavor.manufacturer ? { manufacturer: flavor.manufacturer } : {}),
      flavors: [],
      nodes: 0,
    };
    pool.flavors.push(flavor);
    pools.set(flavor.pool, pool);
    const members = poolMembers.get(flavor.pool) ?? new Set<string>();
    for (const member of flavor.members) {
      if (members.has(member)) continue;
      members.add(member);
      pool.nodes += sizes.get(member) ?? 0;
    }
    poolMembers.set(flavor.pool, members);
  }
  for (const pool of pools.values()) pool.flavors.sort((a, b) => a.count - b.count || (a.name < b.name ? -1 : 1));
  return [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Entries for each of `names`, in name order then problem order (a stable sort keeps the latter). */
function byName(entries: SkippedNode[]): SkippedNode[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** One Node as a member of its own. */
export function singleMember(view: NodeLabelsInput): NodeMember {
  return { view, nodes: 1, names: [view.name] };
}

/**
 * Plans every flavor and pool from the managed Nodes as the chain reads them (NodeShard groups,
 * NodeProfiles, or Nodes without one). Members are visited by their first name, so the plan — and
 * the identity each flavor takes from its first node — does not depend on request order.
 */
export function planChain(
  members: readonly NodeMember[],
  settings: Settings,
  enabled: ReadonlySet<ManufacturerName>,
): ChainPlan {
  const flavors = new Map<string, FlavorPlan>();
  const skipped: SkippedNode[] = [];
  const warnings: SkippedNode[] = [];
  const sizes = new Map<string, number>();
  let managedNodes = 0;
  let skippedNodes = 0;
  const sorted = [...members].sort((a, b) => (a.view.name < b.view.name ? -1 : 1));
  for (const member of sorted) {
    if (member.view.labels?.[MANAGED_LABEL] !== 'true') continue;
    managedNodes += member.nodes;
    sizes.set(member.view.name, member.nodes);
    const facts = extractNodeFacts(member.view, enabled);
    const wantsCpu = settings.mixedOnNode || !facts.acceleratable;
    const reading = readTopology(member.view);
    const topology = reading.kind === 'profile' ? { profile: reading.profile, levels: reading.levels } : undefined;
    const problems = [
      ...facts.problems,
      ...(wantsCpu && facts.generalProblem && facts.os ? [facts.generalProblem] : []),
      ...(reading.kind === 'unreadable' ? [{ reason: 'UnreadableTopology' as const, message: reading.message }] : []),
    ];
    if (problems.length > 0) skippedNodes += member.nodes;
    for (const name of member.names) {
      for (const problem of problems) skipped.push({ name, ...problem });
      for (const warning of facts.warnings) warnings.push({ name, ...warning });
    }
    // A Node whose profile cannot be read joins no flavor: pooled without its Topology, its
    // flavor's selector would also match the Nodes of a topology-qualified one.
    if (reading.kind === 'unreadable') continue;
    if (wantsCpu) contributeCpu(facts, flavors, member, topology);
    contributeDevices(facts, flavors, member, topology);
  }
  const flavorList = [...flavors.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    managedNodes,
    flavors: flavorList,
    pools: groupPools(flavorList, sizes),
    skipped: byName(skipped),
    skippedNodes,
    warnings: byName(warnings),
  };
}

/** `status.capacity.cpu` of a related Node as received (only its metadata is schema-checked). */
function cpuCapacityOf(node: KubeObject): string | number | undefined {
  const status: unknown = node['status'];
  if (typeof status !== 'object' || status === null || !('capacity' in status)) return undefined;
  const capacity: unknown = status.capacity;
  if (typeof capacity !== 'object' || capacity === null || !('cpu' in capacity)) return undefined;
  const cpu: unknown = capacity.cpu;
  return typeof cpu === 'string' || typeof cpu === 'number' ? cpu : undefined;
}

/**
 * The managed Nodes as the chain reads them: every NodeProfile, and every related Node that has
 * none yet (node-profile has not reached it, or the cluster runs a release without profiles),
 * read whole. A profile wins over its Node: it already holds node-profile's labels.
 */
export function extractNodeViews(profiles: readonly NodeProfile[], nodes: readonly KubeObject[]): NodeMember[] {
  const views = new Map<string, NodeLabelsInput>();
  for (const { metadata, spec } of profiles) {
    views.set(metadata.name, {
      name: metadata.name,
      labels: spec.labels,
      annotations: spec.annotations,
      cpuCapacity: spec.cpuCapacity,
    });
  }
  for (const node of nodes) {
    if (views.has(node.metadata.name)) continue;
    views.set(node.metadata.name, {
      name: node.metadata.name,
      labels: node.metadata.labels,
      annotations: node.metadata.annotations,
      cpuCapacity: cpuCapacityOf(node),
    });
  }
  return [...views.values()].map(singleMember);
}

/**
 * The groups of the NodeShards' summaries as members. A NodeShard without a status yet (its
 * controller has not synced it) adds none.
 */
export function extractShardMembers(shards: readonly NodeShard[]): NodeMember[] {
  return shards.flatMap((shard) =>
    (shard.status?.groups ?? []).map((group) => ({
      view: {
        name: group.first,
        labels: group.labels,
        ...(group.annotations !== undefined ? { annotations: group.annotations } : {}),
        ...(group.cpuCapacity !== undefined ? { cpuCapacity: group.cpuCapacity } : {}),
      },
      nodes: group.nodes,
      names: group.names ?? [group.first],
    })),
  );
}

/** The CPU manufacturer note of a CPU flavor (`amd` for `amd-epyc-7763`); none for `generic`. */
export function cpuManufacturerOf(flavor: FlavorPlan): string | undefined {
  return flavor.key === GENERIC_KEY ? undefined : generalKeyManufacturer(flavor.key);
}
