/**
 * The chain with topology on (docs/architecture.md#topology): topology-qualified flavors, one
 * Kueue Topology per profile, the migration when a profile changes, and what the shard summary
 * carries of it.
 */
import { describe, expect, it } from 'vitest';
import type { Node, NodeProfile, Topology } from '../../../src/k8s/index.js';
import {
  TOPOLOGY_LEVELS_ANNOTATION,
  TOPOLOGY_PROFILE_LABEL,
  topologyProfileOf,
} from '../../../src/nodefeature/index.js';
import { buildNodeProfile, summarizeShard } from '../../../src/sync/index.js';
import { makeSchedulingChain } from '../../builders/gpustack.js';
import { makeNode, type NodeWrapper } from '../../builders/node.js';
import { chainRequest, nodeProfileRequest } from '../../builders/request.js';
import { runHook, runScenario } from '../../support/hooks.js';
import { chainStatusOf, conditionOf, expectOk, flavorsOf, namesOfKind } from '../../support/responses.js';

const C = 'scheduling-chain';
const HOST = 'kubernetes.io/hostname';
const BLOCK = 'cloud.google.com/gce-topology-block';
const CLIQUE = 'nvidia.com/gpu.clique';
const H100 = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64';
const GENERIC = 'gpustack-generic-linux-amd64';
const BLOCK_LEVELS = [BLOCK, HOST];
const BLOCK_PROFILE = topologyProfileOf(BLOCK_LEVELS);
const HOST_PROFILE = topologyProfileOf([HOST]);
const AUTO = makeSchedulingChain().spec({ topology: { mode: 'Auto' } });

/** A Node as node-profile leaves it with topology on: its profile label and levels annotation. */
function withProfile(node: NodeWrapper, levels: readonly string[]): NodeWrapper {
  return node
    .label(TOPOLOGY_PROFILE_LABEL, topologyProfileOf(levels))
    .annotation(TOPOLOGY_LEVELS_ANNOTATION, levels.join(','));
}

function h100(name: string, block?: string): NodeWrapper {
  const node = makeNode(name).h100(8).cpu(224).profiled().label(HOST, name);
  return block === undefined ? node : node.label(BLOCK, block);
}

function topologiesOf(response: { children: readonly { kind: string }[] }): Topology[] {
  return response.children.filter((c): c is Topology => c.kind === 'Topology');
}

describe('node-profile with topology on', () => {
  it('labels a managed Node with its profile and puts profile and levels in its NodeProfile', () => {
    const node = h100('gpu-1', 'b1').obj();
    const response = expectOk(runHook('node-profile', nodeProfileRequest(node, AUTO.obj())));
    expect(response.labels?.[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(response.annotations?.[TOPOLOGY_LEVELS_ANNOTATION]).toBe(BLOCK_LEVELS.join(','));
    const profile = response.attachments?.[0] as unknown as {
      spec: { labels: Record<string, string>; annotations?: Record<string, string> };
    };
    expect(profile.spec.labels[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(profile.spec.annotations?.[TOPOLOGY_LEVELS_ANNOTATION]).toBe(BLOCK_LEVELS.join(','));
    // The block's value is not in the profile: Nodes of two blocks read the same.
    expect(JSON.stringify(profile.spec)).not.toContain('b1');
  });

  it('removes the profile when topology is turned off', () => {
    const node = withProfile(h100('gpu-1', 'b1'), BLOCK_LEVELS).obj();
    const response = expectOk(runHook('node-profile', nodeProfileRequest(node, makeSchedulingChain().obj())));
    expect(response.labels?.[TOPOLOGY_PROFILE_LABEL]).toBeNull();
    expect(response.annotations?.[TOPOLOGY_LEVELS_ANNOTATION]).toBeNull();
  });
});

describe('syncSchedulingChain with topology profiles', () => {
  const sync = (raw: unknown) => expectOk(runHook(C, raw));

  it('qualifies each flavor by its profile, pins the profile and names one Topology per profile', () => {
    const nodes = [
      withProfile(h100('gpu-1', 'b1'), BLOCK_LEVELS).obj(),
      withProfile(h100('gpu-2', 'b1'), BLOCK_LEVELS).obj(),
      withProfile(h100('gpu-3', 'b2'), BLOCK_LEVELS).obj(),
    ];
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes }));
    const flavors = flavorsOf(response);
    expect(flavors.map((f) => f.metadata.name)).toEqual([
      `${GENERIC}-224c-${BLOCK_PROFILE}`,
      `${H100}-8d-${BLOCK_PROFILE}`,
    ]);
    const device = flavors[1];
    expect(device?.metadata.labels?.['acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.capacity']).toBe('24');
    expect(device?.metadata.labels?.[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(device?.spec.nodeLabels[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(device?.spec.topologyName).toBe(`gpustack-${BLOCK_PROFILE}`);
    expect(topologiesOf(response)).toEqual([
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        kind: 'Topology',
        metadata: {
          name: `gpustack-${BLOCK_PROFILE}`,
          labels: {
            'app.kubernetes.io/part-of': 'gpustack-operator',
            'resource.gpustack.ai/type': 'topology',
            [TOPOLOGY_PROFILE_LABEL]: BLOCK_PROFILE,
          },
        },
        spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: HOST }] },
      },
    ]);
    // The pool (queue) is one: only flavors carry the profile.
    expect(namesOfKind(response, 'InstanceType')).toEqual([GENERIC, H100]);
  });

  it('splits one kind of Node under two profiles into two flavors of one pool', () => {
    const nodes = [
      withProfile(h100('gpu-1', 'b1'), BLOCK_LEVELS).obj(),
      withProfile(h100('gpu-2').label(CLIQUE, 'u.1'), [CLIQUE, HOST]).obj(),
      withProfile(h100('gpu-3'), [HOST]).obj(),
    ];
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes }));
    const cliqueProfile = topologyProfileOf([CLIQUE, HOST]);
    expect(namesOfKind(response, 'Topology')).toEqual(
      [BLOCK_PROFILE, cliqueProfile, HOST_PROFILE].map((p) => `gpustack-${p}`).sort(),
    );
    expect(flavorsOf(response).filter((f) => f.metadata.name.startsWith(`${H100}-8d-`)).length).toBe(3);
    expect(chainStatusOf(response).pools.find((p) => p.name === H100)?.nodes).toBe(3);
  });

  it('leaves out a Node whose profile does not match its levels, naming it', () => {
    const nodes = [
      h100('gpu-1', 'b1')
        .label(TOPOLOGY_PROFILE_LABEL, BLOCK_PROFILE)
        .annotation(TOPOLOGY_LEVELS_ANNOTATION, HOST)
        .obj(),
      withProfile(h100('gpu-2', 'b1'), BLOCK_LEVELS).obj(),
    ];
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes }));
    const status = chainStatusOf(response);
    expect(status.skippedNodes).toEqual([expect.objectContaining({ name: 'gpu-1', reason: 'UnreadableTopology' })]);
    expect(
      flavorsOf(response).find((f) => f.metadata.name === `${H100}-8d-${BLOCK_PROFILE}`)?.metadata.labels?.[
        'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.capacity'
      ],
    ).toBe('8');
  });

  it('keeps the Topology of a flavor that is still observed after a profile change (migration)', () => {
    // The Nodes moved from the hostname-only profile to the block profile: the old flavor is no
    // longer desired (Metacontroller deletes it; Kueue keeps it while its queue lists it), and its
    // Topology must outlive it.
    const oldFlavor = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: `${H100}-8d-${HOST_PROFILE}`, deletionTimestamp: '2026-02-28T00:00:00Z' },
      spec: { nodeLabels: { [TOPOLOGY_PROFILE_LABEL]: HOST_PROFILE }, topologyName: `gpustack-${HOST_PROFILE}` },
    };
    const oldTopology = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: `gpustack-${HOST_PROFILE}`, labels: { [TOPOLOGY_PROFILE_LABEL]: HOST_PROFILE } },
      spec: { levels: [{ nodeLabel: HOST }] },
    };
    const nodes = [withProfile(h100('gpu-1', 'b1'), BLOCK_LEVELS).obj()];
    const during = sync(chainRequest({ parent: AUTO.obj(), nodes, children: [oldFlavor, oldTopology] }));
    expect(namesOfKind(during, 'Topology')).toEqual([`gpustack-${BLOCK_PROFILE}`, `gpustack-${HOST_PROFILE}`].sort());
    expect(namesOfKind(during, 'ResourceFlavor')).not.toContain(oldFlavor.metadata.name);
    // Once the old flavor is gone, so is its Topology.
    const after = sync(chainRequest({ parent: AUTO.obj(), nodes, children: [oldTopology] }));
    expect(namesOfKind(after, 'Topology')).toEqual([`gpustack-${BLOCK_PROFILE}`]);
  });

  it('keeps observed Topologies in use after topology is turned off, and emits no new one', () => {
    const inUse = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: `${H100}-8d-${BLOCK_PROFILE}` },
      spec: { nodeLabels: {}, topologyName: `gpustack-${BLOCK_PROFILE}` },
    };
    const topology = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Topology',
      metadata: { name: `gpustack-${BLOCK_PROFILE}`, labels: { [TOPOLOGY_PROFILE_LABEL]: BLOCK_PROFILE } },
      spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: HOST }] },
    };
    const nodes = [h100('gpu-1', 'b1').obj()];
    const response = sync(chainRequest({ parent: makeSchedulingChain().obj(), nodes, children: [inUse, topology] }));
    expect(namesOfKind(response, 'Topology')).toEqual([`gpustack-${BLOCK_PROFILE}`]);
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([`${GENERIC}-224c`, `${H100}-8d`]);
  });

  it('emits no Topology and unqualified flavors while no Node has a profile (topology on, not yet labelled)', () => {
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes: [h100('gpu-1', 'b1').obj()] }));
    expect(namesOfKind(response, 'Topology')).toEqual([]);
    expect(flavorsOf(response).every((f) => f.spec.topologyName === undefined)).toBe(true);
  });
});

describe('the shard summary with topology', () => {
  it('grows with the profiles, not with the blocks: 600 Nodes in 3 blocks are one group', () => {
    const profiles = Array.from({ length: 600 }, (_, i) => {
      const node: Node = withProfile(h100(`gpu-${String(i).padStart(3, '0')}`, `b${i % 3}`), BLOCK_LEVELS).obj();
      return buildNodeProfile(node) as unknown as NodeProfile;
    });
    const summary = summarizeShard(profiles);
    expect(summary.groups.length).toBe(1);
    expect(summary.groups[0]?.nodes).toBe(600);
    expect(summary.groups[0]?.labels[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(summary.groups[0]?.annotations?.[TOPOLOGY_LEVELS_ANNOTATION]).toBe(BLOCK_LEVELS.join(','));
  });
});

describe('TopologyReady on the chain (docs/architecture.md#topology-status)', () => {
  const sync = (raw: unknown) => expectOk(runHook(C, raw));
  const topologyReady = (response: Parameters<typeof chainStatusOf>[0]) =>
    conditionOf(chainStatusOf(response), 'TopologyReady');
  const blockNodes = () => [
    withProfile(h100('gpu-1a', 'b1'), BLOCK_LEVELS).obj(),
    withProfile(h100('gpu-2a', 'b2'), BLOCK_LEVELS).obj(),
  ];
  const blockTopology = (levels: readonly string[] = BLOCK_LEVELS) => ({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Topology',
    metadata: { name: `gpustack-${BLOCK_PROFILE}`, labels: { [TOPOLOGY_PROFILE_LABEL]: BLOCK_PROFILE } },
    spec: { levels: levels.map((nodeLabel) => ({ nodeLabel })) },
  });

  it('reports topology ready once every topology is observed', async () => {
    const response = expectOk(await runScenario(C, 'reports-topology-ready-once-every-topology-is-observed'));
    expect(topologyReady(response)).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(topologyReady(response).message).toContain(`gpustack-${BLOCK_PROFILE}`);
  });

  it('reports a profile change mid-migration', async () => {
    const response = expectOk(await runScenario(C, 'reports-a-profile-change-mid-migration'));
    const condition = topologyReady(response);
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'Migrating' });
    expect(condition.message).toContain(`${H100}-8d-${HOST_PROFILE} (gpustack-${HOST_PROFILE})`);
    // The old Topology is still emitted while its flavor is held.
    expect(namesOfKind(response, 'Topology')).toContain(`gpustack-${HOST_PROFILE}`);
  });

  it('is Disabled while topology is off and no flavor names a Topology', () => {
    const response = sync(chainRequest({ parent: makeSchedulingChain().obj(), nodes: [h100('gpu-1', 'b1').obj()] }));
    expect(topologyReady(response)).toMatchObject({ status: 'False', reason: 'Disabled' });
  });

  it('is Pending until Metacontroller has created the Topology and the flavors', () => {
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes: blockNodes() }));
    const condition = topologyReady(response);
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'TopologyPending' });
    expect(condition.message).toContain(`Topology gpustack-${BLOCK_PROFILE}`);
  });

  it('is Pending while topology is on and the Nodes have no profile yet', () => {
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes: [h100('gpu-1', 'b1').obj()] }));
    const condition = topologyReady(response);
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'TopologyPending' });
    expect(condition.message).toContain(`${H100}-8d have no topology profile yet`);
  });

  it('is TopologyMissing when an observed flavor names a Topology that is gone and cannot be re-created', () => {
    const orphan = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: `${H100}-8d-${HOST_PROFILE}`, deletionTimestamp: '2026-02-28T00:00:00Z' },
      spec: { nodeLabels: {}, topologyName: `gpustack-${HOST_PROFILE}` },
    };
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes: blockNodes(), children: [orphan] }));
    const condition = topologyReady(response);
    expect(condition).toMatchObject({ status: 'False', reason: 'TopologyMissing' });
    expect(condition.message).toContain(`${orphan.metadata.name} (gpustack-${HOST_PROFILE})`);
  });

  it('is TopologyDrift when an observed Topology has other levels than its Nodes', () => {
    const response = sync(chainRequest({ parent: AUTO.obj(), nodes: blockNodes(), children: [blockTopology([HOST])] }));
    const condition = topologyReady(response);
    expect(condition).toMatchObject({ status: 'False', reason: 'TopologyDrift' });
    expect(condition.message).toContain(`has levels [${HOST}], its Nodes [${BLOCK}, ${HOST}]`);
  });

  it('is Migrating after topology is turned off while a queue still holds a topology flavor', () => {
    const held = {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: `${H100}-8d-${BLOCK_PROFILE}`, deletionTimestamp: '2026-02-28T00:00:00Z' },
      spec: { nodeLabels: {}, topologyName: `gpustack-${BLOCK_PROFILE}` },
    };
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain().obj(),
        nodes: [h100('gpu-1', 'b1').obj()],
        children: [held, blockTopology()],
      }),
    );
    expect(topologyReady(response)).toMatchObject({ status: 'Unknown', reason: 'Migrating' });
  });

  it('names at most five objects in a message, counting the rest', () => {
    const nodes = Array.from({ length: 8 }, (_, i) =>
      withProfile(h100(`gpu-${i}`).label(`example.com/level-${i}`, 'x'), [`example.com/level-${i}`, HOST]).obj(),
    );
    const settings = { topology: { mode: 'Auto', levels: nodes.map((_, i) => `example.com/level-${i}`) } };
    const response = sync(chainRequest({ parent: makeSchedulingChain().spec(settings).obj(), nodes }));
    const condition = topologyReady(response);
    expect(condition.reason).toBe('TopologyPending');
    expect(condition.message).toMatch(/ and \d+ more$/);
  });
});
