/**
 * @module The card population of a flavor: the Nodes its `spec.nodeLabels` select and the
 * scheduler would let the pods onto, how many cards of its accelerator key each carries, and how
 * many are still free once the Pods bound there (and the pods this decision has already placed)
 * are counted.
 */
import {
  isSchedulableFor,
  matchesSelector,
  type ManufacturerName,
  type Node,
  type ReceivedToleration,
} from '../k8s/index.js';
import { ACCELERATABLE_PREFIX, extractAcceleratorKeys, parseCount } from '../nodefeature/index.js';
import type { ReceivedResourceFlavor } from './schema.js';

export interface PoolNode {
  readonly name: string;
  /** Cards of the flavor's accelerator key on the node (its `<aKey>.count` label; 0 when unreadable). */
  readonly capacity: number;
}

export interface Pool {
  readonly flavor: string;
  readonly aKey: string;
  /** Sorted by name, so ties in placement and messages never depend on input order. */
  readonly nodes: readonly PoolNode[];
  /** Nodes the flavor selects but the pods may not use: cordoned, or a taint they do not tolerate. */
  readonly excluded: number;
}

export type PoolResolution =
  { readonly ok: true; readonly pool: Pool } | { readonly ok: false; readonly message: string };

/**
 * The pool behind a flavor for pods with `podTolerations`: the flavor must pin exactly one `<mfr>`
 * accelerator key, which names the `.count` label to read on each node. A flavor of another
 * manufacturer pins none of ours. Kueue adds the flavor's tolerations to the pods it admits, so
 * both sets decide which selected nodes the scheduler would use.
 */
export function resolvePool(
  flavor: ReceivedResourceFlavor,
  mfr: ManufacturerName,
  nodes: readonly Node[],
  podTolerations: readonly ReceivedToleration[],
): PoolResolution {
  const name = flavor.metadata.name;
  const nodeLabels = flavor.spec?.nodeLabels ?? {};
  const keys = extractAcceleratorKeys(nodeLabels, new Set([mfr]));
  const [aKey] = keys;
  if (aKey === undefined || keys.length > 1) {
    const found = keys.length === 0 ? 'none' : keys.join(', ');
    return {
      ok: false,
      message:
        `ResourceFlavor "${name}" pins no single ${mfr} accelerator key in ` +
        `spec.nodeLabels (found ${found}); correct the flavor's node labels (will retry)`,
    };
  }
  const countLabel = `${ACCELERATABLE_PREFIX}${aKey}.count`;
  const tolerations = [...podTolerations, ...(flavor.spec?.tolerations ?? [])];
  const selected = nodes.filter((node) => matchesSelector({ matchLabels: nodeLabels }, node.metadata.labels));
  const members = selected
    .filter((node) => isSchedulableFor(node, tolerations))
    .map((node) => ({ name: node.metadata.name, capacity: parseCount(node.metadata.labels?.[countLabel]) ?? 0 }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { ok: true, pool: { flavor: name, aKey, nodes: members, excluded: selected.length - members.length } };
}

/**
 * Cards of device-plugin resources taken per node: those the Pods hold (`held`, per resource: see
 * `NodeDevicesIndex.taken`) plus the pods this decision has placed. Keyed by resource as well as
 * node because a mixed node's device plugin hands out one resource across models. The DRA
 * counterpart, card by card, is `ClaimPlacement` over the pass's `DeviceLedger`.
 */
export class ResourcePlacement {
  private readonly placed = new Map<string, Map<string, number>>();
  private readonly claimedMemo = new Map<string, Map<string, number>>();

  /**
   * @param held cards of a resource the Pods hold per node through the device plugin
   * @param claimed cards of a model (aKey) on a node that ResourceClaims hold, whole or shared: on a
   *   node where both kinds of requests meet (a change of owner, or a plain `<base>` request DRA
   *   serves), one card is counted once (docs/architecture.md#device-owner)
   */
  constructor(
    private readonly held: (resource: string) => ReadonlyMap<string, number>,
    private readonly claimed: (node: string, aKey: string) => number = () => 0,
  ) {}

  /** Free cards of the pool's model `aKey` on `node` for `resource`; never below zero (an overcommitted node has none). */
  free(resource: string, node: PoolNode, aKey: string): number {
    const taken =
      (this.held(resource).get(node.name) ?? 0) +
      (this.placed.get(resource)?.get(node.name) ?? 0) +
      this.claimedOn(node.name, aKey);
    return Math.max(0, node.capacity - taken);
  }

  private claimedOn(node: string, aKey: string): number {
    // By model, then node: no key string built per node and call (bestFit asks for every node of a pool).
    let byNode = this.claimedMemo.get(aKey);
    if (byNode === undefined) this.claimedMemo.set(aKey, (byNode = new Map()));
    let count = byNode.get(node);
    if (count === undefined) byNode.set(node, (count = this.claimed(node, aKey)));
    return count;
  }

  /** Records a pod this decision placed, so later pods see the node as fuller. */
  place(resource: string, node: string, cards: number): void {
    let mine = this.placed.get(resource);
    if (mine === undefined) this.placed.set(resource, (mine = new Map()));
    mine.set(node, (mine.get(node) ?? 0) + cards);
  }
}
