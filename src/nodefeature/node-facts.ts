/**
 * @module Reading a Node's labels back into pool facts (stage 4 reads what stages 2 and 3 wrote).
 * Garbage never throws: it becomes a `NodeProblem` with a CamelCase reason the chain reports.
 */
import type { ManufacturerName } from '../k8s/index.js';
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
import { parseMemoryLabel } from './memory.js';

export type NodeProblemReason =
  | 'InvalidOsArch'
  | 'MissingGeneralKey'
  | 'AmbiguousGeneralKey'
  | 'InvalidCpuCount'
  | 'InvalidDeviceCount'
  | 'InvalidDeviceMemory'
  | 'KeyTooLong';

export interface NodeProblem {
  readonly reason: NodeProblemReason;
  readonly message: string;
}

export interface AcceleratorFacts {
  readonly key: string;
  readonly manufacturer: ManufacturerName;
  readonly count: number;
  /** The `.memory` label as written (`80Gi`). */
  readonly memory: string;
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
  readonly problems: readonly NodeProblem[];
}

export interface NodeLabelsInput {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}

const COUNT_PATTERN = /^[1-9]\d{0,5}$/;
const OS_ARCH_PATTERN = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

/** A label value in a message: quoted, or `(unset)`. */
function shown(value: string | undefined): string {
  return value === undefined ? '(unset)' : JSON.stringify(value);
}

/** Parses a positive whole count label (`"8"`), rejecting `"abc"`, `"0"`, `"-1"`, `"1e3"`. */
export function parseCount(text: string | undefined): number | undefined {
  return text !== undefined && COUNT_PATTERN.test(text) ? Number(text) : undefined;
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
  if (key === undefined) {
    return {
      generalProblem: {
        reason: 'MissingGeneralKey',
        message: `no ${GENERAL_PREFIX}<key>=true label with a .count (node-profile has not labelled the node, or its CPU labels are unusable)`,
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
  const cores = parseCount(labels[countLabel]);
  if (cores === undefined) {
    return {
      generalProblem: {
        reason: 'InvalidCpuCount',
        message: `${countLabel}=${shown(labels[countLabel])} is not a positive whole number`,
      },
    };
  }
  const cpuName = node.annotations?.[CPU_NAME_ANNOTATION];
  return { general: { key, cores, ...(cpuName && !cpuName.startsWith('@') ? { cpuName } : {}) } };
}

function extractAccelerator(key: string, labels: Readonly<Record<string, string>>): AcceleratorFacts | NodeProblem {
  const label = `${ACCELERATABLE_PREFIX}${key}`;
  if (key.length > ACCELERATOR_KEY_MAX) {
    return { reason: 'KeyTooLong', message: `accelerator key ${key} is longer than ${ACCELERATOR_KEY_MAX} characters` };
  }
  const count = parseCount(labels[`${label}.count`]);
  if (count === undefined) {
    return {
      reason: 'InvalidDeviceCount',
      message: `${label}.count=${shown(labels[`${label}.count`])} is not a positive whole number`,
    };
  }
  const memory = labels[`${label}.memory`];
  if (memory === undefined || parseMemoryLabel(memory) === undefined) {
    return {
      reason: 'InvalidDeviceMemory',
      message: `${label}.memory=${shown(memory)} is not a memory quantity such as 80Gi`,
    };
  }
  const optional = (suffix: string): string | undefined => labels[`${label}.${suffix}`] || undefined;
  const mfr = acceleratorKeyManufacturer(key) as ManufacturerName;
  const product = optional('product');
  const cores = optional('cores');
  const family = optional('family');
  return {
    key,
    manufacturer: mfr,
    count,
    memory,
    ...(product ? { product } : {}),
    ...(cores ? { cores } : {}),
    ...(family ? { family } : {}),
  };
}

/**
 * Reads os/arch, the general key and every accelerator of a node. Problems are collected, not
 * thrown: the chain skips the affected pool membership and reports the reason.
 */
export function extractNodeFacts(node: NodeLabelsInput, enabled: ReadonlySet<ManufacturerName>): NodeFacts {
  const labels = node.labels ?? {};
  const os = labels[OS_LABEL];
  const arch = labels[ARCH_LABEL];
  const problems: NodeProblem[] = [];
  const accelerators: AcceleratorFacts[] = [];
  const { accelerators: keys, general: generalKeys } = scanFeatureKeys(labels, enabled);
  for (const key of keys) {
    const facts = extractAccelerator(key, labels);
    if ('reason' in facts) problems.push(facts);
    else accelerators.push(facts);
  }
  const acceleratable = keys.length > 0 || labels[ACCELERATABLE_LABEL] === 'true';
  const general = extractGeneral(node, labels, generalKeys);
  if (os === undefined || arch === undefined || !OS_ARCH_PATTERN.test(os) || !OS_ARCH_PATTERN.test(arch)) {
    problems.unshift({
      reason: 'InvalidOsArch',
      message: `${OS_LABEL}=${shown(os)} and ${ARCH_LABEL}=${shown(arch)} must both be set to lower-case names`,
    });
    return { name: node.name, accelerators: [], acceleratable, problems, ...general };
  }
  return { name: node.name, os, arch, accelerators, acceleratable, problems, ...general };
}
