import type { Card, CardFabric, CardPartitioning } from '../src/contracts/index.js';
import type { ManufacturerName } from '../src/k8s/index.js';

export type { ManufacturerName };

/**
 * The manufacturers the addon detects, sorted: detect() results come in this order. The names and
 * their type are src/k8s's `MANUFACTURER_NAMES`: native/ imports nothing of src/ at run time (the
 * detect child loads no schema library), so the compiler checks this list against that type both
 * ways instead: a name missing here or unknown there does not compile.
 */
export const ADDON_MANUFACTURERS = [
  'amd',
  'ascend',
  'cambricon',
  'hygon',
  'iluvatar',
  'metax',
  'mthreads',
  'nvidia',
  'thead',
] as const satisfies readonly ManufacturerName[];

/** `true` only when every manufacturer of src/k8s is in ADDON_MANUFACTURERS. */
export const ADDON_KNOWS_EVERY_MANUFACTURER: [Exclude<ManufacturerName, (typeof ADDON_MANUFACTURERS)[number]>] extends [
  never,
]
  ? true
  : never = true;

/**
 * Why a manufacturer (or one of its devices) could not be enumerated.
 * `LibraryNotFound` is the normal answer on a node without that vendor's driver.
 * `InvalidLibrary`: the file is there but is no loadable shared object of this process
 * (truncated, empty, not ELF, another architecture, a directory or socket, an absurd memory
 * size); it is refused before it is loaded, because the loader would crash the process on a
 * truncated one. detectIsolated() also reports it for a library that killed its child process
 * (a full-length file with garbage inside).
 */
export const DEVICE_ERROR_CODES = [
  'LibraryNotFound',
  'InvalidLibrary',
  'SymbolNotFound',
  'InitFailed',
  'DriverMismatch',
  'CallFailed',
] as const;

export type DeviceErrorCode = (typeof DEVICE_ERROR_CODES)[number];

/** Hardware partitioning of a card: src/contracts's `CardPartitioning`. */
export type Partitioning = CardPartitioning;

/** A card's NVLink cluster and clique (NVIDIA, from NVML's GPU fabric info): src/contracts's `CardFabric`. */
export type Fabric = CardFabric;

/**
 * One physical accelerator as its vendor library reports it: src/contracts's `Card` (one shape
 * for the addon, the labels and the ResourceSlices), where the addon always says `uuid` (empty when
 * the library cannot tell) and `cores` (0 when unknown).
 */
export type Device = Card & { readonly uuid: string; readonly cores: number };

/** A failure entry: the manufacturer's detection (or one device) that did not work. */
export interface DeviceErrorEntry {
  readonly manufacturer: ManufacturerName;
  readonly code: DeviceErrorCode;
  readonly message: string;
}

export interface DetectResult {
  /** Ordered by manufacturer, then index. */
  readonly devices: readonly Device[];
  readonly errors: readonly DeviceErrorEntry[];
}

export interface DetectOptions {
  /**
   * Manufacturers to enumerate.
   * @default ADDON_MANUFACTURERS (all nine)
   */
  readonly manufacturers?: readonly ManufacturerName[] | undefined;
  /**
   * Where the host's filesystem is mounted, e.g. `/host` in the agent's DaemonSet. Each
   * vendor library is then looked up by full path in its usual install folders and the
   * system library folders under it, symlinks resolved inside it; the loader's own search
   * path is not used, and this process's search path is never changed. The install-root
   * variables (`ROCM_PATH`, `NEUWARE_HOME`, …) name host folders and are looked up under it
   * too; `GPUSTACK_<MFR>_LIBRARY` is a path in this process's own filesystem and is not.
   * @default '' (this process's own root, and the loader's search as a last resort)
   */
  readonly hostRoot?: string;
}
