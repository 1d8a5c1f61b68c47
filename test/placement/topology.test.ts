/**
 * The per-card check inside the domains Kueue's TAS assigned (docs/architecture.md#topology-check):
 * TAS counts Node allocatable, so a domain it chose may still lack free cards; the check places
 * each domain's pods on that domain's nodes only and names the domain when they do not fit.
 */
import { describe, expect, it } from 'vitest';
import { ReceivedDeviceTaintRuleSchema, buildCordonRules, buildDeviceLedger } from '../../src/dra/index.js';
import type { Node } from '../../src/k8s/index.js';
import { claimTemplate, nodePool } from '../dra/builders.js';
import {
  NodeDevicesVerdictSchema,
  decideNodeDevices,
  type NodeDevicesVerdict,
  type Pod,
  type Workload,
  expandTopologyAssignment,
  TopologyAssignmentSchema,
} from '../../src/placement/index.js';
import {
  CHECK,
  H100_FLAVOR,
  boundPod,
  cordoned,
  deviceFlavor,
  flavorMap,
  gpuNode,
  gpus,
  makeWorkload,
} from './builders.js';

const BLOCK = 'cloud.google.com/gce-topology-block';
const HOST = 'kubernetes.io/hostname';

function inBlock(node: Node, block: string): Node {
  return { ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, [BLOCK]: block } } };
}

const NODES = [
  inBlock(gpuNode('gpu-1a', 8), 'b1'),
  inBlock(gpuNode('gpu-1b', 8), 'b1'),
  inBlock(gpuNode('gpu-2a', 8), 'b2'),
  inBlock(gpuNode('gpu-2b', 8), 'b2'),
];

/** Kueue's assignment of `pods` pods, one per host, on `hosts` of `block` (levels block, hostname). */
function assigned(block: string, hosts: readonly string[]) {
  return {
    levels: [BLOCK, HOST],
    slices: [
      {
        domainCount: hosts.length,
        valuesPerLevel: [{ universal: block }, { individual: { prefix: 'gpu-', roots: hosts.map((h) => h.slice(4)) } }],
        podCounts: { universal: 1 },
      },
    ],
  };
}

function decide(
  workload: Workload,
  pods: readonly Pod[] = [],
  nodes: readonly Node[] = NODES,
): NodeDevicesVerdict | undefined {
  const verdict = decideNodeDevices({
    workload,
    flavors: flavorMap(deviceFlavor()),
    nodes,
    pods,
    deviceResourceOf: () => 'nvidia.com/gpu',
    checkName: CHECK,
  });
  if (verdict !== undefined) NodeDevicesVerdictSchema.parse(verdict);
  return verdict;
}

const busy = (node: string, cards: number) => boundPod(`busy-${node}`, node, [gpus(cards)]);

describe('expandTopologyAssignment', () => {
  it('expands universal and individual values (prefix, roots, suffix) and pod counts per domain', () => {
    const assignment = TopologyAssignmentSchema.parse({
      levels: [BLOCK, HOST],
      slices: [
        {
          domainCount: 2,
          valuesPerLevel: [{ universal: 'b1' }, { individual: { prefix: 'gpu-', suffix: '-x', roots: ['1a', '1b'] } }],
          podCounts: { individual: [2, 1] },
        },
        { domainCount: 1, valuesPerLevel: [{ universal: 'b2' }, { universal: 'gpu-2a' }], podCounts: { universal: 3 } },
      ],
    });
    expect(expandTopologyAssignment(assignment)).toEqual({
      ok: true,
      levels: [BLOCK, HOST],
      domains: [
        { values: ['b1', 'gpu-1a-x'], pods: 2 },
        { values: ['b1', 'gpu-1b-x'], pods: 1 },
        { values: ['b2', 'gpu-2a'], pods: 3 },
      ],
    });
  });

  it('refuses a slice that does not add up instead of guessing', () => {
    const assignment = TopologyAssignmentSchema.parse({
      levels: [BLOCK, HOST],
      slices: [{ domainCount: 2, valuesPerLevel: [{ universal: 'b1' }], podCounts: { universal: 1 } }],
    });
    expect(expandTopologyAssignment(assignment)).toEqual({
      ok: false,
      message: 'topologyAssignment.slices[0]: 1 valuesPerLevel for 2 levels',
    });
  });
});

describe('decideNodeDevices inside the assigned topology domains', () => {
  it('retries, naming the domain and the free cards per node, when the assigned hosts are full though others are free', () => {
    const workload = makeWorkload()
      .podSet('workers', 2, [gpus(8)], { topologyAssignment: assigned('b1', ['gpu-1a', 'gpu-1b']) })
      .obj();
    const pods = [busy('gpu-1a', 4)];
    expect(decide(workload, pods)).toEqual({
      name: CHECK,
      state: 'Retry',
      requeueAfterSeconds: 30,
      message:
        `podset "workers": topology domain ${BLOCK}=b1,${HOST}=gpu-1a of flavor ${H100_FLAVOR}: ` +
        '1 pod × 8 cards do not fit there; free cards per node: gpu-1a 4; will retry as capacity frees',
    });
    // Without the assignment the two pods fit elsewhere (gpu-1b, gpu-2a): the domain is what fails.
    expect(
      decide(
        makeWorkload()
          .podSet('workers', 2, [gpus(8)])
          .obj(),
        pods,
      )?.state,
    ).toBe('Ready');
  });

  it('is Ready when every domain holds its pods', () => {
    const workload = makeWorkload()
      .podSet('workers', 2, [gpus(8)], { topologyAssignment: assigned('b2', ['gpu-2a', 'gpu-2b']) })
      .obj();
    expect(decide(workload, [busy('gpu-1a', 4)])?.state).toBe('Ready');
  });

  it('counts the pods of one PodSet placed in one domain against the next domain on the same node', () => {
    // Two domains naming the same host (a malformed or repeated assignment): 2 × 8 on one 8-card node.
    const topology = {
      levels: [HOST],
      slices: [
        {
          domainCount: 2,
          valuesPerLevel: [{ individual: { roots: ['gpu-2a', 'gpu-2a'] } }],
          podCounts: { universal: 1 },
        },
      ],
    };
    const workload = makeWorkload()
      .podSet('workers', 2, [gpus(8)], { topologyAssignment: topology })
      .obj();
    expect(decide(workload)?.message).toContain(`topology domain ${HOST}=gpu-2a`);
  });

  it('does not count a cordoned node of the domain', () => {
    const workload = makeWorkload()
      .podSet('workers', 1, [gpus(8)], { topologyAssignment: assigned('b1', ['gpu-1a']) })
      .obj();
    const nodes = NODES.map((n) => (n.metadata.name === 'gpu-1a' ? cordoned(n) : n));
    expect(decide(workload, [], nodes)?.message).toBe(
      `podset "workers": topology domain ${BLOCK}=b1,${HOST}=gpu-1a of flavor ${H100_FLAVOR}: ` +
        '1 pod × 8 cards do not fit there; free cards per node: no node of the flavor is in the domain; will retry as capacity frees',
    );
  });

  it('retries with the field when the assignment cannot be read', () => {
    const topology = {
      levels: [HOST],
      slices: [{ domainCount: 1, valuesPerLevel: [{}], podCounts: { universal: 1 } }],
    };
    const workload = makeWorkload()
      .podSet('workers', 1, [gpus(8)], { topologyAssignment: topology })
      .obj();
    expect(decide(workload)?.message).toBe(
      'podset "workers": topologyAssignment.slices[0]: valuesPerLevel[0] has no value for domain 0; will retry',
    );
  });
});

describe('decideNodeDevices inside the assigned domains, for pods that use claims', () => {
  const nodes = [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8)];
  const templates = [claimTemplate('eight-cards', [{ deviceClassName: 'gpustack-nvidia', count: 8 }])];
  const card5 = buildDeviceLedger(nodePool('gpu-a', 8), [])
    .cards('gpu-a')
    .find((c) => c.name === 'card-5');
  const cordonRules = buildCordonRules(card5!, 'test', 'NoSchedule', 'resource.k8s.io/v1beta2').map((r) =>
    ReceivedDeviceTaintRuleSchema.parse(r),
  );

  function decideClaims(topology: unknown): NodeDevicesVerdict | undefined {
    const workload = makeWorkload('train')
      .podSet('workers', 1, [{ name: 'main', resources: { requests: { cpu: '1' } } }], {
        claimTemplates: { gpus: 'eight-cards' },
        ...(topology !== undefined ? { topologyAssignment: topology } : {}),
      })
      .obj();
    return decideNodeDevices({
      workload,
      flavors: flavorMap(deviceFlavor()),
      nodes,
      pods: [],
      deviceResourceOf: () => 'nvidia.com/gpu',
      checkName: CHECK,
      claims: {
        ledger: buildDeviceLedger(
          nodes.flatMap((n) => nodePool(n.metadata.name, 8)),
          [],
          undefined,
          cordonRules,
        ),
        templates: (namespace, name) =>
          templates.find((t) => t.metadata.namespace === namespace && t.metadata.name === name),
      },
    });
  }

  it('retries when the assigned host has a cordoned card, though another host has 8 free', () => {
    const onA = {
      levels: [HOST],
      slices: [{ domainCount: 1, valuesPerLevel: [{ universal: 'gpu-a' }], podCounts: { universal: 1 } }],
    };
    const verdict = decideClaims(onA);
    expect(verdict?.state).toBe('Retry');
    expect(verdict?.message).toMatch(
      new RegExp(
        `^podset "workers": topology domain ${HOST}=gpu-a of flavor ${H100_FLAVOR}: 1 pod × .* by resource claims do not fit in flavor`,
      ),
    );
    expect(verdict?.message).toContain('the largest free block is 7 cards (node gpu-a');
    expect(verdict?.message).toMatch(/; will retry as capacity frees$/);
    // TAS did not choose: the check places the pod on gpu-b.
    expect(decideClaims(undefined)?.state).toBe('Ready');
  });
});
