/**
 * @module Reading a Node's labels back into pool facts (stage 4 reads what stages 2 and 3 wrote).
 * Garbage never throws: it becomes a `NodeProblem` with a CamelCase reason the chain reports.
 */
import { parseQuantityExact, type ManufacturerName } from '../k8s/index.js';
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ACCELERATOR_KEY_MAX,
  ARCH_LABEL,
  CPU_NAME_ANNOTATION,
  GENERAL_KEY_MAX,
  GENERAL_PREFIX,
  OS_LABEL,
} from './constants.js';
import { acceleratorKeyManufacturer } from './keys.js';
import { canonicalMemory, readMemoryLabel } from './memory.js';

export type NodeProblemReason =
  | 'InvalidOsArch'
  | 'MissingGeneralKey'
  | 'AmbiguousGeneralKey'
  | 'InvalidCpuCount'
  | 'InvalidDeviceCount'
  | 'InvalidDeviceMemory'
  | 'KeyTooLong'
  | 'UnreadableTopology';

export interface NodeProblem {
  readonly reason: NodeProblemReason;
  readonly message: string;
}

export interface AcceleratorFacts {
  readonly key: string;
  readonly manufacturer: ManufacturerName;
  readonly count: number;
  /** The `.memory` label in Kubernetes' canonical form (`80Gi`; `24G` → `22888Mi`); absent when `0` (unknown). */
  readonly memory?: string;
  /** MiB of one card, rounded down; absent when the memory is unknown. */
  readonly memoryMiB?: number;
  readonly product?: string;
  readonly cores?: string;
  readonly family?: string;
}

export interface GeneralFacts {
  readonly key: string;
  readonly cores: number;
  readonly cpuName?: string;
}

export interface NodeFacts {
  readonly name: string;
  readonly os?: string;
  readonly arch?: string;
  readonly general?: GeneralFacts;
  readonly generalProblem?: NodeProblem;
  readonly accelerators: readonly AcceleratorFacts[];
  /** True when the node has any accelerator, valid or not: such a node is never CPU-only. */
  readonly acceleratable: boolean;
  /** Labels that keep the node out of a pool. */
  readonly problems: readonly NodeProblem[];
  /**
   * Labels that cannot be read but keep nothing out of a pool: a `.memory` that is garbage, negative,
   * ambiguous or missing makes the model a card of unknown memory. Skipping the model instead
   * would leave a flavor selecting a node its capacity does not count (the flavor pins only the
   * key and `.count`), and the modelled system pools such cards too.
   */
  readonly warnings: readonly NodeProblem[];
}

export interface NodeLabelsInput {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  /** `status.capacity.cpu`, only to say why a node has no CPU count. */
  readonly cpuCapacity?: string | number | undefined;
}

/**
 * The largest count of cards or cores we pool (int32, the range Kubernetes and Kueue keep counts
 * in): a virtual node reporting 10,000,000 CPUs pools; a count beyond this does not.
 */
export const MAX_COUNT = 2_147_483_647;
const COUNT_PATTERN = /^[1-9]\d{0,15}$/;
const OS_ARCH_PATTERN = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

/** A label value in a message: quoted, or `(unset)`. */
function shown(value: string | undefined): string {
  return value === undefined ? '(unset)' : JSON.stringify(value);
}

/**
 * Parses a count exactly as we write it: a positive whole number, no sign, no leading zero, at most
 * `max` (`MAX_COUNT`; a flavor's `.capacity` — nodes × count — passes a larger one).
 */
export function parseCount(text: string | undefined, max: number = MAX_COUNT): number | undefined {
  if (text === undefined || !COUNT_PATTERN.test(text)) return undefined;
  const value = Number(text);
  return value <= max && Number.isSafeInteger(value) ? value : undefined;
}

export type CountReading = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly why: string };

/**
 * Reads a count label another tool may have written (`.count`), with Kubernetes quantity
 * semantics for the message. Only the form we write pools: a flavor pins `<key>.count` to the exact
 * value, so a node labelled `08` or `+8` would be counted but never selected. Those are refused
 * with a reason that says how they read.
 * @example readCount('8') // { ok: true, value: 8 }
 * @example readCount('08') // { ok: false, why: 'reads as 8, but …' }
 */
export function readCount(text: string | undefined): CountReading {
  const value = parseCount(text);
  if (value !== undefined) return { ok: true, value };
  const quantity = text === undefined ? undefined : parseQuantityExact(text);
  if (quantity === undefined || quantity.numerator <= 0n) return { ok: false, why: 'is not a positive whole number' };
  if (quantity.numerator % quantity.denominator !== 0n) return { ok: false, why: 'is not a whole number' };
  const whole = quantity.numerator / quantity.denominator;
  if (whole > BigInt(MAX_COUNT)) return { ok: false, why: `is more than ${MAX_COUNT}` };
  return {
    ok: false,
    why: `reads as ${whole}, but a flavor selects its nodes by the exact value "${whole}", which this label does not have`,
  };
}

/**
 * Whole cores of a `status.capacity.cpu` quantity, rounded up (`3500m` → 4), as node-profile writes
 * them to `general.feature.gpustack.ai/<gKey>.count`; or why there are none.
 */
export function readCpuCores(capacity: string | number | undefined): CountReading {
  if (capacity === undefined) return { ok: false, why: 'is not set' };
  const quantity = parseQuantityExact(String(capacity));
  if (quantity === undefined || quantity.numerator <= 0n) return { ok: false, why: 'is not a positive quantity' };
  const cores = (quantity.numerator + quantity.denominator - 1n) / quantity.denominator;
  if (cores > BigInt(MAX_COUNT)) return { ok: false, why: `is more than ${MAX_COUNT} cores` };
  return { ok: true, value: Number(cores) };
}

interface FeatureKeys {
  readonly accelerators: string[];
  readonly general: string[];
}

const NO_MANUFACTURERS: ReadonlySet<ManufacturerName> = new Set();

/**
 * The aKeys and gKeys of a node in one pass over its labels: a real node carries ~100 NFD labels,
 * and the chain reads every managed node on every sync (Object.keys, not entries: no pair per label).
 */
function scanFeatureKeys(
  labels: Readonly<Record<string, string>>,
  enabled: ReadonlySet<ManufacturerName>,
): FeatureKeys {
  const accelerators: string[] = [];
  const general: string[] = [];
  for (const label of Object.keys(labels)) {
    if (label.startsWith(ACCELERATABLE_PREFIX)) {
      if (labels[label] !== 'true') continue;
      const key = label.slice(ACCELERATABLE_PREFIX.length);
      const mfr = acceleratorKeyManufacturer(key);
      if (mfr !== undefined && enabled.has(mfr)) accelerators.push(key);
    } else if (label.startsWith(GENERAL_PREFIX)) {
      if (labels[label] === 'true' && labels[`${label}.count`] !== undefined)
        general.push(label.slice(GENERAL_PREFIX.length));
    }
  }
  return { accelerators: accelerators.sort(), general: general.sort() };
}

/**
 * Every aKey on a node: keys under `acceleratable.feature.gpustack.ai/` whose value is `true` and
 * whose name is `<enabled manufacturer>-<model>` (so `…/nvidia=true` is not one).
 */
export function extractAcceleratorKeys(
  labels: Readonly<Record<string, string>>,
  enabled: ReadonlySet<ManufacturerName>,
): string[] {
  return scanFeatureKeys(labels, enabled).accelerators;
}

/** The gKey(s) on a node: `general.feature.gpustack.ai/<gKey>=true` with a `.count` beside it. */
export function extractGeneralKeys(labels: Readonly<Record<string, string>>): string[] {
  return scanFeatureKeys(labels, NO_MANUFACTURERS).general;
}

function extractGeneral(
  node: NodeLabelsInput,
  labels: Readonly<Record<string, string>>,
  keys: readonly string[],
): Pick<NodeFacts, 'general' | 'generalProblem'> {
  const [key] = keys;
  const cores = readCpuCores(node.cpuCapacity);
  if (key === undefined && node.cpuCapacity !== undefined && !cores.ok) {
    return {
      generalProblem: {
        reason: 'InvalidCpuCount',
        message:
          `status.capacity.cpu=${shown(String(node.cpuCapacity))} ` +
          `${cores.why}, so node-profile writes no ${GENERAL_PREFIX}<key>.count`,
      },
    };
  }
  if (key === undefined) {
    return {
      generalProblem: {
        reason: 'MissingGeneralKey',
        message:
          `no ${GENERAL_PREFIX}<key>=true label with a .count (node-profile ` +
          `has not labelled the node, or its CPU labels are unusable)`,
      },
    };
  }
  if (keys.length > 1) {
    return { generalProblem: { reason: 'AmbiguousGeneralKey', message: `several general keys: ${keys.join(', ')}` } };
  }
  // A key written by someone else may be longer than our budget; its flavor labels would be invalid.
  if (key.length > GENERAL_KEY_MAX) {
    return {
      generalProblem: {
        reason: 'KeyTooLong',
        message: `general key ${key} is longer than ${GENERAL_KEY_MAX} characters`,
      },
    };
  }
  const countLabel = `${GENERAL_PREFIX}${key}.count`;
  const count = readCount(labels[countLabel]);
  if (!count.ok) {
    return {
      generalProblem: {
        reason: 'InvalidCpuCount',
        message: `${countLabel}=${shown(labels[countLabel])} ${count.why}`,
      },
    };
  }
  const cpuName = node.annotations?.[CPU_NAME_ANNOTATION];
  return { general: { key, cores: count.value, ...(cpuName && !cpuName.startsWith('@') ? { cpuName } : {}) } };
}

interface AcceleratorReading {
  readonly facts: AcceleratorFacts;
  readonly warning?: NodeProblem;
}

function extractAccelerator(key: string, labels: Readonly<Record<string, string>>): AcceleratorReading | NodeProblem {
  const label = `${ACCELERATABLE_PREFIX}${key}`;
  if (key.length > ACCELERATOR_KEY_MAX) {
    return { reason: 'KeyTooLong', message: `accelerator key ${key} is longer than ${ACCELERATOR_KEY_MAX} characters` };
  }
  const count = readCount(labels[`${label}.count`]);
  if (!count.ok) {
    return { reason: 'InvalidDeviceCount', message: `${label}.count=${shown(labels[`${label}.count`])} ${count.why}` };
  }
  const memory = readMemoryLabel(labels[`${label}.memory`]);
  const mib = memory.ok ? memory.mib : 0;
  const optional = (suffix: string): string | undefined => labels[`${label}.${suffix}`] || undefined;
  const mfr = acceleratorKeyManufacturer(key) as ManufacturerName;
  const product = optional('product');
  const cores = optional('cores');
  const family = optional('family');
  const facts: AcceleratorFacts = {
    key,
    manufacturer: mfr,
    count: count.value,
    ...(mib > 0 ? { memory: canonicalMemory(mib), memoryMiB: mib } : {}),
    ...(product ? { product } : {}),
    ...(cores ? { cores } : {}),
    ...(family ? { family } : {}),
  };
  if (memory.ok) return { facts };
  const shownMemory = shown(labels[`${label}.memory`]);
  return {
    facts,
    warning: {
      reason: 'InvalidDeviceMemory',
      message: `${label}.memory=${shownMemory} ${memory.why}; its cards are pooled with an unknown memory`,
    },
  };
}

/**
 * Reads os/arch, the general key and every accelerator of a node. Problems are collected, not
 * thrown: the chain skips the affected pool membership and reports the reason; warnings name
 * labels it could not read but pooled around.
 */
export function extractNodeFacts(node: NodeLabelsInput, enabled: ReadonlySet<ManufacturerName>): NodeFacts {
  const labels = node.labels ?? {};
  const os = labels[OS_LABEL];
  const arch = labels[ARCH_LABEL];
  const problems: NodeProblem[] = [];
  const warnings: NodeProblem[] = [];
  const accelerators: AcceleratorFacts[] = [];
  const { accelerators: keys, general: generalKeys } = scanFeatureKeys(labels, enabled);
  for (const key of keys) {
    const reading = extractAccelerator(key, labels);
    if ('reason' in reading) problems.push(reading);
    else {
      accelerators.push(reading.facts);
      if (reading.warning) warnings.push(reading.warning);
    }
  }
  const acceleratable = keys.length > 0 || labels[ACCELERATABLE_LABEL] === 'true';
  const general = extractGeneral(node, labels, generalKeys);
  if (os === undefined || arch === undefined || !OS_ARCH_PATTERN.test(os) || !OS_ARCH_PATTERN.test(arch)) {
    problems.unshift({
      reason: 'InvalidOsArch',
      message: `${OS_LABEL}=${shown(os)} and ${ARCH_LABEL}=${shown(arch)} must both be set to lower-case names`,
    });
    return { name: node.name, accelerators: [], acceleratable, problems, warnings: [], ...general };
  }
  return { name: node.name, os, arch, accelerators, acceleratable, problems, warnings, ...general };
}
