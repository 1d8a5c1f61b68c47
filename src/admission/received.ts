/**
 * @module The checker's own readings of our kinds, narrower than src/k8s's: only the fields it
 * decides or annotates with, so an object that breaks a rule it does not read still counts.
 * Apart from resources.ts (what is watched) and slim.ts (what the store keeps), which both need them.
 */
import { z } from 'zod';
import { KubeObjectSchema } from '../k8s/index.js';

/** An InstanceType: its pool (accelerator key, os, arch) and the ledger count we last annotated. */
export const ReceivedInstanceTypeSchema = KubeObjectSchema.extend({
  spec: z
    .looseObject({
      acceleratable: z.boolean().optional(),
      acceleratorGroup: z.string().optional(),
      os: z.string().optional(),
      arch: z.string().optional(),
    })
    .optional(),
});
export type ReceivedInstanceType = z.infer<typeof ReceivedInstanceTypeSchema>;

/**
 * The SchedulingChain, for its settings only. Why not `SchedulingChainSchema`: the status is not
 * read here, and a chain whose status failed a schema would be dropped from the store and read as
 * absent, that is as every default; the spec is resolved later (`settingsFromChains`) as the chain resolves it.
 */
export const ReceivedSchedulingChainSchema = KubeObjectSchema.extend({ spec: z.unknown().optional() });
export type ReceivedSchedulingChain = z.infer<typeof ReceivedSchedulingChainSchema>;
