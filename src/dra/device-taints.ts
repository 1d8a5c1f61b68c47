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
import { UNHEALTHY_TAINT_KEY } from './device-health.js';

/** The taint a cordon puts on both devices of a card. */
export const CORDON_TAINT_KEY = `${SYSTEM_DOMAIN}/cordoned`;

/** The collection of DeviceTaintRules (cluster-scoped) in discovery. */
export const DEVICE_TAINT_RULES_RESOURCE = 'devicetaintrules';

/**
 * Where DeviceTaintRule is served, in order of preference: `resource.k8s.io/v1` from Kubernetes
 * 1.37 (gate `DRADeviceTaintRules` GA, on by default); `resource.k8s.io/v1beta2` in 1.36 only with
 * `--runtime-config=resource.k8s.io/v1beta2=true` and the gate `DRADeviceTaintRules` (beta, off).
 */
export const DEVICE_TAINT_RULE_VERSIONS = ['resource.k8s.io/v1', 'resource.k8s.io/v1beta2'] as const;

/** Said once by whoever finds no DeviceTaintRule served: what serves it. */
export const DEVICE_TAINT_RULES_NOT_SERVED =
  'the cluster serves no DeviceTaintRule (resource.k8s.io/v1 or v1beta2): Kubernetes 1.37+ serves ' +
  'resource.k8s.io/v1 by default; 1.36 needs kube-apiserver --runtime-config=resource.k8s.io/v1beta2=true ' +
  'and --feature-gates=DRADeviceTaintRules=true on kube-apiserver, kube-scheduler and kube-controller-manager';

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
  /** A `gpustack.ai/cordoned` taint (from a DeviceTaintRule) that blocks is on one of its devices. */
  readonly cordoned: boolean;
  /** A `gpustack.ai/unhealthy` taint that blocks is on one of its devices. */
  readonly unhealthy: boolean;
  /**
   * Any taint that keeps new claims off (`NoSchedule` or `NoExecute`, whatever its key) is on one
   * of its devices: the card is not free, whole or shared. `cordoned` and `unhealthy` imply it.
   */
  readonly blocked: boolean;
  /** Every taint on either device, from the slices and the rules, sorted by key. */
  readonly taints: readonly ReceivedDeviceTaint[];
}

/** A card with no taint. */
export const UNTAINTED: CardHealth = Object.freeze({
  cordoned: false,
  unhealthy: false,
  blocked: false,
  taints: Object.freeze([]),
});

/**
 * The effects that keep new claims off a device: `NoSchedule`, and `NoExecute`, which also evicts.
 * `None` only shows a taint, and an effect this release does not know counts as `None`, as the API
 * tells consumers to treat it.
 */
const BLOCKING_EFFECTS: ReadonlySet<string> = new Set(['NoSchedule', 'NoExecute']);

/** Whether a device with this taint takes no new claim that does not tolerate it. */
export function isBlockingTaint(taint: ReceivedDeviceTaint): boolean {
  return BLOCKING_EFFECTS.has(taint.effect);
}

/** Whether `rule` selects the device `device` of pool `pool` of `driver`: every field it sets must match. */
export function ruleSelects(rule: ReceivedDeviceTaintRule, driver: string, pool: string, device: string): boolean {
  // No selector: the scheduler's slice tracker (k8s.io/dynamic-resource-allocation, 1.36) applies
  // such a rule to every device, although the API's comment says it selects none. The ledger
  // follows the scheduler, whose allocation it predicts.
  const selector = rule.spec.deviceSelector;
  if (selector === undefined) return true;
  return (
    (selector.driver === undefined || selector.driver === driver) &&
    (selector.pool === undefined || selector.pool === pool) &&
    (selector.device === undefined || selector.device === device)
  );
}

function byTaint(a: ReceivedDeviceTaint, b: ReceivedDeviceTaint): number {
  const ka = `${a.key}\u0000${a.value ?? ''}\u0000${a.effect}`;
  const kb = `${b.key}\u0000${b.value ?? ''}\u0000${b.effect}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The health of a card from every taint on its two devices: each taint once (a cordon puts the
 * same taint on both devices), sorted; cordoned or unhealthy only by a taint that blocks.
 */
export function cardHealth(taints: Iterable<ReceivedDeviceTaint>): CardHealth {
  const unique = new Map<string, ReceivedDeviceTaint>();
  for (const taint of taints) {
    const { key, value, effect } = taint;
    unique.set(
      `${key}\u0000${value ?? ''}\u0000${effect}`,
      value === undefined ? { key, effect } : { key, value, effect },
    );
  }
  if (unique.size === 0) return UNTAINTED;
  const sorted = [...unique.values()].sort(byTaint);
  const blocking = (key: string) => sorted.some((t) => t.key === key && isBlockingTaint(t));
  return {
    cordoned: blocking(CORDON_TAINT_KEY),
    unhealthy: blocking(UNHEALTHY_TAINT_KEY),
    blocked: sorted.some(isBlockingTaint),
    taints: sorted,
  };
}
