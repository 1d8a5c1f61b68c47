/**
 * @module From managed Nodes to pools: every node contributes one CPU flavor (unless
 * `mixedOnNode: false` and it has accelerators) and one device flavor per aKey; nodes pool into a
 * flavor only with the same key, os, arch and count (docs/architecture.md#object-names).
 */
import type { KubeObject, ManufacturerName, NodeProfile, Settings } from '../../k8s/index.js';
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
  readonly nodes: string[];
  /** Facts of the first contributing node (by name): every contributor shares the identity. */
  readonly device?: AcceleratorFacts;
  readonly cpuName?: string;
}

export interface PoolPlan {
  readonly name: string;
  readonly key: string;
  readonly os: string;
  readonly arch: string;
  readonly acceleratable: boolean;
  readonly manufacturer?: ManufacturerName;
  readonly flavors: FlavorPlan[];
}

export interface SkippedNode {
  readonly name: string;
  readonly reason: NodeProblemReason;
  readonly message: string;
}

export interface ChainPlan {
  readonly managedNodes: number;
  readonly flavors: FlavorPlan[];
  readonly pools: PoolPlan[];
  readonly skipped: SkippedNode[];
  /** Labels that could not be read on pooled nodes (same shape as a skipped node). */
  readonly warnings: SkippedNode[];
}

function addToFlavor(flavors: Map<string, FlavorPlan>, plan: Omit<FlavorPlan, 'nodes'>, node: string): void {
  const existing = flavors.get(plan.name);
  if (existing) existing.nodes.push(node);
  else flavors.set(plan.name, { ...plan, nodes: [node] });
}

function contributeCpu(facts: NodeFacts, flavors: Map<string, FlavorPlan>): void {
  const { general, os, arch } = facts;
  if (!general || !os || !arch) return;
  addToFlavor(
    flavors,
    {
      name: cpuFlavorName(general.key, os, arch, general.cores),
      pool: clusterQueueName(general.key, os, arch),
      key: general.key,
      keyLabel: `${GENERAL_PREFIX}${general.key}`,
      os,
      arch,
      count: general.cores,
      ...(general.key !== GENERIC_KEY && general.cpuName ? { cpuName: general.cpuName } : {}),
    },
    facts.name,
  );
}

function contributeDevices(facts: NodeFacts, flavors: Map<string, FlavorPlan>): void {
  const { os, arch } = facts;
  if (!os || !arch) return;
  for (const device of facts.accelerators) {
    addToFlavor(
      flavors,
      {
        name: deviceFlavorName(device.key, os, arch, device.count),
        pool: clusterQueueName(device.key, os, arch),
        key: device.key,
        keyLabel: `${ACCELERATABLE_PREFIX}${device.key}`,
        os,
        arch,
        count: device.count,
        manufacturer: device.manufacturer,
        device,
      },
      facts.name,
    );
  }
}

function groupPools(flavors: readonly FlavorPlan[]): PoolPlan[] {
  const pools = new Map<string, PoolPlan>();
  for (const flavor of flavors) {
    const pool = pools.get(flavor.pool) ?? {
      name: flavor.pool,
      key: flavor.key,
      os: flavor.os,
      arch: flavor.arch,
      acceleratable: flavor.manufacturer !== undefined,
      ...(flavor.manufacturer ? { manufacturer: flavor.manufacturer } : {}),
      flavors: [],
    };
    pool.flavors.push(flavor);
    pools.set(flavor.pool, pool);
  }
  for (const pool of pools.values()) pool.flavors.sort((a, b) => a.count - b.count || (a.name < b.name ? -1 : 1));
  return [...pools.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * Plans every flavor and pool from the managed Nodes as the chain reads them (NodeProfiles, or
 * Nodes without one). Nodes are visited by name, so the plan — and the identity each flavor takes
 * from its first node — does not depend on request order.
 */
export function planChain(
  nodes: readonly NodeLabelsInput[],
  settings: Settings,
  enabled: ReadonlySet<ManufacturerName>,
): ChainPlan {
  const flavors = new Map<string, FlavorPlan>();
  const skipped: SkippedNode[] = [];
  const warnings: SkippedNode[] = [];
  let managedNodes = 0;
  const sorted = [...nodes].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const node of sorted) {
    if (node.labels?.[MANAGED_LABEL] !== 'true') continue;
    managedNodes++;
    const facts = extractNodeFacts(node, enabled);
    const wantsCpu = settings.mixedOnNode || !facts.acceleratable;
    for (const problem of facts.problems) skipped.push({ name: facts.name, ...problem });
    for (const warning of facts.warnings) warnings.push({ name: facts.name, ...warning });
    if (wantsCpu && facts.generalProblem && facts.os) skipped.push({ name: facts.name, ...facts.generalProblem });
    if (wantsCpu) contributeCpu(facts, flavors);
    contributeDevices(facts, flavors);
  }
  const flavorList = [...flavors.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  return { managedNodes, flavors: flavorList, pools: groupPools(flavorList), skipped, warnings };
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
export function extractNodeViews(profiles: readonly NodeProfile[], nodes: readonly KubeObject[]): NodeLabelsInput[] {
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
  return [...views.values()];
}

/** The CPU manufacturer note of a CPU flavor (`amd` for `amd-epyc-7763`); none for `generic`. */
export function cpuManufacturerOf(flavor: FlavorPlan): string | undefined {
  return flavor.key === GENERIC_KEY ? undefined : generalKeyManufacturer(flavor.key);
}
