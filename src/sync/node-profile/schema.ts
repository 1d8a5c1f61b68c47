/** @module Hook bodies of the `gpustack-node-profile` DecoratorController (target: v1 Nodes). */
import type { z } from 'zod';
import {
  CustomizeRequestSchema,
  SyncRequestSchema,
  KubeObjectSchema,
  NodeSchema,
  decoratorRequest,
  objectMapSchema,
} from '../../k8s/index.js';

export const NodeProfileSyncRequestSchema = decoratorRequest(
  SyncRequestSchema.extend({
    parent: NodeSchema,
    related: objectMapSchema(KubeObjectSchema).default({}),
  }),
);
export type NodeProfileSyncRequest = z.infer<typeof NodeProfileSyncRequestSchema>;

export const NodeProfileCustomizeRequestSchema = CustomizeRequestSchema;
export type NodeProfileCustomizeRequest = z.infer<typeof NodeProfileCustomizeRequestSchema>;
