/**
 * @module The Pod as we receive it, loose: where it is bound, what its containers ask for, whether
 * it has terminated, and which extended resources the scheduler served through DRA. One schema for
 * both readers: the admission checker's per-card decision and the agent's device-owner check.
 */
import { z } from 'zod';
import { KubeObjectSchema } from './objects.js';

/** A resource list (`requests`/`limits`): quantities arrive as strings, sometimes as JSON numbers. */
export const ResourceListSchema = z.record(z.string(), z.union([z.string(), z.number()]));
export type ResourceList = z.infer<typeof ResourceListSchema>;

export const ContainerSchema = z.looseObject({
  name: z.string().optional(),
  /** `Always` on an init container makes it a sidecar: it keeps its resources while the app runs. */
  restartPolicy: z.string().optional(),
  resources: z
    .looseObject({
      requests: ResourceListSchema.optional(),
      limits: ResourceListSchema.optional(),
    })
    .optional(),
});
export type Container = z.infer<typeof ContainerSchema>;

/** The part of a PodSpec that decides what a pod asks for, and where it is bound. */
export const PodSpecSchema = z.looseObject({
  nodeName: z.string().optional(),
  containers: z.array(ContainerSchema).default([]),
  initContainers: z.array(ContainerSchema).optional(),
});
export type PodSpec = z.infer<typeof PodSpecSchema>;

/** A Pod: where it is bound, what its containers ask for, and whether it has terminated. */
export const PodSchema = KubeObjectSchema.extend({
  spec: PodSpecSchema,
  status: z
    .looseObject({
      phase: z.string().optional(),
      /**
       * The scheduler's claim for extended resources it served through DRA (KEP-5004): the mapped
       * resources' cards are in that ResourceClaim, so the ledger counts them, not the Pod.
       */
      extendedResourceClaimStatus: z
        .looseObject({ requestMappings: z.array(z.looseObject({ resourceName: z.string() })).nullish() })
        .nullish(),
    })
    .nullish(),
});
export type Pod = z.infer<typeof PodSchema>;
