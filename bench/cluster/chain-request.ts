/**
 * @module What the scheduling chain's sync request holds of the Nodes, for bench:cluster's "chain
 * request" column: since node shards, the NodeShards (the chain's children, with their summaries),
 * the NodeProfiles in no shard yet and the managed Nodes without a profile (what
 * `customizeSchedulingChain` relates) — not every NodeProfile, which is what the chain read before.
 * Pure: the bench lists the objects, this picks and weighs them.
 */
import type { KubeObject } from '../../harness/e2e/apply.js';
import { MANAGED_LABEL, NODE_SHARD_LABEL, PROFILED_LABEL } from '../../src/nodefeature/index.js';

export interface ChainInputs {
  /** Every NodeProfile. */
  readonly profiles: readonly KubeObject[];
  /** Every NodeShard; none on a release before shards. */
  readonly shards: readonly KubeObject[];
  /** Every Node. */
  readonly nodes: readonly KubeObject[];
}

const labelOf = (object: KubeObject, key: string): string | undefined => object.metadata.labels?.[key];

/** The objects of the Nodes the chain's sync request holds, as Metacontroller relates and adopts them. */
export function chainRequestObjects({ profiles, shards, nodes }: ChainInputs): KubeObject[] {
  return [
    ...shards,
    ...profiles.filter((profile) => labelOf(profile, NODE_SHARD_LABEL) === undefined),
    ...nodes.filter((node) => labelOf(node, MANAGED_LABEL) === 'true' && labelOf(node, PROFILED_LABEL) === undefined),
  ];
}

const bytesOf = (objects: readonly KubeObject[]): number => Buffer.byteLength(JSON.stringify(objects));

/** The chain request's bytes of the Nodes, and every NodeProfile's (a Node's cost in a shard request). */
export function chainRequestSizes(inputs: ChainInputs): { chainRequestBytes: number; profileBytes: number } {
  return { chainRequestBytes: bytesOf(chainRequestObjects(inputs)), profileBytes: bytesOf(inputs.profiles) };
}
