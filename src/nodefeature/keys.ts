/**
 * @module The two pool keys: aKey (`<mfr>-<model>`, a device model) and gKey (the CPU pool:
 * `generic`, or `<vendor>-<cpu model>`). Keys are budgeted so every `<key>.<suffix>` label
 * name part stays within 63 characters.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { ACCELERATOR_KEY_MAX, GENERAL_KEY_MAX, GENERIC_KEY } from './constants.js';
import { isManufacturer } from '../contracts/index.js';
import { normalizeName } from './names.js';

/** Model id used when a product name normalises to nothing (e.g. the bare word `NVIDIA`). */
export const UNKNOWN_MODEL = 'unknown';

/**
 * aKey of a device model.
 * @example constructAcceleratorKey('nvidia', 'NVIDIA H100 80GB HBM3') // 'nvidia-h100-80gb-hbm3'
 * @example constructAcceleratorKey('ascend', 'Ascend910B2') // 'ascend-910b2'
 */
export function constructAcceleratorKey(mfr: ManufacturerName, product: string, memorySuffix?: string): string {
  const suffix = memorySuffix ? `-${memorySuffix}` : '';
  const budget = ACCELERATOR_KEY_MAX - mfr.length - 1 - suffix.length;
  const id = normalizeName(product, { prefix: mfr, maxLength: budget }) || UNKNOWN_MODEL;
  return `${mfr}-${id}${suffix}`;
}

/** The manufacturer an aKey belongs to (text before the first `-`), if it is one of the nine. */
export function acceleratorKeyManufacturer(aKey: string): ManufacturerName | undefined {
  const dash = aKey.indexOf('-');
  if (dash <= 0) return undefined;
  const mfr = aKey.slice(0, dash);
  return isManufacturer(mfr) ? mfr : undefined;
}

export interface CpuIdentity {
  /** NFD `cpu-model.vendor_id` (`Intel`, `AMD`, …); `undefined` when NFD has not labelled the node. */
  readonly vendor?: string | undefined;
  /** Annotation `feature.gpustack.ai/cpu-name`; values starting with `@` are unresolved templates. */
  readonly cpuName?: string | undefined;
  readonly family?: string | undefined;
  readonly model?: string | undefined;
}

/** Vendor words that say "no vendor": cpuid's `VendorUnknown` and a bare `unknown`. */
const UNKNOWN_VENDORS: ReadonlySet<string> = new Set(['vendorunknown', 'unknown']);

/**
 * The vendor word of a gKey: the vendor label normalised with separators removed; `generic` when
 * there is none to use — no label, an empty one, `VendorUnknown`/`Unknown`, or one with nothing
 * nameable in it. An unknown vendor still splits pools by CPU model (`generic-kunpeng-920`).
 */
function generalVendorWord(vendor: string | undefined): string {
  const word = normalizeName(vendor ?? '', { maxLength: GENERAL_KEY_MAX }).replace(/[-_.]/g, '');
  return word === '' || UNKNOWN_VENDORS.has(word) ? GENERIC_KEY : word;
}

/**
 * gKey with `generalKey: CPUModel`: `<vendor>-<normalised cpu name>`, falling back to
 * `<vendor>-<family>-<model>`, then `<vendor>`. A vendor that cannot be named (absent, empty,
 * `VendorUnknown`, `Unknown`) is the word `generic`, so an arm64 Kunpeng host whose NFD vendor is
 * `VendorUnknown` keys as `generic-kunpeng-920` (the modelled system's own vector).
 * @example constructGeneralKey({ vendor: 'AMD', cpuName: 'AMD EPYC 7763 64-Core Processor' }) // 'amd-epyc-7763'
 * @example constructGeneralKey({ vendor: 'VendorUnknown', cpuName: 'Kunpeng 920' }) // 'generic-kunpeng-920'
 */
export function constructGeneralKey(cpu: CpuIdentity): string {
  const manu = generalVendorWord(cpu.vendor);
  const budget = GENERAL_KEY_MAX - manu.length - 1;
  if (budget <= 0) return manu;
  const cpuName = cpu.cpuName?.startsWith('@') ? undefined : cpu.cpuName;
  let id = '';
  if (cpuName) id = normalizeName(cpuName, { prefix: manu, maxLength: budget, stripCpuCruft: true });
  else if (cpu.family && cpu.model) id = normalizeName(`${cpu.family}-${cpu.model}`, { maxLength: budget });
  return id ? `${manu}-${id}` : manu;
}

/** The general-key manufacturer: gKey up to the first `-` (`amd-epyc-7763` → `amd`). */
export function generalKeyManufacturer(gKey: string): string {
  const dash = gKey.indexOf('-');
  return dash === -1 ? gKey : gKey.slice(0, dash);
}
