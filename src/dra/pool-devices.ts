/**
 * @module The InstanceType's view of the ledger: its pool's cards published, allocated whole, in
 * use by shares, free whole, cordoned and unhealthy, and the cordoned ones per ResourceFlavor. The
 * admission checker, which holds the ledger, counts them per InstanceType and writes them as an
 * annotation on it; the instance-type hook copies the counts into `status.devices` and takes each
 * flavor's cordoned cards off its quota (docs/operations.md#cordon-a-card). Pure.
 */
import { z } from 'zod';
import { InstanceTypeDevicesSchema, type InstanceTypeDevices, type Node } from '../k8s/index.js';
import { ACCELERATABLE_PREFIX, parseCount } from '../nodefeature/index.js';
import { isFreeWhole, type DeviceLedger } from './ledger.js';

/**
 * On the InstanceType, written by the checker:
 * `{"published":16,"allocated":5,"shared":1,"free":9,"cordoned":1,"unhealthy":0,"cordonedByFlavor":{"<flavor>":1}}`.
 */
export const DEVICES_ANNOTATION = 'worker.gpustack.ai/devices';

/** The annotation: the counts, and the cordoned cards per flavor (only flavors with one). */
export const PoolDevicesSchema = InstanceTypeDevicesSchema.extend({
  cordonedByFlavor: z.record(z.string(), z.number().int().positive()).optional(),
});
export type PoolDevices = z.infer<typeof PoolDevicesSchema>;

/**
 * The cards of model `productKey` on `nodes` (the pool's nodes), as the ledger counts them.
 * `flavorOf` names the pool's flavor a node is in (its cordoned cards are counted there); a node
 * in none still counts as cordoned in the totals.
 */
export function poolDevices(
  ledger: DeviceLedger,
  nodes: Iterable<string>,
  productKey: string,
  flavorOf: (node: string) => string | undefined = () => undefined,
): PoolDevices {
  const out = { published: 0, allocated: 0, shared: 0, free: 0, cordoned: 0, unhealthy: 0 };
  const byFlavor: Record<string, number> = {};
  for (const node of nodes) {
    for (const card of ledger.cards(node)) {
      if (card.productKey !== productKey) continue;
      const use = ledger.use(card);
      const health = ledger.health(card);
      out.published++;
      if (use.wholeAllocated) out.allocated++;
      else if (use.shares > 0) out.shared++;
      if (isFreeWhole(card, use, health)) out.free++;
      if (health.unhealthy) out.unhealthy++;
      if (!health.cordoned) continue;
      out.cordoned++;
      const flavor = flavorOf(node);
      if (flavor !== undefined) byFlavor[flavor] = (byFlavor[flavor] ?? 0) + 1;
    }
  }
  const flavors = Object.keys(byFlavor).sort();
  return flavors.length === 0
    ? out
    : { ...out, cordonedByFlavor: Object.fromEntries(flavors.map((f) => [f, byFlavor[f] as number])) };
}

/**
 * Cards of model `productKey` on `nodes` that the vendor's device plugin owns
 * (docs/architecture.md#device-owner): on a node `ownedByDevicePlugin` says so and where the
 * ledger has none of that model (a node still handing its cards over publishes them, and counts
 * as DRA's until it is done), the node's `<aKey>.count` label.
 */
export function devicePluginCards(
  ledger: DeviceLedger,
  nodes: Iterable<Node>,
  productKey: string,
  ownedByDevicePlugin: (node: Node) => boolean,
): number {
  let cards = 0;
  for (const node of nodes) {
    if (!ownedByDevicePlugin(node)) continue;
    if (ledger.cards(node.metadata.name).some((card) => card.productKey === productKey)) continue;
    cards += parseCount(node.metadata.labels?.[`${ACCELERATABLE_PREFIX}${productKey}.count`]) ?? 0;
  }
  return cards;
}

/** The annotation's text: keys in a fixed order, so an unchanged count is an unchanged string. */
export function formatPoolDevices(devices: PoolDevices): string {
  const { published, allocated, shared, free, cordoned, unhealthy, devicePlugin, cordonedByFlavor } = devices;
  return JSON.stringify({
    published,
    allocated,
    shared,
    free,
    cordoned,
    unhealthy,
    ...(devicePlugin ? { devicePlugin } : {}),
    cordonedByFlavor,
  });
}

/** The annotation read back; `undefined` when absent or not what the checker writes (never a throw). */
export function readPoolDevices(text: string | undefined): PoolDevices | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = PoolDevicesSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The counts `status.devices` shows: the annotation without the per-flavor part. */
export function statusDevices(devices: PoolDevices): InstanceTypeDevices {
  const { cordonedByFlavor, ...counts } = devices;
  void cordonedByFlavor;
  return counts;
}
