/**
 * The per-card admission decision (docs/architecture.md#admission-check): quota is a sum over nodes, so the check places
 * every pod on the assigned flavor's nodes before letting a Workload through. Table tests named
 * by behaviour; every verdict is also checked against the strict verdict schema.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManufacturerName, Node } from '../../src/k8s/index.js';
import {
  NodeDevicesVerdictSchema,
  decideNodeDevices,
  type NodeDevicesInput,
  type NodeDevicesVerdict,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from '../../src/placement/index.js';
import { deepFreeze } from '../support/snapshot.js';
import {
  A,
  CHECK,
  H100,
  H100_FLAVOR,
  NVIDIA_CREDITS,
  boundPod,
  cordoned,
  cpuNode,
  cpuOnly,
  deviceFlavor,
  flavorMap,
  flavorWithNodeLabels,
  gpuNode,
  gpus,
  makeWorkload,
  tainted,
  withTolerations,
  type PodSetOptions,
} from './builders.js';

const DEVICE_RESOURCES: Readonly<Record<string, string>> = { nvidia: 'nvidia.com/gpu', amd: 'amd.com/gpu' };
const deviceResourceOf = (mfr: ManufacturerName): string => DEVICE_RESOURCES[mfr] ?? `${mfr}.example.com/device`;

const READY = 'the assigned flavor pool has enough free cards to place every pod';
const NOTHING = 'no pod set asks for whole accelerator cards; nothing to place';
const A100 = 'nvidia-a100-sxm4-80gb';
const A100_FLAVOR = `gpustack-${A100}-linux-amd64-8d`;

interface Scene {
  readonly nodes?: readonly Node[];
  readonly pods?: readonly Pod[];
  readonly flavors?: Readonly<Record<string, ReceivedResourceFlavor>>;
  readonly deviceResourceOf?: NodeDevicesInput['deviceResourceOf'];
}

function inputOf(workload: Workload, scene: Scene = {}): NodeDevicesInput {
  return {
    workload,
    flavors: scene.flavors ?? flavorMap(deviceFlavor()),
    nodes: scene.nodes ?? [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8)],
    pods: scene.pods ?? [],
    deviceResourceOf: scene.deviceResourceOf ?? deviceResourceOf,
    checkName: CHECK,
  };
}

/** Decides, and checks the verdict is one we may write. */
function decide(workload: Workload, scene: Scene = {}): NodeDevicesVerdict | undefined {
  const verdict = decideNodeDevices(inputOf(workload, scene));
  if (verdict !== undefined) NodeDevicesVerdictSchema.parse(verdict);
  return verdict;
}

function ready(message = READY): NodeDevicesVerdict {
  return { name: CHECK, state: 'Ready', message };
}

function retry(message: string): NodeDevicesVerdict {
  return { name: CHECK, state: 'Retry', message, requeueAfterSeconds: 30 };
}

/** Pods holding `cards` on each named node, standing in for running work. */
function busy(cardsByNode: Readonly<Record<string, number>>): Pod[] {
  return Object.entries(cardsByNode).map(([node, cards]) => boundPod(`busy-${node}`, node, [gpus(cards)]));
}

interface Case {
  readonly name: string;
  readonly workload: Workload;
  readonly scene?: Scene;
  readonly want: NodeDevicesVerdict;
}

describe('decideNodeDevices: fragmentation and placement', () => {
  const cases: Case[] = [
    {
      name: 'one pod asking 8 does not fit 4 + 4 free cards on two nodes',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: { pods: busy({ 'gpu-a': 4, 'gpu-b': 4 }) },
      want: retry(
        `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'one pod asking 8 fits a node with 8 free',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: { pods: busy({ 'gpu-a': 4 }) },
      want: ready(),
    },
    {
      name: 'the largest free block names the fullest-free node, not the first by name',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: { pods: busy({ 'gpu-a': 6, 'gpu-b': 4 }) },
      want: retry(
        `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-b); will retry as capacity frees`,
      ),
    },
    {
      name: 'two pods of 8 need two whole free nodes',
      workload: makeWorkload()
        .podSet('workers', 2, [gpus(8)])
        .obj(),
      scene: { nodes: [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8), gpuNode('gpu-c', 8)], pods: busy({ 'gpu-b': 4 }) },
      want: ready(),
    },
    {
      name: 'the second pod of 8 finds only 4 free once the first took the whole node',
      workload: makeWorkload()
        .podSet('workers', 2, [gpus(8)])
        .obj(),
      scene: { pods: busy({ 'gpu-b': 4 }) },
      want: retry(
        `podset "workers": 2 pods × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-b); will retry as capacity frees`,
      ),
    },
    {
      name: 'several small pods pack onto one node',
      workload: makeWorkload()
        .podSet('workers', 4, [gpus(2)])
        .obj(),
      scene: { nodes: [gpuNode('gpu-a', 8)] },
      want: ready(),
    },
    {
      name: 'one small pod too many reports a largest free block of 0 cards',
      workload: makeWorkload()
        .podSet('workers', 5, [gpus(2)])
        .obj(),
      scene: { nodes: [gpuNode('gpu-a', 8)] },
      want: retry(
        `podset "workers": 5 pods × 2 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 0 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'best fit puts a small pod on the fuller node, leaving the whole node for a later pod of 8',
      workload: makeWorkload()
        .podSet('launcher', 1, [gpus(4)])
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: { pods: busy({ 'gpu-b': 4 }) },
      want: ready(),
    },
    {
      name: 'equally free nodes are taken in name order',
      workload: makeWorkload()
        .podSet('launcher', 1, [gpus(1)])
        .podSet('workers', 2, [gpus(8)])
        .obj(),
      want: retry(
        `podset "workers": 2 pods × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 7 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'a PodSet without cards beside one with cards places only the latter',
      workload: makeWorkload()
        .podSet('driver', 1, [cpuOnly()], { flavors: { cpu: 'gpustack-generic-linux-amd64-224c' } })
        .podSet('workers', 2, [gpus(8)])
        .obj(),
      want: ready(),
    },
    {
      name: 'PodSets on different flavors place on their own pools',
      workload: makeWorkload()
        .podSet('h100', 1, [gpus(8)])
        .podSet('a100', 1, [gpus(8)], { flavors: { [NVIDIA_CREDITS]: A100_FLAVOR } })
        .obj(),
      scene: {
        nodes: [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8, A100)],
        flavors: flavorMap(deviceFlavor(), deviceFlavor(A100)),
      },
      want: ready(),
    },
    {
      name: 'the first PodSet that does not fit is named, though a later one would fit',
      workload: makeWorkload()
        .podSet('prefill', 1, [gpus(8)])
        .podSet('decode', 3, [gpus(4)])
        .podSet('router', 1, [gpus(1)])
        .obj(),
      scene: { nodes: [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8), gpuNode('gpu-c', 8)], pods: busy({ 'gpu-c': 6 }) },
      want: retry(
        `podset "decode": 3 pods × 4 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 2 cards (node gpu-c); will retry as capacity frees`,
      ),
    },
    {
      name: 'a partial admission places only the admitted count',
      workload: makeWorkload()
        .podSet('workers', 3, [gpus(8)], { admittedCount: 2 })
        .obj(),
      want: ready(),
    },
    {
      name: 'a flavor whose labels select no node has no free block',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(1)])
        .obj(),
      scene: { nodes: [cpuNode('cpu-a'), gpuNode('gpu-x', 8, A100)] },
      want: retry(
        `podset "workers": 1 pod × 1 card do not fit in flavor ${H100_FLAVOR}; no node carries the flavor's node labels; will retry as capacity frees`,
      ),
    },
    {
      name: 'a node of the same model with another card count belongs to another flavor',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(4)])
        .obj(),
      scene: { nodes: [gpuNode('gpu-a', 8), gpuNode('gpu-small', 4)], pods: busy({ 'gpu-a': 6 }) },
      want: retry(
        `podset "workers": 1 pod × 4 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 2 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'a node of the flavor with an unreadable count label has no free cards',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(1)])
        .obj(),
      scene: {
        nodes: [
          {
            ...gpuNode('gpu-a', 8),
            metadata: {
              name: 'gpu-a',
              labels: { ...gpuNode('gpu-a', 8).metadata.labels, [`${A}${H100}.count`]: 'eight' },
            },
          },
        ],
        flavors: flavorMap(
          flavorWithNodeLabels(H100_FLAVOR, { 'gpustack.ai/managed': 'true', [`${A}${H100}`]: 'true' }),
        ),
      },
      want: retry(
        `podset "workers": 1 pod × 1 card do not fit in flavor ${H100_FLAVOR}; the largest free block is 0 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
  ];

  it.each(cases)('$name', ({ workload, scene, want }) => {
    expect(decide(workload, scene)).toEqual(want);
  });
});

describe('decideNodeDevices: nodes the scheduler would not use offer no cards', () => {
  // gpu-a has 4 free; gpu-b, whole and free, is the only place a pod of 8 fits, if the pods may use it.
  const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
  const eight = (options: PodSetOptions = {}) =>
    makeWorkload()
      .podSet('workers', 1, [gpus(8)], options)
      .obj();
  const nodesWith = (b: Node) => [gpuNode('gpu-a', 8), b];
  const pods = busy({ 'gpu-a': 4 });
  const excluded = retry(
    `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); 1 node cordoned or tainted not counted; will retry as capacity frees`,
  );
  const cases: {
    name: string;
    workload: Workload;
    b: Node;
    flavor?: ReceivedResourceFlavor;
    want: NodeDevicesVerdict;
  }[] = [
    { name: 'a cordoned node is not counted', workload: eight(), b: cordoned(gpuNode('gpu-b', 8)), want: excluded },
    {
      name: 'the same node uncordoned is counted again',
      workload: eight(),
      b: cordoned(gpuNode('gpu-b', 8), false),
      want: ready(),
    },
    {
      name: 'a cordoned node is counted for pods tolerating node.kubernetes.io/unschedulable (as the scheduler does)',
      workload: eight({
        tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
      }),
      b: cordoned(gpuNode('gpu-b', 8)),
      want: ready(),
    },
    {
      name: 'a NoSchedule taint the pods do not tolerate excludes the node',
      workload: eight(),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: excluded,
    },
    {
      name: 'a NoExecute taint the pods do not tolerate excludes the node',
      workload: eight(),
      b: tainted(gpuNode('gpu-b', 8), { ...GPU_TAINT, effect: 'NoExecute' }),
      want: excluded,
    },
    {
      name: 'a taint tolerated by the pod template counts the node',
      workload: eight({
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' }],
      }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: ready(),
    },
    {
      name: "a taint tolerated by the flavor's tolerations (Kueue adds them to the pods) counts the node",
      workload: eight(),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      flavor: withTolerations(deviceFlavor(), [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]),
      want: ready(),
    },
    {
      name: 'Exists with an empty key tolerates every taint and the cordon',
      workload: eight({ tolerations: [{ operator: 'Exists' }] }),
      b: cordoned(
        tainted(
          gpuNode('gpu-b', 8),
          GPU_TAINT,
          { key: 'maintenance', effect: 'NoExecute' },
          { key: 'team', value: 'b', effect: 'NoSchedule' },
        ),
      ),
      want: ready(),
    },
    {
      name: "Exists with a key ignores the taint's value",
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', value: 'other' }] }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: ready(),
    },
    {
      name: 'a toleration without operator compares the value (Equal is the default)',
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', value: 'present' }] }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: ready(),
    },
    {
      name: 'a PreferNoSchedule taint does not exclude',
      workload: eight(),
      b: tainted(gpuNode('gpu-b', 8), { ...GPU_TAINT, effect: 'PreferNoSchedule' }),
      want: ready(),
    },
    {
      name: 'a toleration of another effect does not tolerate the taint',
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] }),
      b: tainted(gpuNode('gpu-b', 8), { ...GPU_TAINT, effect: 'NoExecute' }),
      want: excluded,
    },
    {
      name: 'an Equal toleration with another value does not tolerate the taint',
      workload: eight({
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Equal', value: 'absent', effect: 'NoSchedule' }],
      }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: excluded,
    },
    {
      name: 'a toleration of another key does not tolerate the taint',
      workload: eight({ tolerations: [{ key: 'amd.com/gpu', operator: 'Exists' }] }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: excluded,
    },
    {
      name: 'an operator the matcher does not know (the gated Lt) tolerates nothing',
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Lt', value: 'present' }] }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      want: excluded,
    },
    {
      name: 'every NoSchedule taint must be tolerated, not just one',
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }),
      b: tainted(gpuNode('gpu-b', 8), GPU_TAINT, { key: 'team', value: 'b', effect: 'NoSchedule' }),
      want: excluded,
    },
    {
      name: 'tolerating the taints does not lift a cordon',
      workload: eight({ tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }),
      b: cordoned(tainted(gpuNode('gpu-b', 8), GPU_TAINT)),
      want: excluded,
    },
  ];

  it.each(cases)('$name', ({ workload, b, flavor, want }) => {
    expect(decide(workload, { nodes: nodesWith(b), pods, flavors: flavorMap(flavor ?? deviceFlavor()) })).toEqual(want);
  });

  it("each PodSet is placed with its own template's tolerations", () => {
    const toleration = { key: 'nvidia.com/gpu', operator: 'Exists' };
    const workload = makeWorkload()
      .podSet('tolerant', 1, [gpus(8)], { tolerations: [toleration] })
      .podSet('plain', 1, [gpus(4)])
      .obj();
    const nodes = [gpuNode('gpu-a', 8), tainted(gpuNode('gpu-b', 8), GPU_TAINT)];
    // tolerant takes gpu-b (gpu-a has only 4 free); plain may not use gpu-b and finds gpu-a with 4.
    expect(decide(workload, { nodes, pods })).toEqual(ready());
    expect(
      decide(
        makeWorkload()
          .podSet('plain', 2, [gpus(4)])
          .podSet('tolerant', 1, [gpus(8)], { tolerations: [toleration] })
          .obj(),
        { nodes, pods },
      ),
    ).toEqual(
      retry(
        `podset "plain": 2 pods × 4 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 0 cards (node gpu-a); 1 node cordoned or tainted not counted; will retry as capacity frees`,
      ),
    );
  });

  it('says no node is open when every node of the flavor is excluded, and counts them', () => {
    const nodes = [
      cordoned(gpuNode('gpu-a', 8)),
      tainted(gpuNode('gpu-b', 8), GPU_TAINT),
      tainted(cpuNode('cpu-a'), GPU_TAINT),
    ];
    expect(decide(eight(), { nodes })).toEqual(
      retry(
        `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; no node of the flavor is open to its pods; 2 nodes cordoned or tainted not counted; will retry as capacity frees`,
      ),
    );
  });

  it('does not count excluded nodes outside the flavor', () => {
    const nodes = [gpuNode('gpu-a', 8), cordoned(gpuNode('gpu-x', 8, A100)), tainted(cpuNode('cpu-a'), GPU_TAINT)];
    expect(decide(eight(), { nodes, pods })).toEqual(
      retry(
        `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    );
  });
});

describe('decideNodeDevices: which Pods take cards', () => {
  const eight = makeWorkload()
    .podSet('workers', 1, [gpus(8)])
    .obj();
  const nodes = [gpuNode('gpu-a', 8)];
  const blocked = retry(
    `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
  );
  const cases: { name: string; pods: Pod[]; want: NodeDevicesVerdict }[] = [
    { name: 'a Running pod on the node takes its cards', pods: [boundPod('p', 'gpu-a', [gpus(4)])], want: blocked },
    {
      name: 'a Pending pod already bound to the node takes its cards',
      pods: [boundPod('p', 'gpu-a', [gpus(4)], 'Pending')],
      want: blocked,
    },
    {
      name: 'a pod whose phase is not reported yet takes its cards',
      pods: [boundPod('p', 'gpu-a', [gpus(4)], '')],
      want: blocked,
    },
    { name: 'a Succeeded pod takes none', pods: [boundPod('p', 'gpu-a', [gpus(4)], 'Succeeded')], want: ready() },
    { name: 'a Failed pod takes none', pods: [boundPod('p', 'gpu-a', [gpus(4)], 'Failed')], want: ready() },
    {
      name: 'a pod not yet bound to any node takes none',
      pods: [boundPod('p', undefined, [gpus(4)], 'Pending')],
      want: ready(),
    },
    {
      name: 'pods on nodes outside the flavor take none of its cards',
      pods: [boundPod('p', 'gpu-z', [gpus(8)]), boundPod('q', 'cpu-a', [gpus(8)])],
      want: ready(),
    },
    {
      name: 'a pod asking another device resource takes none',
      pods: [boundPod('p', 'gpu-a', [gpus(4, 'requests', 'amd.com/gpu')])],
      want: ready(),
    },
    { name: 'a pod asking only CPU takes none', pods: [boundPod('p', 'gpu-a', [cpuOnly()])], want: ready() },
    {
      name: 'a pod with only a limit takes that many cards',
      pods: [boundPod('p', 'gpu-a', [gpus(4, 'limits')])],
      want: blocked,
    },
    {
      name: "a pod's init container counts when it is its largest step",
      pods: [boundPod('p', 'gpu-a', [gpus(1)], 'Running', [gpus(4)])],
      want: blocked,
    },
    {
      name: 'pods on the same node add up',
      pods: [boundPod('p', 'gpu-a', [gpus(1)]), boundPod('q', 'gpu-a', [gpus(3)])],
      want: blocked,
    },
    {
      name: 'a quantity sent as a string counts like a JSON number',
      pods: [boundPod('p', 'gpu-a', [gpus('4')])],
      want: blocked,
    },
  ];

  it.each(cases)('$name', ({ pods, want }) => {
    expect(decide(eight, { nodes, pods })).toEqual(want);
  });

  it('an overcommitted node counts as 0 free cards, not fewer', () => {
    const verdict = decide(
      makeWorkload()
        .podSet('workers', 1, [gpus(1)])
        .obj(),
      { nodes, pods: [boundPod('p', 'gpu-a', [gpus(12)])] },
    );
    expect(verdict?.message).toContain('the largest free block is 0 cards (node gpu-a)');
  });
});

describe('decideNodeDevices: cards per pod of a PodSet', () => {
  const cases: { name: string; workload: Workload; want: NodeDevicesVerdict }[] = [
    {
      name: 'a request of 8 asks 8 (free 4: does not fit)',
      workload: makeWorkload()
        .podSet('w', 1, [gpus('8')])
        .obj(),
      want: retry(
        `podset "w": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'a limit-only container asks its limit',
      workload: makeWorkload()
        .podSet('w', 1, [gpus('8', 'limits')])
        .obj(),
      want: retry(
        `podset "w": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'the request wins over the limit',
      workload: makeWorkload()
        .podSet('w', 1, [
          { name: 'main', resources: { requests: { 'nvidia.com/gpu': '2' }, limits: { 'nvidia.com/gpu': '8' } } },
        ])
        .obj(),
      want: ready(),
    },
    {
      name: 'app containers add up',
      workload: makeWorkload()
        .podSet('w', 1, [gpus(3), gpus(3)])
        .obj(),
      want: retry(
        `podset "w": 1 pod × 6 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: "an init container larger than the app sets the pod's ask",
      workload: makeWorkload()
        .podSet('w', 1, [gpus(2)], { initContainers: [gpus(8), gpus(1)] })
        .obj(),
      want: retry(
        `podset "w": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'init containers run one at a time, so they do not add up',
      workload: makeWorkload()
        .podSet('w', 1, [gpus(1)], { initContainers: [gpus(3), gpus(4)] })
        .obj(),
      want: ready(),
    },
    {
      name: 'a sidecar (restartable init container) adds to the app containers',
      workload: makeWorkload()
        .podSet('w', 1, [gpus(3)], { initContainers: [{ ...gpus(2), restartPolicy: 'Always' }] })
        .obj(),
      want: retry(
        `podset "w": 1 pod × 5 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'a JSON-number quantity counts like its string form',
      workload: makeWorkload()
        .podSet('w', 1, [gpus(8)])
        .obj(),
      want: retry(
        `podset "w": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'a fractional quantity rounds up',
      workload: makeWorkload()
        .podSet('w', 1, [gpus('4500m')])
        .obj(),
      want: retry(
        `podset "w": 1 pod × 5 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`,
      ),
    },
    {
      name: 'an unreadable quantity asks nothing',
      workload: makeWorkload()
        .podSet('w', 1, [gpus('lots')])
        .obj(),
      want: ready(NOTHING),
    },
  ];

  it.each(cases)('$name', ({ workload, want }) => {
    expect(decide(workload, { nodes: [gpuNode('gpu-a', 8)], pods: busy({ 'gpu-a': 4 }) })).toEqual(want);
  });

  it('uses the device resource the caller names for the manufacturer', () => {
    const workload = makeWorkload()
      .podSet('w', 1, [gpus(8, 'requests', 'nvidia.com/gpu.full')])
      .obj();
    const scene = {
      nodes: [gpuNode('gpu-a', 8)],
      pods: [boundPod('p', 'gpu-a', [gpus(4, 'requests', 'nvidia.com/gpu.full')])],
    };
    expect(decide(workload, { ...scene, deviceResourceOf: () => 'nvidia.com/gpu.full' })?.state).toBe('Retry');
    expect(decide(workload, scene)).toEqual(ready(NOTHING));
  });
});

describe('decideNodeDevices: no device demand needs nothing', () => {
  const cases: Case[] = [
    {
      name: 'a CPU-only Workload is Ready',
      workload: makeWorkload()
        .podSet('main', 3, [cpuOnly()], { flavors: { cpu: 'gpustack-generic-linux-amd64-224c' } })
        .obj(),
      want: ready(NOTHING),
    },
    {
      name: 'a PodSet assigned credits but asking no whole cards (a shared card) is Ready',
      workload: makeWorkload()
        .podSet('main', 1, [gpus(1, 'requests', 'nvidia.com/gpu.shared')])
        .obj(),
      want: ready(NOTHING),
    },
    {
      name: 'a PodSet of 0 pods is Ready',
      workload: makeWorkload()
        .podSet('main', 0, [gpus(8)])
        .obj(),
      want: ready(NOTHING),
    },
    {
      name: 'credits of a name that is no manufacturer are not cards',
      workload: makeWorkload()
        .podSet('main', 1, [gpus(8)], { flavors: { 'credits.gpustack.ai/acme': 'x' } })
        .obj(),
      want: ready(NOTHING),
    },
  ];

  it.each(cases)('$name', ({ workload, want }) => {
    expect(decide(workload, { pods: busy({ 'gpu-a': 8, 'gpu-b': 8 }) })).toEqual(want);
  });
});

describe('decideNodeDevices: Workloads left alone', () => {
  const base = () => makeWorkload().podSet('workers', 1, [gpus(8)]);
  const cases: { name: string; workload: Workload }[] = [
    { name: 'no QuotaReserved condition', workload: base().condition('QuotaReserved', 'Unknown').obj() },
    { name: 'quota not reserved (QuotaReserved=False)', workload: base().condition('QuotaReserved', 'False').obj() },
    { name: 'evicted', workload: base().condition('Evicted', 'True').obj() },
    { name: 'finished', workload: base().condition('Finished', 'True').obj() },
    {
      name: 'already admitted (its own pods would count against it)',
      workload: base().condition('Admitted', 'True').obj(),
    },
    { name: 'deactivated (spec.active false)', workload: base().deactivated().obj() },
    { name: 'our check not listed', workload: base().listedChecks('kueue-provisioning').obj() },
    { name: 'no checks listed', workload: base().listedChecks().obj() },
    { name: 'the admission not recorded yet', workload: base().withoutAdmission().obj() },
  ];

  it.each(cases)('$name → undefined', ({ workload }) => {
    expect(decide(workload, { pods: busy({ 'gpu-a': 8, 'gpu-b': 8 }) })).toBeUndefined();
  });

  it.each([
    ['Evicted', 'False'],
    ['Finished', 'False'],
    ['Admitted', 'False'],
  ])('still decides with %s=%s', (type, status) => {
    expect(decide(base().condition(type, status).obj())).toEqual(ready());
  });

  it('decides when our check is listed beside others', () => {
    expect(decide(base().listedChecks('kueue-provisioning', CHECK).obj())).toEqual(ready());
  });
});

describe('decideNodeDevices: no card pool to check → Retry, never Rejected', () => {
  const cases: Case[] = [
    {
      name: 'an assigned flavor the checker does not know',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)], { flavors: { [NVIDIA_CREDITS]: 'gpustack-nvidia-gone-linux-amd64-8d' } })
        .obj(),
      want: retry(
        'podset "workers": the assigned ResourceFlavor "gpustack-nvidia-gone-linux-amd64-8d" is not known to the checker; will retry once it is observed',
      ),
    },
    {
      name: 'a flavor named like an Object.prototype member is unknown, not inherited',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)], { flavors: { [NVIDIA_CREDITS]: 'constructor' } })
        .obj(),
      want: retry(
        'podset "workers": the assigned ResourceFlavor "constructor" is not known to the checker; will retry once it is observed',
      ),
    },
    {
      name: 'a flavor that pins no accelerator key',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: { flavors: flavorMap(flavorWithNodeLabels(H100_FLAVOR, { 'gpustack.ai/managed': 'true' })) },
      want: retry(
        `podset "workers": ResourceFlavor "${H100_FLAVOR}" pins no single nvidia accelerator key in spec.nodeLabels (found none); correct the flavor's node labels (will retry)`,
      ),
    },
    {
      name: 'a flavor that pins two accelerator keys',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      scene: {
        flavors: flavorMap(flavorWithNodeLabels(H100_FLAVOR, { [`${A}${H100}`]: 'true', [`${A}${A100}`]: 'true' })),
      },
      want: retry(
        `podset "workers": ResourceFlavor "${H100_FLAVOR}" pins no single nvidia accelerator key in spec.nodeLabels (found ${A100}, ${H100}); correct the flavor's node labels (will retry)`,
      ),
    },
    {
      name: 'a flavor of another manufacturer than the credits assigned',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)], {
          flavors: { [NVIDIA_CREDITS]: 'gpustack-amd-instinct-mi300x-oam-linux-amd64-8d' },
        })
        .obj(),
      scene: { flavors: flavorMap(deviceFlavor('amd-instinct-mi300x-oam')) },
      want: retry(
        'podset "workers": ResourceFlavor "gpustack-amd-instinct-mi300x-oam-linux-amd64-8d" pins no single nvidia accelerator key in spec.nodeLabels (found none); correct the flavor\'s node labels (will retry)',
      ),
    },
    {
      name: 'a PodSet assigned two credits resources',
      workload: makeWorkload()
        .podSet('workers', 1, [gpus(8)], {
          flavors: { [NVIDIA_CREDITS]: H100_FLAVOR, 'credits.gpustack.ai/amd': 'gpustack-amd-x-linux-amd64-8d' },
        })
        .obj(),
      want: retry(
        'podset "workers" is assigned flavors for 2 credits resources (credits.gpustack.ai/amd, credits.gpustack.ai/nvidia), so no single card pool can be resolved; will retry once it is one',
      ),
    },
    {
      name: "a PodSet missing from the admission's assignments",
      workload: makeWorkload()
        .podSet('launcher', 1, [cpuOnly()], { unassigned: true })
        .podSet('workers', 1, [gpus(8)])
        .obj(),
      want: retry('podset "launcher" has no flavor assignment in status.admission; will retry once Kueue records one'),
    },
  ];

  it.each(cases)('$name', ({ workload, scene, want }) => {
    expect(decide(workload, scene)).toEqual(want);
  });
});

describe('decideNodeDevices: pure and order-independent', () => {
  const workload = makeWorkload()
    .podSet('launcher', 1, [gpus(2)])
    .podSet('workers', 3, [gpus(4)])
    .podSet('a100', 1, [gpus(8)], { flavors: { [NVIDIA_CREDITS]: A100_FLAVOR } })
    .obj();
  const nodes = [
    gpuNode('gpu-c', 8),
    gpuNode('gpu-a', 8),
    gpuNode('gpu-b', 8),
    gpuNode('gpu-d', 8, A100),
    cpuNode('cpu-a'),
  ];
  const pods = [
    boundPod('p1', 'gpu-a', [gpus(2)]),
    boundPod('p2', 'gpu-b', [gpus(4)]),
    boundPod('p3', 'gpu-c', [gpus(1)]),
    boundPod('p4', 'gpu-d', [gpus(8)], 'Succeeded'),
    boundPod('p5', 'gpu-a', [gpus(8)], 'Failed'),
    boundPod('p6', undefined, [gpus(8)], 'Pending'),
  ];
  const flavors = flavorMap(deviceFlavor(), deviceFlavor(A100));

  it('does not write to a deep-frozen input and answers as for a fresh copy', () => {
    const data = { workload, nodes, pods, flavors };
    const before = structuredClone(data);
    const fresh = decideNodeDevices({ ...data, deviceResourceOf, checkName: CHECK });
    const frozen = decideNodeDevices(deepFreeze({ ...structuredClone(data), deviceResourceOf, checkName: CHECK }));
    expect(frozen).toEqual(fresh);
    expect(data).toEqual(before);
  });

  it('gives the same verdict for any order of nodes and pods', () => {
    const baseline = decideNodeDevices(inputOf(workload, { nodes, pods, flavors }));
    // launcher → gpu-b (best fit: 4 free); workers → gpu-a (6), gpu-c (7); the third finds 2, 2, 3.
    expect(baseline).toEqual(
      retry(
        `podset "workers": 3 pods × 4 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 3 cards (node gpu-c); will retry as capacity frees`,
      ),
    );
    fc.assert(
      fc.property(
        fc.shuffledSubarray(nodes, { minLength: nodes.length, maxLength: nodes.length }),
        fc.shuffledSubarray(pods, { minLength: pods.length, maxLength: pods.length }),
        (nodeOrder, podOrder) => {
          expect(decideNodeDevices(inputOf(workload, { nodes: nodeOrder, pods: podOrder, flavors }))).toEqual(baseline);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("gives the same verdict for any order of a PodSet's flavor map and the flavors by name", () => {
    const baseline = decideNodeDevices(inputOf(workload, { nodes, pods, flavors }));
    const reversed = Object.fromEntries(Object.entries(flavors).reverse());
    expect(decideNodeDevices(inputOf(workload, { nodes, pods, flavors: reversed }))).toEqual(baseline);
  });
});
