import { describe, expect, it } from 'vitest';
import { isLabelValue } from '../../src/k8s/index.js';
import {
  TOPOLOGY_LEVELS_ANNOTATION,
  TOPOLOGY_PROFILE_LABEL,
  constructTopologyProfile,
  detectTopologyLevels,
  readTopology,
  topologyName,
  topologyProfileOf,
} from '../../src/nodefeature/index.js';

const HOST = 'kubernetes.io/hostname';
const AUTO = { mode: 'Auto' as const };

describe('topology profiles', () => {
  it("hashes the hostname-only level list to the modelled system's default profile", () => {
    // docs of the modelled system: no TopologySource → profile fnv64-87bf574bea2a4f23.
    expect(topologyProfileOf([HOST])).toBe('fnv64-87bf574bea2a4f23');
    expect(topologyName('fnv64-87bf574bea2a4f23')).toBe('gpustack-fnv64-87bf574bea2a4f23');
  });

  it('keeps the profile a valid label value and the Topology name within 63 characters', () => {
    const profile = topologyProfileOf(['cloud.google.com/gce-topology-block', 'nvidia.com/gpu.clique', HOST]);
    expect(profile).toMatch(/^fnv64-[0-9a-f]{16}$/);
    expect(isLabelValue(profile)).toBe(true);
    expect(topologyName(profile).length).toBeLessThanOrEqual(63);
  });

  it('depends on the order of the levels, not only on the set', () => {
    expect(topologyProfileOf(['a/x', 'b/y', HOST])).not.toBe(topologyProfileOf(['b/y', 'a/x', HOST]));
  });
});

describe('detectTopologyLevels', () => {
  it('is the hostname alone for a Node without level labels', () => {
    expect(detectTopologyLevels({ 'kubernetes.io/os': 'linux' }, AUTO)).toEqual([HOST]);
  });

  it('orders well-known labels coarse to fine whatever their order on the Node, hostname last', () => {
    const labels = {
      'cloud.google.com/gce-topology-host': 'h1',
      'nvidia.com/gpu.clique': 'uuid.7',
      'cloud.google.com/gce-topology-subblock': 'sb1',
      'cloud.google.com/gce-topology-block': 'b1',
      [HOST]: 'gpu-1',
    };
    expect(detectTopologyLevels(labels, AUTO)).toEqual([
      'cloud.google.com/gce-topology-block',
      'cloud.google.com/gce-topology-subblock',
      'nvidia.com/gpu.clique',
      'cloud.google.com/gce-topology-host',
      HOST,
    ]);
  });

  it('re-orders a run of Topograph tiers coarse to fine (highest tier first), before the NVLink domain', () => {
    const labels = {
      'fabric.topograph.run/tier-1': 's1',
      'fabric.topograph.run/tier-3': 's3',
      'fabric.topograph.run/tier-2': 's2',
      'fabric.topograph.run/tier-10': 's10',
      'network.topology.nvidia.com/accelerator': 'nvl1',
    };
    expect(detectTopologyLevels(labels, AUTO)).toEqual([
      'fabric.topograph.run/tier-10',
      'fabric.topograph.run/tier-3',
      'fabric.topograph.run/tier-2',
      'fabric.topograph.run/tier-1',
      'network.topology.nvidia.com/accelerator',
      HOST,
    ]);
  });

  it("ignores an empty level value (a domain nobody named) and our agent's clique label is an NVLink level", () => {
    expect(
      detectTopologyLevels(
        { 'topology.k8s.aws/network-node-layer-1': '', 'topology.gpustack.ai/nvlink-clique': 'u.3' },
        AUTO,
      ),
    ).toEqual(['topology.gpustack.ai/nvlink-clique', HOST]);
  });

  it("takes one NVLink domain level: Topograph's, else GFD's clique, else our agent's, never two", () => {
    const domain = {
      'network.topology.nvidia.com/accelerator': 'nvl1',
      'nvidia.com/gpu.clique': 'u.7',
      'topology.gpustack.ai/nvlink-clique': 'u.7',
    };
    const block = { 'network.topology.nvidia.com/block': 'b1' };
    expect(detectTopologyLevels({ ...block, ...domain }, AUTO)).toEqual([
      'network.topology.nvidia.com/block',
      'network.topology.nvidia.com/accelerator',
      HOST,
    ]);
    const { 'network.topology.nvidia.com/accelerator': _topograph, ...cliques } = domain;
    expect(detectTopologyLevels({ ...block, ...cliques }, AUTO)).toEqual([
      'network.topology.nvidia.com/block',
      'nvidia.com/gpu.clique',
      HOST,
    ]);
    // Our agent's where neither runs; an empty value of a stronger one does not count.
    expect(
      detectTopologyLevels({ 'nvidia.com/gpu.clique': '', 'topology.gpustack.ai/nvlink-clique': 'u.7' }, AUTO),
    ).toEqual(['topology.gpustack.ai/nvlink-clique', HOST]);
    // GFD's and ours on one Node: the profile is the one GFD's alone gives.
    expect(topologyProfileOf(detectTopologyLevels(cliques, AUTO))).toBe(
      topologyProfileOf(detectTopologyLevels({ 'nvidia.com/gpu.clique': 'u.7' }, AUTO)),
    );
  });

  it("names our agent's clique as a level where the settings list it", () => {
    const both = { 'nvidia.com/gpu.clique': 'u.7', 'topology.gpustack.ai/nvlink-clique': 'u.7' };
    const levels = ['example.com/block', 'topology.gpustack.ai/nvlink-clique'];
    expect(detectTopologyLevels({ 'example.com/block': 'b', ...both }, { mode: 'Auto', levels })).toEqual([
      ...levels,
      HOST,
    ]);
  });

  it('takes the longest prefix of explicit levels the Node carries', () => {
    const levels = ['example.com/block', 'example.com/rack'];
    expect(
      detectTopologyLevels({ 'example.com/block': 'b', 'example.com/rack': 'r' }, { mode: 'Auto', levels }),
    ).toEqual([...levels, HOST]);
    // A Node without the block has no rack level either: a rack outside any block is no domain.
    expect(detectTopologyLevels({ 'example.com/rack': 'r' }, { mode: 'Auto', levels })).toEqual([HOST]);
    // Explicit levels replace the well-known list.
    expect(detectTopologyLevels({ 'nvidia.com/gpu.clique': 'u.1' }, { mode: 'Auto', levels })).toEqual([HOST]);
  });
});

describe('constructTopologyProfile (node-profile)', () => {
  const node = {
    labels: { 'cloud.google.com/gce-topology-block': 'b1', [HOST]: 'gpu-1' },
    annotations: {},
  };

  it('labels a managed Node with its profile and records the levels while topology is on', () => {
    const levels = ['cloud.google.com/gce-topology-block', HOST];
    expect(constructTopologyProfile(node, true, AUTO)).toEqual({
      labels: { [TOPOLOGY_PROFILE_LABEL]: topologyProfileOf(levels) },
      annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: levels.join(',') },
    });
  });

  it('writes nothing while topology is off or absent, and removes what it wrote before', () => {
    expect(constructTopologyProfile(node, true, undefined)).toEqual({ labels: {}, annotations: {} });
    expect(constructTopologyProfile(node, true, { mode: 'Disabled' })).toEqual({ labels: {}, annotations: {} });
    const profiled = {
      labels: { ...node.labels, [TOPOLOGY_PROFILE_LABEL]: 'fnv64-87bf574bea2a4f23' },
      annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: HOST },
    };
    const removed = { labels: { [TOPOLOGY_PROFILE_LABEL]: null }, annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: null } };
    expect(constructTopologyProfile(profiled, true, { mode: 'Disabled' })).toEqual(removed);
    // An unmanaged Node has no profile even with topology on.
    expect(constructTopologyProfile(profiled, false, AUTO)).toEqual(removed);
  });
});

describe('readTopology (the chain)', () => {
  it('reads a profile whose levels hash to it, and refuses one that does not', () => {
    const levels = ['nvidia.com/gpu.clique', HOST];
    const profile = topologyProfileOf(levels);
    expect(
      readTopology({
        labels: { [TOPOLOGY_PROFILE_LABEL]: profile },
        annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: levels.join(',') },
      }),
    ).toEqual({ kind: 'profile', profile, levels });
    expect(readTopology({ labels: {} })).toEqual({ kind: 'none' });
    expect(readTopology({ labels: { [TOPOLOGY_PROFILE_LABEL]: profile } }).kind).toBe('unreadable');
    const edited = readTopology({
      labels: { [TOPOLOGY_PROFILE_LABEL]: profile },
      annotations: { [TOPOLOGY_LEVELS_ANNOTATION]: HOST },
    });
    expect(edited).toEqual({
      kind: 'unreadable',
      message: `topology.gpustack.ai/profile=${profile} but topology.gpustack.ai/levels "${HOST}" is profile fnv64-87bf574bea2a4f23`,
    });
  });
});
