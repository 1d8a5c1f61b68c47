/**
 * @module What the scheduling chain reads of a Node: the labels of the gpustack.ai domains, os and
 * arch, the cpu-name annotation and the CPU capacity. node-profile writes exactly this into the
 * Node's NodeProfile, so the chain need not receive whole Nodes.
 */
import { ARCH_LABEL, CPU_NAME_ANNOTATION, OS_LABEL, PROFILED_LABEL, SYSTEM_DOMAIN } from './constants.js';
import type { NodeLabelsInput } from './node-facts.js';

/**
 * True for a label key the chain reads: `kubernetes.io/os`, `kubernetes.io/arch` and every key of
 * `gpustack.ai` or a subdomain of it — but not `gpustack.ai/profiled`, which node-profile sets
 * beside the profile and which would make the profile differ between its first and later syncs.
 */
export function isChainLabel(key: string): boolean {
  if (key === OS_LABEL || key === ARCH_LABEL) return true;
  const slash = key.indexOf('/');
  if (slash < 0 || key === PROFILED_LABEL) return false;
  const domain = key.slice(0, slash);
  return domain === SYSTEM_DOMAIN || domain.endsWith(`.${SYSTEM_DOMAIN}`);
}

/**
 * The part of a Node the chain reads. `extractNodeFacts` of the view equals that of the whole Node
 * (test/nodefeature/chain-view.test.ts checks it on every example cluster).
 * @example extractChainView({ name: 'a', labels: { 'gpustack.ai/managed': 'true', 'nvidia.com/gpu.count': '8' } }) // { name: 'a', labels: { 'gpustack.ai/managed': 'true' } }
 */
export function extractChainView(node: NodeLabelsInput): NodeLabelsInput {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(node.labels ?? {})) if (isChainLabel(key)) labels[key] = value;
  const cpuName = node.annotations?.[CPU_NAME_ANNOTATION];
  return {
    name: node.name,
    labels,
    ...(cpuName !== undefined ? { annotations: { [CPU_NAME_ANNOTATION]: cpuName } } : {}),
    ...(node.cpuCapacity !== undefined ? { cpuCapacity: String(node.cpuCapacity) } : {}),
  };
}
