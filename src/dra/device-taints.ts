/**
 * @module Device taints (resource.k8s.io DeviceTaint, KEP-5055): what makes a published card not
 * free although no claim holds it. Two sources: the taints the agent publishes on a device of its
 * own slice (`gpustack.ai/unhealthy`, device-health.ts) and the DeviceTaintRules an admin creates
 * (`gpustack-operator cards cordon`, taint key `gpustack.ai/cordoned`). The scheduler merges both
 * when it allocates; the slices never show the rules, so every reader of the ledger is given the
 * rules beside the slices. A card is two devices (`card-<i>`, `card-<i>-shared`): a taint on
 * either counts for the card. Pure.
 */
import { z } from 'zod';
import { KubeObjectSchema } from '../k8s/index.js';
import { SYSTEM_DOMAIN } from '../nodefeature/index.js';

/** The taint a cordon puts on both devices of a card. */
export const CORDON_TAINT_KEY = `${SYSTEM_DOMAIN}/cordoned`;

/** A device taint as received, on a slice's device or in a DeviceTaintRule (v1 and v1beta2 alike). */
export const ReceivedDeviceTaintSchema = z.looseObject({
  key: z.string(),
  value: z.string().optional(),
  /** `NoSchedule`, `NoExecute` (and `None`, which only shows a taint). */
  effect: z.string(),
});
export type ReceivedDeviceTaint = z.infer<typeof ReceivedDeviceTaintSchema>;

/** A DeviceTaintRule as received: which devices it selects and the taint it adds to them. */
export const ReceivedDeviceTaintRuleSchema = KubeObjectSchema.extend({
  spec: z.looseObject({
    deviceSelector: z
      .looseObject({
        driver: z.string().optional(),
        pool: z.string().optional(),
        device: z.string().optional(),
      })
      .optional(),
    taint: ReceivedDeviceTaintSchema,
  }),
});
export type ReceivedDeviceTaintRule = z.infer<typeof ReceivedDeviceTaintRuleSchema>;

/** Whether a card may take new claims, and why not. */
export interface CardHealth {
  /** A `gpustack.ai/cordoned` taint (from a DeviceTaintRule) is on one of its devices. */
  readonly cordoned: boolean;
  /** A `gpustack.ai/unhealthy` taint is on one of its devices. */
  readonly unhealthy: boolean;
  /** Every taint on either device, from the slices and the rules, sorted by key. */
  readonly taints: readonly ReceivedDeviceTaint[];
}

/** A card with no taint. */
export const UNTAINTED: CardHealth = Object.freeze({ cordoned: false, unhealthy: false, taints: Object.freeze([]) });
