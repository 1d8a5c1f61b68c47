// bench:cluster's "chain request" column on small inputs: what the chain's sync request holds of the
// Nodes since node shards (the NodeShards, the profiles in no shard, the managed Nodes without a
// profile), not every NodeProfile.
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../harness/e2e/apply.js';
import { chainRequestObjects, chainRequestSizes } from '../../bench/cluster/chain-request.js';

const object = (kind: string, name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: kind === 'Node' ? 'v1' : 'worker.gpustack.ai/v1alpha1',
  kind,
  metadata: { name, labels },
});

const profiles = [
  object('NodeProfile', 'a', { 'gpustack.ai/node-shard': '0' }),
  object('NodeProfile', 'b', { 'gpustack.ai/node-shard': '1' }),
  object('NodeProfile', 'c'),
];
const shards = [object('NodeShard', 'shard-0'), object('NodeShard', 'shard-1')];
const nodes = [
  object('Node', 'a', { 'gpustack.ai/managed': 'true', 'gpustack.ai/profiled': 'true' }),
  object('Node', 'd', { 'gpustack.ai/managed': 'true' }),
  object('Node', 'e'),
];

describe('the chain request of bench:cluster', () => {
  it('holds the NodeShards, the profiles in no shard and the managed Nodes without a profile', () => {
    const names = chainRequestObjects({ profiles, shards, nodes }).map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toEqual(['NodeShard/shard-0', 'NodeShard/shard-1', 'NodeProfile/c', 'Node/d']);
  });

  it('weighs that, not every NodeProfile; every profile is weighed apart', () => {
    const sizes = chainRequestSizes({ profiles, shards, nodes });
    const held = [shards[0], shards[1], profiles[2], nodes[1]];
    expect(sizes.chainRequestBytes).toBe(Buffer.byteLength(JSON.stringify(held)));
    expect(sizes.profileBytes).toBe(Buffer.byteLength(JSON.stringify(profiles)));
  });

  it('is every profile before shards: no NodeShard, no profile labelled with one', () => {
    const unsharded = profiles.map((p) => ({ ...p, metadata: { name: p.metadata.name } }));
    const sizes = chainRequestSizes({ profiles: unsharded, shards: [], nodes: [] });
    expect(sizes.chainRequestBytes).toBe(sizes.profileBytes);
  });
});
