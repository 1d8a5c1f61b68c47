/** @module Hook bodies of the `gpustack-scheduling-chain` CompositeController (parent: SchedulingChain). */
import { z } from 'zod';
import {
  SyncRequestSchema,
  CustomizeRequestSchema,
  EchoedValueSchema,
  InstanceTypeSchema,
  KubeObjectSchema,
  NodeProfileSchema,
  NodeShardSchema,
  SchedulingChainSchema,
} from '../../k8s/index.js';
import { INSTANCE_TYPE_KEY, NODE_PROFILE_KEY, NODE_SHARD_KEY } from '../common/index.js';

/** An observed child: its spec is sent back unchanged while the settings are invalid. */
export const ChildObjectSchema = KubeObjectSchema.extend({ spec: EchoedValueSchema.optional() });
export type ChildObject = z.infer<typeof ChildObjectSchema>;

export const SchedulingChainSyncRequestSchema = SyncRequestSchema.extend({
  parent: SchedulingChainSchema,
  // Observed InstanceTypes are read (sticky pools, admin-edited fields) and NodeShards (their
  // summaries: the managed Nodes); other kinds pass through.
  children: z
    .looseObject({
      [INSTANCE_TYPE_KEY]: z.record(z.string(), InstanceTypeSchema).optional(),
      [NODE_SHARD_KEY]: z.record(z.string(), NodeShardSchema).optional(),
    })
    .catchall(z.record(z.string(), ChildObjectSchema))
    .default({}),
  // NodeProfiles not in a shard yet (an upgrade) and the managed Nodes that have none yet. Of a Node the chain reads its metadata and status.capacity.cpu, so only the metadata is
  // checked; its status (capacity, conditions, images…) passes as received.
  related: z
    .looseObject({
      [NODE_PROFILE_KEY]: z.record(z.string(), NodeProfileSchema).optional(),
    })
    .catchall(z.record(z.string(), KubeObjectSchema))
    .default({}),
});
export type SchedulingChainSyncRequest = z.infer<typeof SchedulingChainSyncRequestSchema>;

export const SchedulingChainCustomizeRequestSchema = CustomizeRequestSchema;
export type SchedulingChainCustomizeRequest = z.infer<typeof SchedulingChainCustomizeRequestSchema>;
