/**
 * @module What a ResourceClaim's allocation gives this node's driver: the kubelet names a claim
 * (namespace, name, uid) and the plugin must prepare exactly the devices the scheduler allocated
 * from our driver's pool on this node. Pure: the caller reads the claim from the API.
 */
import { z } from 'zod';
import { parseQuantity } from '../k8s/index.js';

/**
 * The part of a resource.k8s.io/v1 ResourceClaim the plugin reads to prepare it (loose: we
 * receive it; the ledger reads another part, `ReceivedResourceClaim`).
 */
export const ReceivedClaimToPrepareSchema = z
  .object({
    metadata: z.object({ name: z.string(), namespace: z.string().optional(), uid: z.string() }).loose(),
    status: z
      .object({
        allocation: z
          .object({
            devices: z
              .object({
                results: z
                  .array(
                    z
                      .object({
                        request: z.string(),
                        driver: z.string(),
                        pool: z.string(),
                        device: z.string(),
                        shareID: z.string().optional(),
                        consumedCapacity: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
                      })
                      .loose(),
                  )
                  .optional(),
              })
              .loose()
              .optional(),
          })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type ReceivedClaimToPrepare = z.infer<typeof ReceivedClaimToPrepareSchema>;

/** The claim the kubelet asks about (NodePrepareResources' `Claim`). */
export interface ClaimReference {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** One device of the claim on this node, with what a share or slice consumes of its card. */
export interface AllocatedDevice {
  readonly request: string;
  readonly pool: string;
  readonly device: string;
  /** The card's index (`card-<index>`, `card-<index>-shared`). */
  readonly index: number;
  readonly shared: boolean;
  readonly shareID?: string;
  /** Consumed capacity in plain numbers: memory in bytes, cores in percent, units. */
  readonly consumed?: { readonly memory?: number; readonly cores?: number; readonly units?: number };
}

export type ClaimAllocation =
  { readonly ok: true; readonly devices: readonly AllocatedDevice[] } | { readonly ok: false; readonly error: string };

const DEVICE_NAME = /^card-(0|[1-9][0-9]*)(-shared)?$/;

/** `card-3` → {index 3, whole}; `card-3-shared` → {index 3, shared}; anything else undefined. */
export function parseCardDeviceName(name: string): { index: number; shared: boolean } | undefined {
  const match = DEVICE_NAME.exec(name);
  if (!match) return undefined;
  return { index: Number(match[1]), shared: match[2] !== undefined };
}

function consumedOf(capacity: Record<string, string | number> | undefined): AllocatedDevice['consumed'] {
  if (!capacity) return undefined;
  const read = (key: string): number | undefined => {
    const value = capacity[key];
    if (value === undefined) return undefined;
    return typeof value === 'number' ? value : parseQuantity(value);
  };
  const out: { memory?: number; cores?: number; units?: number } = {};
  const memory = read('memory');
  const cores = read('cores');
  const units = read('units');
  if (memory !== undefined) out.memory = memory;
  if (cores !== undefined) out.cores = cores;
  if (units !== undefined) out.units = units;
  return out;
}

/**
 * The devices `driver` must prepare on `node` for the claim the kubelet named, or why not: the
 * object must be that claim (same uid: a claim deleted and recreated under the same name is
 * another claim), allocated, with at least one result of our driver, all of them in this node's
 * pool and named like the devices we publish.
 */
export function claimAllocationOnNode(
  raw: unknown,
  ref: ClaimReference,
  driver: string,
  node: string,
): ClaimAllocation {
  const what = `ResourceClaim ${ref.namespace}/${ref.name}`;
  const parsed = ReceivedClaimToPrepareSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: `${what}: not a ResourceClaim: ${parsed.error.issues[0]?.message}` };
  const claim = parsed.data;
  if (claim.metadata.uid !== ref.uid)
    return {
      ok: false,
      error: `${what}: uid is ${claim.metadata.uid}, the kubelet asked for ${ref.uid} (the claim was replaced)`,
    };
  const allocation = claim.status?.allocation;
  if (!allocation) return { ok: false, error: `${what} is not allocated` };
  const ours = (allocation.devices?.results ?? []).filter((r) => r.driver === driver);
  if (ours.length === 0) return { ok: false, error: `${what} has no device of driver ${driver}` };
  const elsewhere = ours.filter((r) => r.pool !== node);
  if (elsewhere.length > 0)
    return {
      ok: false,
      error: `${what}: device ${elsewhere[0]?.device} of ${driver} is allocated in pool ${elsewhere[0]?.pool}, not on this node (${node})`,
    };
  const devices: AllocatedDevice[] = [];
  for (const result of ours) {
    const card = parseCardDeviceName(result.device);
    if (!card) return { ok: false, error: `${what}: device ${result.device} is not a device ${driver} publishes` };
    const consumed = consumedOf(result.consumedCapacity);
    devices.push({
      request: result.request,
      pool: result.pool,
      device: result.device,
      index: card.index,
      shared: card.shared,
      ...(result.shareID !== undefined ? { shareID: result.shareID } : {}),
      ...(consumed !== undefined ? { consumed } : {}),
    });
  }
  return { ok: true, devices };
}
