/**
 * @module `gpustack-node-shard`: the level between the Nodes and the chain. Each NodeShard relates
 * the NodeProfiles of its shard and writes their summary into its status, which the chain (its
 * owner) reads instead of every profile (docs/architecture.md#node-shards).
 */
import {
  GPUSTACK_API_VERSION,
  type CompositeSyncResponse,
  type CustomizeResponse,
  type SyncOutcome,
} from '../../k8s/index.js';
import { NODE_SHARD_LABEL, PART_OF_LABEL, PART_OF_VALUE } from '../../nodefeature/index.js';
import { NODE_PROFILE_KEY, refuse } from '../common/index.js';
import type { NodeShardCustomizeRequest, NodeShardSyncRequest } from './schema.js';
import { profileArrival } from './arrivals.js';
import { summarizeShard } from './summary.js';

/** Relates exactly the NodeProfiles node-profile put in this shard (their `gpustack.ai/node-shard` label). */
export function customizeNodeShard(request: NodeShardCustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [
      {
        apiVersion: GPUSTACK_API_VERSION,
        resource: 'nodeprofiles',
        labelSelector: {
          matchLabels: { [PART_OF_LABEL]: PART_OF_VALUE, [NODE_SHARD_LABEL]: String(request.parent.spec.index) },
        },
      },
    ],
  };
}

/**
 * The shard's summary as its status. A NodeShard has no child resources (its controller declares
 * none), so the empty child list deletes nothing. Refuses (429) while the profiles are not in the
 * request: an empty summary would drop the shard's Nodes from their pools.
 * @example syncNodeShard(request) // { ok: true, response: { status: { profiles: 3, groups: [...] }, children: [] } }
 */
export function syncNodeShard(request: NodeShardSyncRequest): SyncOutcome<CompositeSyncResponse> {
  const profiles = request.related[NODE_PROFILE_KEY];
  if (profiles === undefined)
    return refuse(
      'MissingRelated',
      `related ${NODE_PROFILE_KEY} is missing: the customize hook has not been applied yet`,
    );
  const list = Object.values(profiles);
  const arrival = profileArrival(list);
  return { ok: true, response: { status: { ...summarizeShard(list), ...(arrival ? { arrival } : {}) }, children: [] } };
}
