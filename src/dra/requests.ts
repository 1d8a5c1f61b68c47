/**
 * @module What one pod asks of our cards through claims: each `exactly` request of a
 * ResourceClaimTemplate whose DeviceClass is one of ours (`gpustack-<mfr>`, `gpustack-<aKey>`, and
 * their `-shared` twins) becomes an ask for whole cards or for shares by capacity. Kueue counts
 * only templates and only `exactly` requests; so does this. CEL selectors are not evaluated: an
 * ask matches every card of its class's manufacturer or model. Pure.
 */
import { parseQuantity, type ManufacturerName } from '../k8s/index.js';
import { isManufacturer } from '../contracts/index.js';
import { DEVICE_CLASS_PREFIX, driverName } from './constants.js';
import type { ReceivedResourceClaimTemplate } from './received-resource-objects.js';

/** Which of our cards a DeviceClass name selects. */
export interface DeviceClassTarget {
  readonly mfr: ManufacturerName;
  /** `undefined`: every model of the manufacturer. */
  readonly productKey: string | undefined;
  readonly shared: boolean;
}

/** `gpustack-nvidia-h200-shared` → nvidia, `nvidia-h200`, shared; `undefined` for a class not of ours. */
export function deviceClassTarget(className: string): DeviceClassTarget | undefined {
  if (!className.startsWith(DEVICE_CLASS_PREFIX)) return undefined;
  let rest = className.slice(DEVICE_CLASS_PREFIX.length);
  const shared = rest.endsWith('-shared');
  if (shared) rest = rest.slice(0, -'-shared'.length);
  const mfr = rest.split('-', 1)[0] ?? '';
  if (!isManufacturer(mfr)) return undefined;
  return { mfr, productKey: rest === mfr ? undefined : rest, shared };
}

/** One request of a pod on our cards. */
export interface DeviceAsk {
  /** `<claim>/<request>`, for messages. */
  readonly label: string;
  readonly mfr: ManufacturerName;
  readonly driver: string;
  readonly productKey: string | undefined;
  readonly shared: boolean;
  /** Distinct devices; `all`: every matching card of the node (allocationMode All). */
  readonly count: number | 'all';
  /** Capacity requests by name (bytes for memory); only for shared asks. */
  readonly capacity: Readonly<Record<string, number>>;
}

/** A pod's claim as the PodSpec lists it. */
export interface PodClaimRef {
  readonly name: string;
  readonly resourceClaimName?: string | null | undefined;
  readonly resourceClaimTemplateName?: string | null | undefined;
}

export type DeviceAsksResolution =
  { readonly ok: true; readonly asks: readonly DeviceAsk[] } | { readonly ok: false; readonly message: string };

function capacityRequests(requests: Readonly<Record<string, string | number>> | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, raw] of Object.entries(requests ?? {})) {
    const value = typeof raw === 'number' ? raw : parseQuantity(raw);
    // An unreadable request is asked as the largest amount, so it never reads as fitting.
    out[name] = value !== undefined && Number.isFinite(value) && value >= 0 ? value : Number.MAX_VALUE;
  }
  return out;
}

function asksOfTemplate(claim: string, template: ReceivedResourceClaimTemplate): DeviceAsk[] {
  const asks: DeviceAsk[] = [];
  for (const request of template.spec.spec.devices?.requests ?? []) {
    const exactly = request.exactly;
    if (exactly === undefined) continue;
    const target = deviceClassTarget(exactly.deviceClassName);
    if (target === undefined) continue;
    const count = exactly.allocationMode === 'All' ? 'all' : (exactly.count ?? 1);
    if (count === 0) continue;
    asks.push({
      label: `${claim}/${request.name}`,
      mfr: target.mfr,
      driver: driverName(target.mfr),
      productKey: target.productKey,
      shared: target.shared,
      count,
      capacity: target.shared ? capacityRequests(exactly.capacity?.requests) : {},
    });
  }
  return asks;
}

/**
 * The asks of one pod on our cards, from its `resourceClaims`. A claim by template needs the
 * template (`templateOf`, in the pod's namespace); a missing one is an error to retry on, not an
 * empty ask. A claim by name (`resourceClaimName`) is one claim shared by every pod, allocated
 * once by whichever pod comes first: it is not placed per pod, as Kueue does not count it either.
 */
export function podDeviceAsks(
  claims: readonly PodClaimRef[],
  templateOf: (name: string) => ReceivedResourceClaimTemplate | undefined,
): DeviceAsksResolution {
  const asks: DeviceAsk[] = [];
  for (const claim of claims) {
    const templateName = claim.resourceClaimTemplateName;
    if (templateName === undefined || templateName === null || templateName === '') continue;
    const template = templateOf(templateName);
    if (template === undefined) {
      return {
        ok: false,
        message: `claim "${claim.name}": ResourceClaimTemplate "${templateName}" is not known to the checker`,
      };
    }
    asks.push(...asksOfTemplate(claim.name, template));
  }
  return { ok: true, asks };
}
