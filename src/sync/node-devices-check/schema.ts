/** @module Hook bodies of the `gpustack-node-devices-check` DecoratorController (target: our AdmissionCheck). */
import { z } from 'zod';
import { ConditionSchema, SyncRequestSchema, KubeObjectSchema, decoratorRequest } from '../../k8s/index.js';

export const AdmissionCheckObjectSchema = KubeObjectSchema.extend({
  spec: z.looseObject({ controllerName: z.string().optional() }).optional(),
  status: z.looseObject({ conditions: z.array(ConditionSchema).optional() }).nullish(),
});

export const NodeDevicesCheckSyncRequestSchema = decoratorRequest(
  SyncRequestSchema.extend({
    parent: AdmissionCheckObjectSchema,
  }),
);
export type NodeDevicesCheckSyncRequest = z.infer<typeof NodeDevicesCheckSyncRequestSchema>;
