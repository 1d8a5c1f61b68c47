/**
 * @module What the scheduling chain reads of a Node — exactly the labels `extractNodeFacts` reads,
 * the topology profile and its levels annotation, the cpu-name annotation and the CPU capacity. node-profile writes this into the Node's
 * NodeProfile, so the chain need not receive whole Nodes.
 */
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  ARCH_LABEL,
  CPU_NAME_ANNOTATION,
  GENERAL_PREFIX,
  MANAGED_LABEL,
  OS_LABEL,
  TOPOLOGY_LEVELS_ANNOTATION,
  TOPOLOGY_PROFILE_LABEL,
} from './constants.js';
import type { NodeLabelsInput } from './node-facts.js';

const NODE_LABELS: ReadonlySet<string> = new Set([
  OS_LABEL,
  ARCH_LABEL,
  MANAGED_LABEL,
  ACCELERATABLE_LABEL,
  TOPOLOGY_PROFILE_LABEL,
]);
/** The per-model labels `extractAccelerator` reads (`<aKey>.<suffix>`); `.sliced.*`, `.comcap`… it does not. */
const MODEL_SUFFIXES: ReadonlySet<string> = new Set(['count', 'memory', 'product', 'cores', 'family']);

/**
 * True for a label key the chain reads: os, arch, `gpustack.ai/managed`,
 * `feature.gpustack.ai/acceleratable`, every `acceleratable.feature.gpustack.ai/<key>` with its
 * count, memory, product, cores and family, and every `general.feature.gpustack.ai/<key>` with
 * its count. Anything else — vendor labels, node-profile's own `.sliced.*`, driver versions — the
 * chain never reads, and leaving it out keeps the profile small (Metacontroller sends every
 * profile on every chain sync).
 */
export function isChainLabel(key: string): boolean {
  if (NODE_LABELS.has(key)) return true;
  if (key.startsWith(ACCELERATABLE_PREFIX)) {
    const rest = key.slice(ACCELERATABLE_PREFIX.length);
    const dot = rest.indexOf('.');
    return dot < 0 || MODEL_SUFFIXES.has(rest.slice(dot + 1));
  }
  if (key.startsWith(GENERAL_PREFIX)) {
    const rest = key.slice(GENERAL_PREFIX.length);
    const dot = rest.indexOf('.');
    return dot < 0 || rest.slice(dot + 1) === 'count';
  }
  return false;
}

/** Label or annotation changes as a decorator answers them: a value sets the key, `null` removes it. */
export type LabelChanges = Readonly<Record<string, string | null>>;

/**
 * The part of a Node the chain reads once `changes` are applied to it, without copying the rest
 * of its labels (a Node carries ~200; the view keeps ~12).
 */
export function extractChainViewAfter(
  node: NodeLabelsInput,
  changes: { readonly labels?: LabelChanges; readonly annotations?: LabelChanges },
): NodeLabelsInput {
  const labels: Record<string, string> = {};
  const current = node.labels ?? {};
  const labelChanges = changes.labels ?? {};
  // for…in, not Object.entries: no array of ~200 pairs per call (the most-called hook runs this).
  for (const key in current) if (isChainLabel(key) && !(key in labelChanges)) labels[key] = current[key] as string;
  for (const key in labelChanges) {
    const value = labelChanges[key];
    if (value !== null && value !== undefined && isChainLabel(key)) labels[key] = value;
  }
  const annotationAfter = (key: string): string | undefined => {
    const change = changes.annotations?.[key];
    return change === undefined ? node.annotations?.[key] : (change ?? undefined);
  };
  const annotations: Record<string, string> = {};
  const cpuName = annotationAfter(CPU_NAME_ANNOTATION);
  if (cpuName !== undefined) annotations[CPU_NAME_ANNOTATION] = cpuName;
  // The levels of the topology profile: the chain names the profile's Topology by them.
  const levels = annotationAfter(TOPOLOGY_LEVELS_ANNOTATION);
  if (levels !== undefined) annotations[TOPOLOGY_LEVELS_ANNOTATION] = levels;
  return {
    name: node.name,
    labels,
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    ...(node.cpuCapacity !== undefined ? { cpuCapacity: String(node.cpuCapacity) } : {}),
  };
}

/**
 * The part of a Node the chain reads. `extractNodeFacts` of the view equals that of the whole Node
 * (test/nodefeature/chain-view.test.ts checks it on every example cluster, and
 * test/sync/scheduling-chain/sync.test.ts the chain's whole answer on every fixture).
 * @example extractChainView({ name: 'a', labels: { 'gpustack.ai/managed': 'true', 'nvidia.com/gpu.count': '8' } }) // { name: 'a', labels: { 'gpustack.ai/managed': 'true' } }
 */
export function extractChainView(node: NodeLabelsInput): NodeLabelsInput {
  return extractChainViewAfter(node, {});
}
