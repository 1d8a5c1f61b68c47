/**
 * @module Topology profiles (docs/architecture.md#topology): which level labels a Node carries,
 * coarse to fine with `kubernetes.io/hostname` last, hashed into a profile that names its Kueue
 * Topology and qualifies its flavors. Only the level *keys* enter a profile, never their values:
 * Nodes of one profile and one kind read the same, so a shard's summary grows with the profiles,
 * not with the blocks or racks.
 */
import { HOSTNAME_LABEL, type TopologySetting } from '../k8s/index.js';
import { SYSTEM_DOMAIN, TOPOLOGY_LEVELS_ANNOTATION, TOPOLOGY_PROFILE_LABEL } from './constants.js';
import { fnv1a64Hex } from './fnv.js';
import type { LabelChanges } from './chain-view.js';

/** `resource.gpustack.ai/type` of our Topologies. */
export const RESOURCE_TYPE_TOPOLOGY = 'topology';
/**
 * Node label our agent publishes from NVML's fabric info (`<cluster UUID>.<clique id>`, the form
 * GPU Feature Discovery uses for `nvidia.com/gpu.clique`), so that the NVLink domain is a level
 * where GFD does not run.
 */
export const AGENT_CLIQUE_LABEL = `topology.${SYSTEM_DOMAIN}/nvlink-clique`;

/**
 * The labels that name a Node's NVLink domain, in precedence: a profile takes the first one the
 * Node carries, never two (two levels of one domain would only differ in name, and a podset asking
 * for the one left out would find no such level). The writers a cluster installed on purpose come
 * first, with the names its users already put in `podset-required-topology`: NVIDIA Topograph's
 * (whose coarser levels come with it), then GPU Feature Discovery's; our agent's fills in where
 * neither runs. GFD's and ours carry the same value from the same NVML call, so a cluster that runs
 * GFD keeps its profiles when our agent starts publishing its own.
 */
export const NVLINK_DOMAIN_LEVELS: readonly string[] = [
  'network.topology.nvidia.com/accelerator',
  'nvidia.com/gpu.clique',
  AGENT_CLIQUE_LABEL,
];

/** NVIDIA Topograph's tiered labels: `fabric.topograph.run/tier-<N>`, tier 1 the switch nearest the Node. */
const TOPOGRAPH_TIER = /^fabric\.topograph\.run\/tier-([1-9][0-9]?)$/;

/**
 * The well-known level labels, coarse to fine, each with its writer. A run of Topograph tiers
 * takes the place of `TOPOGRAPH_TIERS`, its highest tier first; the first of NVLINK_DOMAIN_LEVELS
 * the Node carries takes the place of `NVLINK_DOMAIN`.
 */
const TOPOGRAPH_TIERS = '<topograph tiers>';
const NVLINK_DOMAIN = '<nvlink domain>';
export const WELL_KNOWN_LEVELS: readonly string[] = [
  // AWS (EKS instance topology): network node layers, 1 the farthest from the instance.
  'topology.k8s.aws/network-node-layer-1',
  'topology.k8s.aws/network-node-layer-2',
  'topology.k8s.aws/network-node-layer-3',
  // Google Cloud (GKE compact placement): block, sub-block.
  'cloud.google.com/gce-topology-block',
  'cloud.google.com/gce-topology-subblock',
  // NVIDIA Topograph: datacenter, spine, block switches; or numbered tiers.
  'network.topology.nvidia.com/datacenter',
  'network.topology.nvidia.com/spine',
  'network.topology.nvidia.com/block',
  TOPOGRAPH_TIERS,
  // The NVLink domain: Topograph's, GPU Feature Discovery's clique or our agent's, one of them.
  NVLINK_DOMAIN,
  // Google Cloud: the physical host.
  'cloud.google.com/gce-topology-host',
];

/**
 * The Node's levels, coarse to fine, `kubernetes.io/hostname` last. Explicit `levels` (a
 * TopologySource's): the longest prefix of them the Node carries. Otherwise every well-known label
 * the Node carries, in the table's order, and one NVLink domain label (NVLINK_DOMAIN_LEVELS).
 * @example detectTopologyLevels({ 'nvidia.com/gpu.clique': 'u.1' }, { mode: 'Auto' }) // ['nvidia.com/gpu.clique', 'kubernetes.io/hostname']
 */
export function detectTopologyLevels(labels: Readonly<Record<string, string>>, setting: TopologySetting): string[] {
  const carried = (key: string): boolean => (labels[key] ?? '') !== '';
  if (setting.levels !== undefined) {
    const prefix: string[] = [];
    for (const key of setting.levels) {
      if (!carried(key)) break;
      prefix.push(key);
    }
    return [...prefix, HOSTNAME_LABEL];
  }
  const tiers: { key: string; tier: number }[] = [];
  for (const key in labels) {
    const match = TOPOGRAPH_TIER.exec(key);
    if (match && carried(key)) tiers.push({ key, tier: Number(match[1]) });
  }
  tiers.sort((a, b) => b.tier - a.tier);
  const levels: string[] = [];
  for (const key of WELL_KNOWN_LEVELS) {
    if (key === TOPOGRAPH_TIERS) levels.push(...tiers.map((t) => t.key));
    else if (key === NVLINK_DOMAIN) levels.push(...NVLINK_DOMAIN_LEVELS.filter(carried).slice(0, 1));
    else if (carried(key)) levels.push(key);
  }
  return [...levels, HOSTNAME_LABEL];
}

/**
 * The profile of a level list: `fnv64-` + FNV-1a 64 of the levels joined by NUL (the modelled
 * system's). `[kubernetes.io/hostname]` alone is `fnv64-87bf574bea2a4f23`.
 */
export function topologyProfileOf(levels: readonly string[]): string {
  return `fnv64-${fnv1a64Hex(levels.join('\u0000'))}`;
}

/** The Kueue Topology of a profile: `gpustack-fnv64-<16 hex>` (31 characters). */
export function topologyName(profile: string): string {
  return `gpustack-${profile}`;
}

/** True when topology is on in these settings. */
export function topologyEnabled(setting: TopologySetting | undefined): setting is TopologySetting {
  return setting?.mode === 'Auto';
}

/**
 * node-profile's topology labels and annotation for one Node (it owns both): the profile and its
 * levels on a managed Node while topology is on; `null` for each one present otherwise.
 */
export function constructTopologyProfile(
  node: {
    readonly labels?: Readonly<Record<string, string>> | undefined;
    readonly annotations?: Readonly<Record<string, string>> | undefined;
  },
  managed: boolean,
  setting: TopologySetting | undefined,
): { labels: LabelChanges; annotations: LabelChanges } {
  const labels = node.labels ?? {};
  if (!managed || !topologyEnabled(setting)) {
    return {
      labels: labels[TOPOLOGY_PROFILE_LABEL] !== undefined ? { [TOPOLOGY_PROFILE_LABEL]: null } : {},
      annotations:
        node.annotations?.[TOPOLOGY_LEVELS_ANNOTATION] !== undefined ? { [TOPOLOGY_LEVELS_ANNOTATION]: null } : {},
    };
  }
  const levels = detectTopologyLevels(labels, setting);
  return {
    labels: { [TOPOLOGY_PROFILE_LABEL]: topologyProfileOf(levels) },
    annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: levels.join(',') },
  };
}

/** A Node's topology as the chain reads it from its view. */
export type TopologyReading =
  | { readonly kind: 'none' }
  | { readonly kind: 'profile'; readonly profile: string; readonly levels: readonly string[] }
  | { readonly kind: 'unreadable'; readonly message: string };

/**
 * The profile and levels of a Node's view. A profile whose levels annotation is missing or hashes
 * to another profile is unreadable (a hand edit, or node-profile mid-write): the chain leaves the
 * Node out rather than pool it under a Topology it cannot name.
 */
export function readTopology(view: {
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
}): TopologyReading {
  const profile = view.labels?.[TOPOLOGY_PROFILE_LABEL];
  if (profile === undefined) return { kind: 'none' };
  const text = view.annotations?.[TOPOLOGY_LEVELS_ANNOTATION];
  if (text === undefined || text === '')
    return {
      kind: 'unreadable',
      message: `${TOPOLOGY_PROFILE_LABEL}=${profile} without ${TOPOLOGY_LEVELS_ANNOTATION}`,
    };
  const levels = text.split(',');
  const hashed = topologyProfileOf(levels);
  if (hashed !== profile)
    return {
      kind: 'unreadable',
      message: `${TOPOLOGY_PROFILE_LABEL}=${profile} but ${TOPOLOGY_LEVELS_ANNOTATION} "${text}" is profile ${hashed}`,
    };
  return { kind: 'profile', profile, levels };
}
