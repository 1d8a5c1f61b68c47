/** @module Hook bodies of the `gpustack-instance-type` CompositeController (parent: InstanceType). */
import { z } from 'zod';
import {
  SyncRequestSchema,
  ConditionSchema,
  CustomizeRequestSchema,
  EchoedValueSchema,
  InstanceTypeSchema,
  KubeObjectSchema,
  objectMapSchema,
} from '../../k8s/index.js';

/** Related objects and children: labels, and the status bits we read (conditions, namespace phase). */
export const ReceivedObjectSchema = KubeObjectSchema.extend({
  // Sent back unchanged while the InstanceType's own spec is invalid.
  spec: EchoedValueSchema.optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      conditions: z.array(ConditionSchema).optional(),
    })
    .nullish(),
});
export type ReceivedObject = z.infer<typeof ReceivedObjectSchema>;

export const InstanceTypeSyncRequestSchema = SyncRequestSchema.extend({
  parent: InstanceTypeSchema,
  children: objectMapSchema(ReceivedObjectSchema).default({}),
  related: objectMapSchema(ReceivedObjectSchema).default({}),
});
export type InstanceTypeSyncRequest = z.infer<typeof InstanceTypeSyncRequestSchema>;

export const InstanceTypeCustomizeRequestSchema = CustomizeRequestSchema;
export type InstanceTypeCustomizeRequest = z.infer<typeof InstanceTypeCustomizeRequestSchema>;
