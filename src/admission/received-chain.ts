/**
 * @module The checker's reading of the SchedulingChain, narrower than src/k8s's: its settings only,
 * so a chain whose status breaks a rule the checker does not read still counts. Apart from
 * resources.ts (what is watched) and store-fields.ts (what the store keeps), which both need it.
 * (The InstanceType's reading is src/dra's `ReceivedInstanceTypeSchema`: `cards` reads it too.)
 */
import { z } from 'zod';
import { KubeObjectSchema } from '../k8s/index.js';

/**
 * The SchedulingChain, for its settings only. Why not `SchedulingChainSchema`: the status is not
 * read here, and a chain whose status failed a schema would be dropped from the store and read as
 * absent, that is as every default; the spec is resolved later (`settingsFromChains`) as the chain resolves it.
 */
export const ReceivedSchedulingChainSchema = KubeObjectSchema.extend({ spec: z.unknown().optional() });
export type ReceivedSchedulingChain = z.infer<typeof ReceivedSchedulingChainSchema>;
