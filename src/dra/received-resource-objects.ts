/**
 * @module What we read of resource.k8s.io/v1 objects we receive: for the ledger, ResourceSlices
 * (every driver's; ours are picked by driver later), ResourceClaims (their allocation) and
 * ResourceClaimTemplates (what a pod will ask for); for the agent's publisher, its own slices.
 * Loose: only the fields read are checked, so a newer API server's extra fields pass, and
 * quantities arrive as strings or JSON numbers. Every such schema is `Received…`; the strict ones
 * of what we send (resource-slice.ts) have the plain name.
 */
import { z } from 'zod';
import { KubeObjectSchema } from '../k8s/index.js';
import { ReceivedDeviceTaintSchema } from './device-taints.js';

export const ReceivedQuantitySchema = z.union([z.string(), z.number()]);
export type ReceivedQuantity = z.infer<typeof ReceivedQuantitySchema>;

/** How a multi-allocatable device's capacity is handed out (KEP-5075): the default and the valid amounts. */
export const ReceivedRequestPolicySchema = z.looseObject({
  default: ReceivedQuantitySchema.optional(),
  validValues: z.array(ReceivedQuantitySchema).optional(),
  validRange: z
    .looseObject({
      min: ReceivedQuantitySchema.optional(),
      max: ReceivedQuantitySchema.optional(),
      step: ReceivedQuantitySchema.optional(),
    })
    .optional(),
});
export type ReceivedRequestPolicy = z.infer<typeof ReceivedRequestPolicySchema>;

export const ReceivedDeviceCapacitySchema = z.looseObject({
  value: ReceivedQuantitySchema,
  requestPolicy: ReceivedRequestPolicySchema.optional(),
});

/** One typed attribute value: exactly one member is set by the publisher. */
export const ReceivedDeviceAttributeSchema = z.looseObject({
  string: z.string().optional(),
  int: z.number().optional(),
  bool: z.boolean().optional(),
  version: z.string().optional(),
});

export const ReceivedDeviceSchema = z.looseObject({
  name: z.string().min(1),
  attributes: z.record(z.string(), ReceivedDeviceAttributeSchema).optional(),
  capacity: z.record(z.string(), ReceivedDeviceCapacitySchema).optional(),
  allowMultipleAllocations: z.boolean().optional(),
  consumesCounters: z.array(z.looseObject({ counterSet: z.string() })).optional(),
  /** Taints the publisher put on the device (the agent's `gpustack.ai/unhealthy`). */
  taints: z.array(ReceivedDeviceTaintSchema).optional(),
});
export type ReceivedDevice = z.infer<typeof ReceivedDeviceSchema>;

/** A ResourceSlice with its devices, as the ledger reads it (the agent's publisher reads a `ReceivedPublishedSlice`). */
export const ReceivedResourceSliceSchema = KubeObjectSchema.extend({
  spec: z.looseObject({
    driver: z.string().min(1),
    nodeName: z.string().optional(),
    pool: z.looseObject({
      name: z.string().min(1),
      generation: z.number().int().nonnegative(),
      resourceSliceCount: z.number().int().positive().optional(),
    }),
    devices: z.array(ReceivedDeviceSchema).optional(),
  }),
});
export type ReceivedResourceSlice = z.infer<typeof ReceivedResourceSliceSchema>;

/** One allocated device: which driver, pool and device, and for a shared device what it took. */
export const ReceivedAllocationResultSchema = z.looseObject({
  request: z.string().optional(),
  driver: z.string(),
  pool: z.string(),
  device: z.string(),
  consumedCapacity: z.record(z.string(), ReceivedQuantitySchema).optional(),
});
export type ReceivedAllocationResult = z.infer<typeof ReceivedAllocationResultSchema>;

export const ReceivedResourceClaimSchema = KubeObjectSchema.extend({
  status: z
    .looseObject({
      allocation: z
        .looseObject({
          devices: z.looseObject({ results: z.array(ReceivedAllocationResultSchema).optional() }).optional(),
        })
        .nullish(),
      /** Pods the claim is reserved for; an allocated claim holds its devices with or without them. */
      reservedFor: z.array(z.looseObject({ name: z.string().optional() })).optional(),
    })
    .nullish(),
});
export type ReceivedResourceClaim = z.infer<typeof ReceivedResourceClaimSchema>;

/** `exactly` of a device request: the only form Kueue counts, and the only one we place. */
export const ReceivedExactRequestSchema = z.looseObject({
  deviceClassName: z.string(),
  /** `ExactCount` (the default) or `All`. */
  allocationMode: z.string().optional(),
  count: z.number().int().nonnegative().optional(),
  capacity: z.looseObject({ requests: z.record(z.string(), ReceivedQuantitySchema).optional() }).optional(),
});
export type ReceivedExactRequest = z.infer<typeof ReceivedExactRequestSchema>;

export const ReceivedDeviceRequestSchema = z.looseObject({
  name: z.string(),
  exactly: ReceivedExactRequestSchema.optional(),
  firstAvailable: z.array(z.looseObject({ name: z.string().optional() })).optional(),
});
export type ReceivedDeviceRequest = z.infer<typeof ReceivedDeviceRequestSchema>;

export const ReceivedResourceClaimTemplateSchema = KubeObjectSchema.extend({
  spec: z.looseObject({
    spec: z.looseObject({
      devices: z.looseObject({ requests: z.array(ReceivedDeviceRequestSchema).optional() }).optional(),
    }),
  }),
});
export type ReceivedResourceClaimTemplate = z.infer<typeof ReceivedResourceClaimTemplateSchema>;

/** One of our ResourceSlices as the API server answers it, loosely: what the agent's publisher compares. */
export const ReceivedPublishedSliceSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    /** Set when the agent made the name from it (the name it wanted was held by someone else). */
    generateName: z.string().optional(),
    resourceVersion: z.string().optional(),
    uid: z.string().optional(),
  }),
  spec: z.looseObject({
    driver: z.string(),
    nodeName: z.string().optional(),
    pool: z.looseObject({
      name: z.string(),
      generation: z.number().int(),
      resourceSliceCount: z.number().int(),
    }),
  }),
});
export type ReceivedPublishedSlice = z.infer<typeof ReceivedPublishedSliceSchema>;
