/**
 * @module The topology case of `npm run bench:admission` (issue 44): the cluster's Nodes in GKE
 * blocks and sub-blocks (racks), and each Workload with the domains Kueue's TAS would assign it
 * (`podSetAssignments[].topologyAssignment`: levels block, sub-block, hostname; one slice per
 * PodSet, its pods on consecutive hosts of one rack, the hosts compressed to a common prefix and
 * roots as Kueue writes them). The check then places each domain's pods on that domain's nodes
 * (docs/architecture.md#topology-check).
 */
import type { Node } from '../../src/k8s/index.js';

export const BLOCK_LABEL = 'cloud.google.com/gce-topology-block';
export const SUBBLOCK_LABEL = 'cloud.google.com/gce-topology-subblock';
export const HOST_LABEL = 'kubernetes.io/hostname';
export const TOPOLOGY_LEVELS = [BLOCK_LABEL, SUBBLOCK_LABEL, HOST_LABEL] as const;

/** Nodes per block and per rack (sub-block): a GKE A3 block is a few hundred hosts, a rack 16 or so. */
export interface TopologyShape {
  readonly blockSize: number;
  readonly rackSize: number;
}

export const DEFAULT_SHAPE: TopologyShape = { blockSize: 256, rackSize: 16 };

/** What a run's topology looked like, kept with its timings. */
export interface TopologyScene {
  readonly levels: readonly string[];
  readonly blocks: number;
  readonly racks: number;
  /** Workloads whose PodSet carries a topologyAssignment (all of them). */
  readonly assigned: number;
}

/** The block and rack of the `index`-th Node. */
export function domainOf(index: number, shape: TopologyShape): { block: string; rack: string } {
  const block = Math.floor(index / shape.blockSize);
  const rack = Math.floor((index % shape.blockSize) / shape.rackSize);
  return { block: `b${block}`, rack: `b${block}-r${rack}` };
}

/** A copy of `node` (the `index`-th) with its block and rack labels. */
export function withDomainLabels(node: Node, index: number, shape: TopologyShape): Node {
  const { block, rack } = domainOf(index, shape);
  return {
    ...node,
    metadata: { ...node.metadata, labels: { ...node.metadata.labels, [BLOCK_LABEL]: block, [SUBBLOCK_LABEL]: rack } },
  };
}

export function sceneOf(nodes: number, shape: TopologyShape, assigned: number): TopologyScene {
  const blocks = Math.ceil(nodes / shape.blockSize);
  let racks = 0;
  for (let b = 0; b < blocks; b++)
    racks += Math.ceil(Math.min(shape.blockSize, nodes - b * shape.blockSize) / shape.rackSize);
  return { levels: [...TOPOLOGY_LEVELS], blocks, racks, assigned };
}

function commonPrefix(names: readonly string[]): string {
  const [first = ''] = names;
  let length = first.length;
  for (const name of names) {
    let i = 0;
    while (i < length && name[i] === first[i]) i++;
    length = i;
  }
  return first.slice(0, length);
}

/**
 * Kueue's assignment of `pods` pods, one per host, on consecutive hosts of one rack: the rack is
 * picked from `seed` (a Workload's index), the hosts start at an offset in it (wrapping inside the
 * rack). `names[i]` is the `i`-th Node's name.
 */
export function assignment(
  seed: number,
  pods: number,
  names: readonly string[],
  shape: TopologyShape,
): Record<string, unknown> {
  const rackStarts: number[] = [];
  let at = 0;
  while (at < names.length) {
    rackStarts.push(at);
    at += Math.min(shape.rackSize, shape.blockSize - (at % shape.blockSize), names.length - at);
  }
  const hash = Math.imul(seed + 1, 2654435761) >>> 0;
  const start = rackStarts[hash % rackStarts.length] ?? 0;
  const first = domainOf(start, shape);
  const size = Math.min(shape.rackSize, shape.blockSize - (start % shape.blockSize), names.length - start);
  const hosts = Array.from(
    { length: Math.min(pods, size) },
    (_, p) => names[start + ((((hash >>> 8) % size) + p) % size)] ?? '',
  );
  const prefix = commonPrefix(hosts);
  // More pods than hosts: spread them, the first hosts one more (Kueue's counts add up to the PodSet's).
  const counts = hosts.map((_, i) => Math.floor(pods / hosts.length) + (i < pods % hosts.length ? 1 : 0));
  const universal = counts.every((c) => c === counts[0]);
  return {
    levels: [...TOPOLOGY_LEVELS],
    slices: [
      {
        domainCount: hosts.length,
        valuesPerLevel: [
          { universal: first.block },
          { universal: first.rack },
          { individual: { prefix, roots: hosts.map((h) => h.slice(prefix.length)) } },
        ],
        podCounts: universal ? { universal: counts[0] } : { individual: counts },
      },
    ],
  };
}

/** A copy of a generated Workload whose every PodSet assignment carries the domains TAS assigned it. */
export function withAssignment(
  workload: Record<string, unknown>,
  seed: number,
  names: readonly string[],
  shape: TopologyShape,
): Record<string, unknown> {
  const copy = structuredClone(workload) as {
    status?: { admission?: { podSetAssignments?: { count?: number; topologyAssignment?: unknown }[] } };
  };
  for (const podSet of copy.status?.admission?.podSetAssignments ?? [])
    podSet.topologyAssignment = assignment(seed, podSet.count ?? 1, names, shape);
  return copy as Record<string, unknown>;
}
