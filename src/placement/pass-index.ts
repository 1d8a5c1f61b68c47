/**
 * @module What every decision of one pass shares: the cards the Pods hold per node, and each
 * flavor's pool. Both depend on the Nodes and Pods only, not on the Workload, so a checker that
 * decides many Workloads against the same Nodes and Pods builds them once per pass instead of
 * once per Workload (at 50,000 Pods that is most of a pass).
 */
import { servedThroughDra } from '../dra/index.js';
import type { ManufacturerName, Node, ReceivedToleration } from '../k8s/index.js';
import { podCards } from './demand.js';
import { resolvePool, type PoolResolution } from './pool.js';
import type { ReceivedResourceFlavor, Pod } from './schema.js';

function isTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/**
 * Card usage and pools over fixed Nodes and Pods, filled lazily (a resource's usage on first
 * read, a pool on first use) and then reused. Memoisation only: every answer is what computing
 * it afresh from the same Nodes and Pods gives.
 */
export class NodeDevicesIndex {
  private readonly usage = new Map<string, ReadonlyMap<string, number>>();
  private readonly pools = new Map<ReceivedResourceFlavor, Map<string, PoolResolution>>();
  private byName: Map<string, Node> | undefined;

  constructor(
    readonly nodes: readonly Node[],
    readonly pods: readonly Pod[],
  ) {}

  /**
   * Cards of `resource` held per node by the bound, non-terminated Pods through the device plugin:
   * a Pod the scheduler served the resource through DRA holds a ResourceClaim instead, which the
   * ledger counts (docs/architecture.md#device-owner), so it is not counted here a second time.
   */
  taken(resource: string): ReadonlyMap<string, number> {
    const known = this.usage.get(resource);
    if (known !== undefined) return known;
    const taken = new Map<string, number>();
    for (const pod of this.pods) {
      const node = pod.spec.nodeName;
      if (node === undefined || node === '' || isTerminated(pod)) continue;
      // Served through DRA (a plain `nvidia.com/gpu: 1` on a node our driver owns): its claim is in the ledger.
      if (servedThroughDra(pod.status?.extendedResourceClaimStatus?.requestMappings, resource)) continue;
      const cards = podCards(pod.spec, resource);
      if (cards > 0) taken.set(node, (taken.get(node) ?? 0) + cards);
    }
    this.usage.set(resource, taken);
    return taken;
  }

  /** A Node by name (the map built on first use: only topology assignments read it). */
  node(name: string): Node | undefined {
    this.byName ??= new Map(this.nodes.map((node) => [node.metadata.name, node]));
    return this.byName.get(name);
  }

  /** `resolvePool` over the index's Nodes, once per flavor, manufacturer and set of tolerations. */
  pool(
    flavor: ReceivedResourceFlavor,
    mfr: ManufacturerName,
    podTolerations: readonly ReceivedToleration[],
  ): PoolResolution {
    let byFlavor = this.pools.get(flavor);
    if (byFlavor === undefined) this.pools.set(flavor, (byFlavor = new Map()));
    const key = `${mfr}\u0000${JSON.stringify(podTolerations)}`;
    let resolution = byFlavor.get(key);
    if (resolution === undefined)
      byFlavor.set(key, (resolution = resolvePool(flavor, mfr, this.nodes, podTolerations)));
    return resolution;
  }
}

/**
 * The index one pass shares across its decisions; pass it as `index` to `decideNodeDevices`
 * with the same `nodes` and `pods`.
 * @example const index = indexNodeDevices(nodes, pods);
 * workloads.map((workload) => decideNodeDevices({ workload, flavors, nodes, pods, index, deviceResourceOf, checkName }))
 */
export function indexNodeDevices(nodes: readonly Node[], pods: readonly Pod[]): NodeDevicesIndex {
  return new NodeDevicesIndex(nodes, pods);
}
