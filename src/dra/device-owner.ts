/**
 * @module One owner per card (docs/architecture.md#device-owner): on each node, a manufacturer's cards are handed
 * out either by the vendor's device plugin (the Node advertises `<base>`, e.g. `nvidia.com/gpu`)
 * or by DRA through our ResourceSlices, never by both. The rule is the kube-scheduler's own for a
 * DeviceClass that maps `<base>` as its extended resource (KEP-5004, `filterExtendedResources`):
 * a node whose allocatable holds `<base>` above zero is served by its device plugin, any other by
 * DRA. The settings may force either side per manufacturer (`spec.deviceOwners`). A change of
 * owner waits while the side giving the cards up still holds one on the node. Pure.
 */
import { z } from 'zod';
import { PodSchema, parseQuantity, type DeviceOwnerSetting, type ManufacturerName } from '../k8s/index.js';
import { SYSTEM_DOMAIN } from '../nodefeature/index.js';
import type { DeviceTaint } from './device-health.js';
import { driverName } from './constants.js';

/**
 * Who owns a manufacturer's cards on a node: `DRA` or `DevicePlugin`. The names around it:
 * `DeviceOwnerSetting` is what the settings say (these two or `Auto`), `OwnerWish` what the settings
 * and the Node want, `OwnerDecision` what the agent decided (owner, wish, and why a change waits),
 * `OwnerDecisions` those per manufacturer, and the agent's `OwnerDecider` makes them.
 */
export type DeviceOwner = Exclude<DeviceOwnerSetting, 'Auto'>;

/** Devices of a card DRA is handing over to the device plugin: no new claim lands on them. */
export const OWNER_TAINT_KEY = `${SYSTEM_DOMAIN}/device-owner`;
export const OWNER_TAINT: DeviceTaint = { key: OWNER_TAINT_KEY, value: 'DevicePlugin', effect: 'NoSchedule' };

/** Who should own the cards, from the settings and the Node alone, and why. */
export interface OwnerWish {
  readonly owner: DeviceOwner;
  readonly reason: string;
}

/** The decision for one manufacturer on one node, as the agent logs it and `detect -o json` prints it. */
export interface OwnerDecision {
  /** Who hands out the cards now: `DRA` publishes them in ResourceSlices, `DevicePlugin` withholds them. */
  readonly owner: DeviceOwner;
  /** Who the settings and the Node say should (differs from `owner` only while `pending`). */
  readonly wanted: DeviceOwner;
  readonly setting: DeviceOwnerSetting;
  readonly resource: string;
  readonly reason: string;
  /** Why the change to `wanted` waits: the side giving the cards up still holds some. */
  readonly pending?: string;
}

/** What still holds cards of the manufacturer on the node, counted only when a change depends on it. */
export interface CardHolders {
  /** ResourceClaims with one of our devices of this node allocated. */
  readonly claims: number;
  /** Pods bound to the node that ask for `<base>` served by the device plugin (not through DRA). */
  readonly devicePluginPods: number;
}

/** `allocatable[resource]` as a number; 0 when absent or unreadable. */
export function advertised(allocatable: Readonly<Record<string, unknown>> | undefined, resource: string): number {
  if (allocatable === undefined || !Object.hasOwn(allocatable, resource)) return 0;
  const raw = allocatable[resource];
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseQuantity(raw) : undefined;
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/**
 * The owner the settings and the Node's `status.allocatable` ask for. A device plugin that is
 * gone leaves `<base>: 0` behind in the Node's status; the scheduler then serves `<base>` through
 * DRA, and so do we.
 * @example wantedOwner('Auto', 'nvidia.com/gpu', { 'nvidia.com/gpu': '4' })
 * // { owner: 'DevicePlugin', reason: 'the node advertises nvidia.com/gpu: 4 (a device plugin serves it)' }
 */
export function wantedOwner(
  setting: DeviceOwnerSetting,
  resource: string,
  allocatable: Readonly<Record<string, unknown>> | undefined,
): OwnerWish {
  if (setting !== 'Auto') return { owner: setting, reason: `deviceOwners sets ${setting} in the settings` };
  const count = advertised(allocatable, resource);
  return count > 0
    ? { owner: 'DevicePlugin', reason: `the node advertises ${resource}: ${count} (a device plugin serves it)` }
    : { owner: 'DRA', reason: `the node does not advertise ${resource} (no device plugin serves it)` };
}

/**
 * The owner now: the wish, unless the other side still holds cards on the node; then that side
 * stays the owner and `pending` says why.
 * @example decideOwnership('Auto', 'nvidia.com/gpu', wish, { claims: 2, devicePluginPods: 0 }).pending
 * // '2 ResourceClaims hold cards here; DRA hands the cards to the device plugin once they are released'
 */
export function decideOwnership(
  setting: DeviceOwnerSetting,
  resource: string,
  wish: OwnerWish,
  holders: CardHolders,
): OwnerDecision {
  const base = { wanted: wish.owner, setting, resource, reason: wish.reason };
  if (wish.owner === 'DevicePlugin' && holders.claims > 0) {
    const claims = `${holders.claims} ResourceClaim${holders.claims === 1 ? ' holds' : 's hold'} cards here`;
    return {
      ...base,
      owner: 'DRA',
      pending: `${claims}; DRA hands the cards to the device plugin once they are released`,
    };
  }
  if (wish.owner === 'DRA' && holders.devicePluginPods > 0) {
    const pods = `${holders.devicePluginPods} Pod${holders.devicePluginPods === 1 ? '' : 's'} hold${holders.devicePluginPods === 1 ? 's' : ''} cards of the device plugin here`;
    return { ...base, owner: 'DevicePlugin', pending: `${pods}; DRA takes the cards once they end` };
  }
  return { ...base, owner: wish.owner };
}

/** Loose: what the agent reads of a listed ResourceClaim. */
const HeldClaimSchema = z.looseObject({
  status: z
    .looseObject({
      allocation: z
        .looseObject({
          devices: z
            .looseObject({
              results: z.array(z.looseObject({ driver: z.string(), pool: z.string() })).nullish(),
            })
            .nullish(),
        })
        .nullish(),
    })
    .nullish(),
});

/** How many of `claims` hold a device of `mfr`'s driver in the pool of `node` (our pools are named after the node). */
export function claimsHoldingCards(claims: Iterable<unknown>, mfr: ManufacturerName, node: string): number {
  const driver = driverName(mfr);
  let count = 0;
  for (const item of claims) {
    const parsed = HeldClaimSchema.safeParse(item);
    const results = parsed.success ? (parsed.data.status?.allocation?.devices?.results ?? []) : [];
    if (results.some((r) => r.driver === driver && r.pool === node)) count++;
  }
  return count;
}

/**
 * Whether a Pod holds cards of `resource` from the device plugin: it is not finished, one of its
 * containers asks for the resource, and the scheduler did not serve that resource through DRA
 * (`status.extendedResourceClaimStatus` maps it: its cards are in a ResourceClaim).
 */
export function holdsDevicePluginCards(pod: unknown, resource: string): boolean {
  const parsed = PodSchema.safeParse(pod);
  if (!parsed.success) return false;
  const { spec, status } = parsed.data;
  if (status?.phase === 'Succeeded' || status?.phase === 'Failed') return false;
  if (servedThroughDra(status?.extendedResourceClaimStatus?.requestMappings, resource)) return false;
  const containers = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])];
  return containers.some(
    (c) =>
      advertised(c.resources?.requests ?? undefined, resource) > 0 ||
      advertised(c.resources?.limits ?? undefined, resource) > 0,
  );
}

/** True when the scheduler's extended-resource claim of a Pod covers `resource`. */
export function servedThroughDra(
  mappings: readonly { readonly resourceName: string }[] | null | undefined,
  resource: string,
): boolean {
  return (mappings ?? []).some((m) => m.resourceName === resource);
}
