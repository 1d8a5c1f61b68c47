/** @module Hook bodies of the `gpustack-scheduling-chain` CompositeController (parent: SchedulingChain). */
import { z } from 'zod';
import {
  SyncRequestSchema,
  CustomizeRequestSchema,
  EchoedValueSchema,
  InstanceTypeSchema,
  KubeObjectSchema,
  SchedulingChainSchema,
  objectMapSchema,
} from '../../k8s/index.js';
import { INSTANCE_TYPE_KEY } from '../common/index.js';

/** An observed child: its spec is sent back unchanged while the settings are invalid. */
export const ChildObjectSchema = KubeObjectSchema.extend({ spec: EchoedValueSchema.optional() });
export type ChildObject = z.infer<typeof ChildObjectSchema>;

export const SchedulingChainSyncRequestSchema = SyncRequestSchema.extend({
  parent: SchedulingChainSchema,
  // Observed InstanceTypes are read (sticky pools, admin-edited fields); other kinds pass through.
  children: z
    .looseObject({
      [INSTANCE_TYPE_KEY]: z.record(z.string(), InstanceTypeSchema).optional(),
    })
    .catchall(z.record(z.string(), ChildObjectSchema))
    .default({}),
  // Managed Nodes: the chain reads their metadata only (name, labels, the cpu-name annotation), so
  // only that is checked; a Node's status (capacity, conditions, images…) passes as received.
  related: objectMapSchema(KubeObjectSchema).default({}),
});
export type SchedulingChainSyncRequest = z.infer<typeof SchedulingChainSyncRequestSchema>;

export const SchedulingChainCustomizeRequestSchema = CustomizeRequestSchema;
export type SchedulingChainCustomizeRequest = z.infer<typeof SchedulingChainCustomizeRequestSchema>;
