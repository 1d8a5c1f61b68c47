/**
 * @module The `gpustack-node-devices` decision (docs/architecture.md#admission-check). Kueue's quota is a sum over nodes:
 * 8 free cards as 4 + 4 on two nodes pass quota but never schedule a pod asking for 8. This
 * places every pod of every PodSet on the assigned flavor's nodes, card by card, before the
 * Workload is let through. Pure: the caller lists the objects and stamps `lastTransitionTime`.
 */
import type { DeviceLedger } from '../dra/index.js';
import type { ManufacturerName, Node } from '../k8s/index.js';
import { ClaimPlacement, placeClaimDemand } from './claims.js';
import { indexNodeDevices, type NodeDevicesIndex } from './pass-index.js';
import { ResourcePlacement, type Pool, type PoolNode } from './pool.js';
import {
  NODE_DEVICES_REQUEUE_SECONDS,
  type NodeDevicesVerdict,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from './schema.js';
import { describeDomain, expandTopologyAssignment, splitPoolByDomain, type TopologyAssignment } from './topology.js';
import { awaitsVerdict, podSetDemand, type ClaimDemand, type PodSetDemand, type TemplateLookup } from './workload.js';

/** The DRA side of a decision: the ledger of the pass and the ResourceClaimTemplates by namespace and name. */
export interface ClaimsInput {
  /** Read only when a PodSet uses claims, so a getter may build it on first use. */
  readonly ledger: DeviceLedger;
  readonly templates: TemplateLookup;
}

export interface NodeDevicesInput {
  readonly workload: Workload;
  /** ResourceFlavors by name. */
  readonly flavors: Readonly<Record<string, ReceivedResourceFlavor>>;
  readonly nodes: readonly Node[];
  /** Pods of the cluster (or of the flavors' nodes); unbound and terminated ones are ignored. */
  readonly pods: readonly Pod[];
  /** The device resource a manufacturer's cards are requested by, e.g. nvidia → `nvidia.com/gpu`. */
  readonly deviceResourceOf: (mfr: ManufacturerName) => string;
  /** Our entry in `status.admissionChecks`, normally `gpustack-node-devices`. */
  readonly checkName: string;
  /**
   * Card usage and pools shared by the decisions of one pass, built by `indexNodeDevices` from
   * these `nodes` and `pods`; the verdict is the same without it, only slower when many
   * Workloads are decided against the same objects.
   */
  readonly index?: NodeDevicesIndex;
  /**
   * For PodSets whose pods use claims: free cards come from this ledger, not from Pod requests.
   * Without it such a PodSet is answered `Retry` (the checker cannot see the cards it asks for).
   */
  readonly claims?: ClaimsInput;
}

const READY_MESSAGE = 'the assigned flavor pool has enough free cards to place every pod';
const NO_DEMAND_MESSAGE = 'no pod set asks for whole accelerator cards; nothing to place';
const CLAIMS_READY_MESSAGE =
  'the assigned flavor pool has enough free cards (ResourceSlices minus ResourceClaims) to place every pod';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Best fit: the node with the fewest free cards that still holds `cards`; ties by name (nodes are sorted). */
function bestFit(pool: Pool, resources: ResourcePlacement, resource: string, cards: number): PoolNode | undefined {
  let best: PoolNode | undefined;
  let bestFree = Infinity;
  for (const node of pool.nodes) {
    const free = resources.free(resource, node, pool.aKey);
    if (free >= cards && free < bestFree) {
      best = node;
      bestFree = free;
    }
  }
  return best;
}

/** The largest free block left (first by name among equals), or why the pool has no node. */
function largestBlock(demand: PodSetDemand, pool: Pool, resources: ResourcePlacement): string {
  let largest: { node: string; free: number } | undefined;
  for (const node of pool.nodes) {
    const free = resources.free(demand.resource, node, pool.aKey);
    if (largest === undefined || free > largest.free) largest = { node: node.name, free };
  }
  if (largest !== undefined) return `the largest free block is ${plural(largest.free, 'card')} (node ${largest.node})`;
  return pool.excluded > 0 ? 'no node of the flavor is open to its pods' : "no node carries the flavor's node labels";
}

/** Why a PodSet did not fit: the largest free block, and how many of the flavor's nodes it may not use. */
function noFitMessage(demand: PodSetDemand, pool: Pool, resources: ResourcePlacement): string {
  const asked =
    `podset "${demand.podSet}": ${plural(demand.pods, 'pod')} × ` +
    `${plural(demand.cards, 'card')} do not fit in flavor ${pool.flavor}`;
  const excluded = pool.excluded > 0 ? `; ${plural(pool.excluded, 'node')} cordoned or tainted not counted` : '';
  return `${asked}; ${largestBlock(demand, pool, resources)}${excluded}; will retry as capacity frees`;
}

/** Places every pod of one PodSet, recording each as placed; the failure message if one does not fit. */
function placePodSet(demand: PodSetDemand, pool: Pool, resources: ResourcePlacement): string | undefined {
  for (let pod = 0; pod < demand.pods; pod++) {
    const node = bestFit(pool, resources, demand.resource, demand.cards);
    if (node === undefined) return noFitMessage(demand, pool, resources);
    resources.place(demand.resource, node.name, demand.cards);
  }
  return undefined;
}

function retry(checkName: string, message: string): NodeDevicesVerdict {
  return { name: checkName, state: 'Retry', message, requeueAfterSeconds: NODE_DEVICES_REQUEUE_SECONDS };
}

/** Places one PodSet's demand on its flavor's pool; the Retry message when it cannot. */
function checkDemand(
  demand: PodSetDemand,
  input: NodeDevicesInput,
  index: NodeDevicesIndex,
  resources: ResourcePlacement,
  topology: TopologyAssignment | null | undefined,
): string | undefined {
  // hasOwn: a flavor named like an Object.prototype member must read as unknown, not as a function.
  const flavor = flavorOf(input, demand.flavor);
  if (flavor === undefined) {
    return (
      `podset "${demand.podSet}": the assigned ResourceFlavor "${demand.flavor}" ` +
      `is not known to the checker; will retry once it is observed`
    );
  }
  const resolution = index.pool(flavor, demand.mfr, demand.tolerations);
  if (!resolution.ok) return `podset "${demand.podSet}": ${resolution.message}`;
  if (topology) {
    return placeInDomains(demand.podSet, demand.pods, resolution.pool, topology, index, (pool, pods) =>
      placePodSet({ ...demand, pods }, pool, resources) === undefined
        ? undefined
        : `${plural(pods, 'pod')} × ${plural(demand.cards, 'card')} do not fit there; free cards per node: ` +
          freePerNode(pool, resources, demand.resource),
    );
  }
  return placePodSet(demand, resolution.pool, resources);
}

/** `gpu-a 8, gpu-b 0` for the first nodes of a domain; how many more, past that. */
function freePerNode(pool: Pool, resources: ResourcePlacement, resource: string): string {
  const shown = pool.nodes
    .slice(0, MAX_NODES_IN_MESSAGE)
    .map((node) => `${node.name} ${resources.free(resource, node, pool.aKey)}`);
  const more = pool.nodes.length - shown.length;
  if (shown.length === 0) return 'no node of the flavor is in the domain';
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

const MAX_NODES_IN_MESSAGE = 16;

/**
 * Places a PodSet domain by domain as Kueue's TAS assigned it (docs/architecture.md#topology-check):
 * each domain's pods only on the pool's nodes inside that domain. TAS counted Node allocatable —
 * a device-plugin node's allocatable, or nothing at all for DRA cards — so a domain it chose can
 * still lack the cards: the message names the domain. Pods the assignment does not cover (it
 * should cover all) are placed anywhere in the pool.
 */
function placeInDomains(
  podSet: string,
  pods: number,
  pool: Pool,
  topology: TopologyAssignment,
  index: NodeDevicesIndex,
  place: (pool: Pool, pods: number) => string | undefined,
): string | undefined {
  const expanded = expandTopologyAssignment(topology);
  if (!expanded.ok) return `podset "${podSet}": ${expanded.message}; will retry`;
  const inDomain = splitPoolByDomain(pool, expanded.levels, (name) => index.node(name));
  let placed = 0;
  for (const domain of expanded.domains) {
    const inside = inDomain(domain);
    const problem = place(inside, domain.pods);
    if (problem !== undefined) {
      return (
        `podset "${podSet}": topology domain ${describeDomain(expanded.levels, domain)} of flavor ${pool.flavor}: ` +
        `${problem}; will retry as capacity frees`
      );
    }
    placed += domain.pods;
  }
  if (placed < pods) return place(pool, pods - placed);
  return undefined;
}

function flavorOf(input: NodeDevicesInput, name: string) {
  // hasOwn: a flavor named like an Object.prototype member must read as unknown, not as a function.
  return Object.hasOwn(input.flavors, name) ? input.flavors[name] : undefined;
}

/** Places one PodSet's claim demand on the first of its flavors whose nodes carry the manufacturer's cards. */
function checkClaims(
  demand: ClaimDemand,
  input: NodeDevicesInput,
  index: NodeDevicesIndex,
  placement: ClaimPlacement,
  topology: TopologyAssignment | null | undefined,
): string | undefined {
  let problem: string | undefined;
  for (const name of demand.flavors) {
    const flavor = flavorOf(input, name);
    if (flavor === undefined) {
      problem ??= `podset "${demand.podSet}": the assigned ResourceFlavor "${name}" is not known to the checker; will retry once it is observed`;
      continue;
    }
    const resolution = index.pool(flavor, demand.mfr, demand.tolerations);
    if (!resolution.ok) {
      problem ??= `podset "${demand.podSet}": ${resolution.message}`;
      continue;
    }
    if (topology) {
      return placeInDomains(demand.podSet, demand.pods, resolution.pool, topology, index, (pool, pods) => {
        const problem = placeClaimDemand({ ...demand, pods }, pool, placement);
        // The domain's own wording: the PodSet and the retry are said once, around it.
        return problem?.replace(`podset "${demand.podSet}": `, '').replace(/; will retry as capacity frees$/, '');
      });
    }
    return placeClaimDemand(demand, resolution.pool, placement);
  }
  return (
    problem ?? `podset "${demand.podSet}" uses claims on ${demand.mfr} cards but has no flavor assigned; will retry`
  );
}

/**
 * Cards of model `aKey` on `node` that ResourceClaims hold, whole or by at least one share.
 * Counted once per ledger, by model and node: a pass builds one ledger and never changes it, and every
 * decision of the pass asks for every node of its pool (bestFit), so counting afresh per decision
 * cost O(awaiting Workloads × pool nodes × cards): 592 → 250 ms a pass at 5,000 nodes and 100 awaiting
 * (bench/RESULTS.md, issue 44). Weak: the counts go with the pass's ledger.
 */
const claimedByLedger = new WeakMap<DeviceLedger, Map<string, Map<string, number>>>();

function claimedCards(ledger: DeviceLedger, node: string, aKey: string): number {
  let byModel = claimedByLedger.get(ledger);
  if (byModel === undefined) claimedByLedger.set(ledger, (byModel = new Map()));
  let counts = byModel.get(aKey);
  if (counts === undefined) byModel.set(aKey, (counts = new Map()));
  const known = counts.get(node);
  if (known !== undefined) return known;
  let count = 0;
  for (const card of ledger.cards(node)) {
    if (card.productKey !== aKey) continue;
    const use = ledger.use(card);
    if (use.wholeAllocated || use.shares > 0) count++;
  }
  counts.set(node, count);
  return count;
}

/**
 * The verdict of our admission check for one Workload, or `undefined` to leave it alone (no quota
 * reservation, evicted, finished, deactivated, already admitted, or our check not listed).
 * `Ready` when every pod of every PodSet finds a node with enough free cards (greedy, PodSets in
 * order), counting only nodes the scheduler would use for those pods (not cordoned, every
 * NoSchedule/NoExecute taint tolerated by the template's or the flavor's tolerations); otherwise
 * `Retry` after 30 s, never `Rejected`: capacity frees up on its own.
 * @example decideNodeDevices({ workload, flavors, nodes, pods, deviceResourceOf, checkName: 'gpustack-node-devices' })
 * // { name: 'gpustack-node-devices', state: 'Retry', requeueAfterSeconds: 30,
 * //   message: 'podset "workers": 2 pods × 8 cards do not fit in flavor …-8d;
 * //     the largest free block is 4 cards (node gpu-b); will retry as capacity frees' }
 */
export function decideNodeDevices(input: NodeDevicesInput): NodeDevicesVerdict | undefined {
  const { workload, checkName } = input;
  if (!awaitsVerdict(workload, checkName)) return undefined;
  const assignments = workload.status?.admission?.podSetAssignments ?? [];
  const index = input.index ?? indexNodeDevices(input.nodes, input.pods);
  const claims = input.claims;
  const resources = new ResourcePlacement(
    (resource) => index.taken(resource),
    claims === undefined ? undefined : (node, aKey) => claimedCards(claims.ledger, node, aKey),
  );
  // Created on the first claim demand: a pass whose Workloads use no claims never builds the ledger.
  let placement: ClaimPlacement | undefined;
  const templates =
    claims === undefined ? undefined : { namespace: workload.metadata.namespace ?? '', lookup: claims.templates };
  let placed = 0;
  let placedClaims = 0;
  for (const podSet of workload.spec.podSets) {
    const assignment = assignments.find((a) => a.name === podSet.name);
    const topology = assignment?.topologyAssignment;
    const resolution = podSetDemand(podSet, assignment, input.deviceResourceOf, templates);
    if (!resolution.ok) return retry(checkName, resolution.message);
    if (resolution.claims !== undefined && claims !== undefined) {
      placement ??= new ClaimPlacement(claims.ledger);
      const problem = checkClaims(resolution.claims, input, index, placement, topology);
      if (problem !== undefined) return retry(checkName, problem);
      placedClaims++;
    }
    if (resolution.demand === undefined) continue;
    const problem = checkDemand(resolution.demand, input, index, resources, topology);
    if (problem !== undefined) return retry(checkName, problem);
    placed++;
  }
  const message = placedClaims > 0 ? CLAIMS_READY_MESSAGE : placed > 0 ? READY_MESSAGE : NO_DEMAND_MESSAGE;
  return { name: checkName, state: 'Ready', message };
}
