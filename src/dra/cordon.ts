/**
 * @module Cordoning one card (docs/operations.md#cordon-a-card): a DeviceTaintRule with the taint
 * `gpustack.ai/cordoned` per device of the card (`card-<i>` and `card-<i>-shared` both consume its
 * counters, and the API server refuses CEL `selectors` that would select both in one rule). The
 * rules are labelled so that `uncordon`, the `cards` view and the checker find them by node and
 * card; the admin's reason is an annotation, and the taint's value where it is a valid label
 * value. Pure.
 */
import { SYSTEM_DOMAIN, fnv1a64Hex } from '../nodefeature/index.js';
import { CORDON_TAINT_KEY } from './device-taints.js';
import type { PublishedCard } from './ledger.js';

/** `true` on every rule a cordon creates. */
export const CORDON_LABEL = `${SYSTEM_DOMAIN}/cordon`;
/** The node (its name, or the FNV-1a hash of a name longer than a label value may be). */
export const CORDON_NODE_LABEL = `${SYSTEM_DOMAIN}/cordon-node`;
/** The card: `card-<i>`. */
export const CORDON_CARD_LABEL = `${SYSTEM_DOMAIN}/cordon-card`;
/** The driver whose card it is (`nvidia.gpustack.ai`): two manufacturers' cards on a node share indexes. */
export const CORDON_DRIVER_LABEL = `${SYSTEM_DOMAIN}/cordon-driver`;
/** The admin's reason, whole. */
export const CORDON_REASON_ANNOTATION = `${SYSTEM_DOMAIN}/cordon-reason`;
/** The node's full name. */
export const CORDON_NODE_ANNOTATION = `${SYSTEM_DOMAIN}/cordon-node`;

/** `NoSchedule`: no new claim, running ones stay. `NoExecute`: pods using the card are evicted too. */
export type CordonEffect = 'NoSchedule' | 'NoExecute';

const LABEL_VALUE_MAX = 63;
const NAME_MAX = 253;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A node's name as a label value: itself when it is one, else its FNV-1a hash. */
export function nodeLabelValue(node: string): string {
  return node.length <= LABEL_VALUE_MAX && LABEL_VALUE.test(node) ? node : fnv1a64Hex(node);
}

/**
 * The reason as a taint value (a label value): other characters become `-`, cut at 63, trimmed to
 * start and end with a letter or digit; `undefined` when nothing is left.
 * @example taintValue('firmware update 2.1') // 'firmware-update-2.1'
 */
export function taintValue(reason: string): string | undefined {
  const value = reason
    .replace(/[^-A-Za-z0-9_.]+/g, '-')
    .slice(0, LABEL_VALUE_MAX)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return value === '' ? undefined : value;
}

/**
 * `gpustack-cordon-<node>-<mfr>-<device>`; a node name too long to leave room is cut and followed
 * by its hash, so two long names sharing a prefix never share rules.
 * @example cordonRuleName('gpu-1', 'nvidia.gpustack.ai', 'card-3-shared') // 'gpustack-cordon-gpu-1-nvidia-card-3-shared'
 */
export function cordonRuleName(node: string, driver: string, device: string): string {
  const mfr = driver.split('.')[0] ?? driver;
  const suffix = `-${mfr}-${device}`;
  const room = NAME_MAX - 'gpustack-cordon-'.length - suffix.length;
  const nodePart = node.length <= room ? node : `${node.slice(0, room - 17).replace(/[-.]+$/, '')}-${fnv1a64Hex(node)}`;
  return `gpustack-cordon-${nodePart}${suffix}`;
}

/** The label selector of the cordon rules of `node` (of one of its cards when `card` is given). */
export function cordonSelector(node: string, card?: Pick<PublishedCard, 'name' | 'driver'>): string {
  const parts = [`${CORDON_LABEL}=true`, `${CORDON_NODE_LABEL}=${nodeLabelValue(node)}`];
  if (card !== undefined) parts.push(`${CORDON_CARD_LABEL}=${card.name}`, `${CORDON_DRIVER_LABEL}=${card.driver}`);
  return parts.join(',');
}

/** A DeviceTaintRule as we create it (strict: we send it). */
export interface CordonRule {
  readonly apiVersion: string;
  readonly kind: 'DeviceTaintRule';
  readonly metadata: {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  };
  readonly spec: {
    readonly deviceSelector: { readonly driver: string; readonly pool: string; readonly device: string };
    readonly taint: { readonly key: string; readonly value?: string; readonly effect: CordonEffect };
  };
}

/**
 * The rules that cordon `card`: one per device it publishes (whole and shared), each selecting
 * its driver, pool and device exactly. `apiVersion` is the version the cluster serves.
 */
export function buildCordonRules(
  card: Pick<PublishedCard, 'name' | 'node' | 'driver' | 'pool' | 'wholeDevice' | 'sharedDevice'>,
  reason: string,
  effect: CordonEffect,
  apiVersion: string,
): CordonRule[] {
  const devices = [card.wholeDevice, card.sharedDevice].filter((d): d is string => d !== undefined).sort();
  const value = taintValue(reason);
  return devices.map((device) => ({
    apiVersion,
    kind: 'DeviceTaintRule',
    metadata: {
      name: cordonRuleName(card.node, card.driver, device),
      labels: {
        [CORDON_LABEL]: 'true',
        [CORDON_NODE_LABEL]: nodeLabelValue(card.node),
        [CORDON_CARD_LABEL]: card.name,
        [CORDON_DRIVER_LABEL]: card.driver,
      },
      annotations: { [CORDON_NODE_ANNOTATION]: card.node, [CORDON_REASON_ANNOTATION]: reason },
    },
    spec: {
      deviceSelector: { driver: card.driver, pool: card.pool, device },
      taint: { key: CORDON_TAINT_KEY, ...(value === undefined ? {} : { value }), effect },
    },
  }));
}
