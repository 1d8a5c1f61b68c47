/** @module Hook bodies of the `gpustack-node-shard` CompositeController (parent: NodeShard). */
import { z } from 'zod';
import {
  CustomizeRequestSchema,
  NodeProfileSchema,
  NodeShardSchema,
  SyncRequestSchema,
  KubeObjectSchema,
} from '../../k8s/index.js';
import { NODE_PROFILE_KEY } from '../common/index.js';

export const NodeShardSyncRequestSchema = SyncRequestSchema.extend({
  parent: NodeShardSchema,
  // The shard's NodeProfiles: all it reads. A NodeShard has no children.
  related: z
    .looseObject({ [NODE_PROFILE_KEY]: z.record(z.string(), NodeProfileSchema).optional() })
    .catchall(z.record(z.string(), KubeObjectSchema))
    .default({}),
});
export type NodeShardSyncRequest = z.infer<typeof NodeShardSyncRequestSchema>;

export const NodeShardCustomizeRequestSchema = CustomizeRequestSchema.extend({ parent: NodeShardSchema });
export type NodeShardCustomizeRequest = z.infer<typeof NodeShardCustomizeRequestSchema>;
