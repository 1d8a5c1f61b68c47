/**
 * @module The card: one physical accelerator as it flows from the device addon through the agent
 * into the labels (src/nodefeature) and the ResourceSlices (src/dra). One shape for all of them;
 * each reader takes the fields it needs (`Pick<Card, …>`).
 *
 * native/'s `Device` is this type (imported as a type: native/ loads nothing of src/ at run time)
 * with `uuid` and `cores` always present, so the agent hands detections on without copying them.
 */
import type { ManufacturerName } from '../k8s/index.js';

/**
 * Hardware partitioning of a card. Reported by NVML-shaped libraries only (NVIDIA and T-Head):
 * `enabled` is the current MIG mode (a pending change needs a GPU reset and is not reflected).
 */
export interface CardPartitioning {
  readonly mode: 'mig';
  readonly enabled: boolean;
}

/**
 * Where a card sits in a multi-node NVLink fabric (NVML's GPU fabric info: GB200 NVL72 and the
 * like). Reported by NVIDIA only, and only once the card's registration with the fabric manager
 * completed without error; absent while it is in progress, failed, or the card has no such fabric.
 */
export interface CardFabric {
  /** The fabric's cluster, 8-4-4-4-12 lowercase hex (`7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11`). */
  readonly clusterUuid: string;
  /** The card's NVLink clique within the cluster. */
  readonly cliqueId: number;
}

/**
 * One detected card. The vendor libraries answer what they answer: every reader screens the
 * figures it uses (memory beyond 16 TiB, negative cores, a product with NULs) instead of trusting
 * the types.
 */
export interface Card {
  readonly manufacturer: ManufacturerName;
  /** The vendor library's index (Ascend: logic id); the card's device names (`card-<index>`) come from it. */
  readonly index: number;
  /** Product name as reported, e.g. `NVIDIA H100 80GB HBM3`, `Ascend910B2`. */
  readonly product: string;
  /** Total memory per card in MiB, converted from the vendor's unit. */
  readonly memoryMiB: number;
  /** Vendor UUID (`GPU-…`, `MLU-…`); empty or absent when the library cannot tell. */
  readonly uuid?: string | undefined;
  /** Cores as the vendor counts them (SMs, CUs, AI cores); 0 or absent when unknown. */
  readonly cores?: number | undefined;
  /** `9.0` (NVIDIA, Iluvatar, T-Head) or a gfx target (`gfx942`, AMD and Hygon). */
  readonly computeCapability?: string | undefined;
  /** `Hopper`, `910B`, `MXC`, … */
  readonly family?: string | undefined;
  /** PCI address in sysfs form, `0000:18:00.0`. */
  readonly pciBusId?: string | undefined;
  /** Negative or absent: unknown. */
  readonly numaNode?: number | undefined;
  readonly driverVersion?: string | undefined;
  /** CUDA / ROCm / MACA / HGGC version as major.minor. */
  readonly runtimeVersion?: string | undefined;
  readonly partitioning?: CardPartitioning | undefined;
  readonly fabric?: CardFabric | undefined;
}
