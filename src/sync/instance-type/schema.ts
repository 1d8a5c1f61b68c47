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
export const ObservedObjectSchema = KubeObjectSchema.extend({
  // Sent back unchanged while the InstanceType's own spec is invalid.
  spec: EchoedValueSchema.optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      conditions: z.array(ConditionSchema).optional(),
    })
    .nullish(),
});
export type ObservedObject = z.infer<typeof ObservedObjectSchema>;

export const InstanceTypeSyncRequestSchema = SyncRequestSchema.extend({
  parent: InstanceTypeSchema,
  children: objectMapSchema(ObservedObjectSchema).default({}),
  related: objectMapSchema(ObservedObjectSchema).default({}),
});
export type InstanceTypeSyncRequest = z.infer<typeof InstanceTypeSyncRequestSchema>;

export const InstanceTypeCustomizeRequestSchema = CustomizeRequestSchema;
export type InstanceTypeCustomizeRequest = z.infer<typeof InstanceTypeCustomizeRequestSchema>;
