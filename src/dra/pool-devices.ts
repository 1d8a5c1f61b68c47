/**
 * @module The InstanceType's view of the ledger: its pool's cards published,
 * allocated whole, in use by shares and free whole. The admission checker, which holds the
 * ledger, counts them per InstanceType and writes them as an annotation on it; the instance-type
 * hook copies the annotation into `status.devices`. Pure.
 */
import { InstanceTypeDevicesSchema, type InstanceTypeDevices, type Node } from '../k8s/index.js';
import { ACCELERATABLE_PREFIX, parseCount } from '../nodefeature/index.js';
import { isFreeWhole, type DeviceLedger } from './ledger.js';

/** On the InstanceType: `{"published":16,"allocated":5,"shared":1,"free":10}`, written by the checker. */
export const DEVICES_ANNOTATION = 'worker.gpustack.ai/devices';

/** The cards of model `productKey` on `nodes` (the pool's nodes), as the ledger counts them. */
export function poolDevices(ledger: DeviceLedger, nodes: Iterable<string>, productKey: string): InstanceTypeDevices {
  const out = { published: 0, allocated: 0, shared: 0, free: 0 };
  for (const node of nodes) {
    for (const card of ledger.cards(node)) {
      if (card.productKey !== productKey) continue;
      const use = ledger.use(card);
      out.published++;
      if (use.wholeAllocated) out.allocated++;
      else if (use.shares > 0) out.shared++;
      if (isFreeWhole(card, use)) out.free++;
    }
  }
  return out;
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
export function formatPoolDevices(devices: InstanceTypeDevices): string {
  const { published, allocated, shared, free, devicePlugin } = devices;
  return JSON.stringify({ published, allocated, shared, free, ...(devicePlugin ? { devicePlugin } : {}) });
}

/** The annotation read back; `undefined` when absent or not what the checker writes (never a throw). */
export function readPoolDevices(text: string | undefined): InstanceTypeDevices | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = InstanceTypeDevicesSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
