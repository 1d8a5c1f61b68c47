// Block-level topology end to end (issue 44 part 3, docs/architecture.md#topology): the chain with
// `topology: {mode: Auto}` on Nodes in three network blocks (GKE's `cloud.google.com/gce-topology-block`),
// and JobSet gangs that ask Kueue's topology-aware scheduling (TAS) for one block
// (`kueue.x-k8s.io/podset-required-topology`). Real components: etcd, kube-apiserver,
// kube-controller-manager (Job and resource claim controllers), kube-scheduler, Metacontroller,
// Kueue v0.19 with its JobSet webhooks, the JobSet manager, and from this repository the hook server,
// the admission checker and one node agent per Node on the fake vendor libraries. No kubelet: a Pod
// the scheduler binds stays Pending with spec.nodeName set (as workloads.e2e).
//
// Cluster: block-1 and block-2, eight 8 × H100 Nodes each whose cards a device plugin serves (the
// kubelet would report `nvidia.com/gpu: 8` allocatable; the agents leave those cards to it), and
// block-3, two 8 × H100 Nodes whose cards DRA serves (our ResourceSlices). One profile, one Kueue
// Topology (block, hostname), one topology-qualified flavor of 144 cards.
//
// What Kueue 0.19's TAS counts is Node allocatable against the Pod's container requests
// (`resources.NewRequestsFromPodSpec`): `nvidia.com/gpu` on device-plugin Nodes, nothing for a DRA
// claim. Scenario (a) is the gang TAS places by cards; (b) records, on the real Kueue, why a gang of
// DRA claims cannot be placed by TAS (docs/architecture.md#topology-dra).
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

import { localQueueName } from '../../src/nodefeature/index.js';
import { MANUFACTURERS } from '../../src/contracts/index.js';
import { MiB, fleet, type FakeMachine } from '../../harness/native/fake-machine.js';
import { attributeOf, waitPool, type SliceDevice } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { KUEUE_API } from '../../harness/e2e/kueue.js';
import {
  RESOURCE_API,
  claimTemplate,
  createReadyNode,
  deletePodNow,
  describePod,
  pod,
  waitBound,
  type Pod,
} from '../../harness/e2e/scheduling.js';
import { conditionOf, describeWorkload, type Workload } from '../../harness/e2e/workloads.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const NAMESPACE = 'default';
const CHECK = 'gpustack-node-devices';
const NVIDIA = 'nvidia.gpustack.ai';
const GPU = MANUFACTURERS.nvidia.deviceResource;
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const JOBSET_API = 'jobset.x-k8s.io/v1alpha2';
const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
const REQUIRED_TOPOLOGY = 'kueue.x-k8s.io/podset-required-topology';
const BLOCK = 'cloud.google.com/gce-topology-block';
const HOSTNAME = 'kubernetes.io/hostname';
/** How long the chain may take to follow a change (Metacontroller, two or three hooks deep). */
const CONVERGE_MS = 180_000;
/** Admission and binding of a gang: Kueue, TAS, the check's pass, then the Pods through the scheduler. */
const GANG_MS = 180_000;

const CARDS_PER_NODE = 8;
const PLUGIN_BLOCKS = ['block-1', 'block-2'] as const;
const DRA_BLOCK = 'block-3';
const PLUGIN_NODES_PER_BLOCK = 8;
const DRA_NODES = 2;
const nodesOf = (block: string, count: number): string[] => Array.from({ length: count }, (_, i) => `${block}-n${i}`);
const PLUGIN_NODES = PLUGIN_BLOCKS.flatMap((b) => nodesOf(b, PLUGIN_NODES_PER_BLOCK));
const NODES = [...PLUGIN_NODES, ...nodesOf(DRA_BLOCK, DRA_NODES)];
const blockOf = (node: string): string => node.replace(/-n\d+$/, '');
const CAPACITY = { cpu: '64', memory: '512Gi', pods: '110' };

const machine = (node: string): FakeMachine => ({
  lib: { nvidia: { driver: '570.124.06', runtime: 12080 } },
  devices: {
    nvidia: fleet(CARDS_PER_NODE, (i) => ({
      name: 'NVIDIA H100 80GB HBM3',
      uuid: `GPU-${node}-${i}`,
      memory: 81559n * MiB,
      cores: 132,
      cc: '9.0',
      bus: `00000000:${(0x18 + i).toString(16).toUpperCase()}:00.0`,
    })),
  },
});

let client: KubeClient;
let productKey = '';
const clusterQueue = (): string => `gpustack-${productKey}-linux-amd64`;
const localQueue = (): string => localQueueName(clusterQueue());
const timings: string[] = [];
let startedAt = 0;

type Container = Record<string, unknown>;
type PodSpec = Record<string, unknown>;
type TopologyAssignment = { levels: string[]; slices: unknown[] };
type PlacedWorkload = Workload & {
  status?: { admission?: { podSetAssignments: { name: string; topologyAssignment?: TopologyAssignment }[] } };
};

/** A JobSet of 2 Jobs × `pods` Pods that must land in one block, through our LocalQueue. */
function blockGang(name: string, pods: number, spec: PodSpec): KubeObject {
  return {
    apiVersion: JOBSET_API,
    kind: 'JobSet',
    metadata: { name, namespace: NAMESPACE, labels: { [QUEUE_LABEL]: localQueue() } },
    spec: {
      replicatedJobs: [
        {
          name: 'worker',
          replicas: 2,
          template: {
            spec: {
              parallelism: pods,
              completions: pods,
              backoffLimit: 0,
              template: {
                metadata: { annotations: { [REQUIRED_TOPOLOGY]: BLOCK } },
                spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 0, ...spec },
              },
            },
          },
        },
      ],
    },
  };
}

const pause = (resources: Record<string, unknown>): Container => ({
  name: 'main',
  image: 'registry.k8s.io/pause:3.10',
  resources,
});

/** The Workload Kueue made for a JobSet (by owner uid), or undefined. */
async function workloadOf(name: string): Promise<PlacedWorkload | undefined> {
  const owner = await client.get(JOBSET_API, 'JobSet', name, NAMESPACE);
  if (!owner) return undefined;
  return (await client.list<PlacedWorkload>(KUEUE_API, 'Workload', { namespace: NAMESPACE })).find((w) =>
    w.metadata.ownerReferences?.some((o) => o['uid'] === owner.metadata.uid),
  );
}

/** Waits until `ok` holds for the JobSet's Workload; fails with what Kueue and the check said last. */
async function waitWorkloadOf(
  name: string,
  ok: (workload: PlacedWorkload) => boolean,
  what: string,
  timeoutMs = GANG_MS,
): Promise<PlacedWorkload> {
  let last: PlacedWorkload | undefined;
  return waitFor(
    async () => {
      last = await workloadOf(name);
      return last && ok(last) ? last : undefined;
    },
    timeoutMs,
    `JobSet ${NAMESPACE}/${name}: ${what}`,
    500,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${describeWorkload(last)}`, { cause: error });
  });
}

const admitted = (w: Workload): boolean => conditionOf(w, 'Admitted')?.status === 'True';
const quotaReserved = (w: Workload): boolean => conditionOf(w, 'QuotaReserved')?.status === 'True';
const checkOf = (w: Workload) => w.status?.admissionChecks?.find((c) => c.name === CHECK);
const gangPods = (name: string): Promise<Pod[]> =>
  client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE, labelSelector: `jobset.sigs.k8s.io/jobset-name=${name}` });

/** The JobSet's Pods once `count` of them are bound; fails with the scheduler's words on one unbound. */
async function waitPodsBound(name: string, count: number): Promise<Pod[]> {
  let pods: Pod[] = [];
  try {
    return await waitFor(
      async () => {
        pods = (await gangPods(name)).filter((p) => p.metadata.deletionTimestamp === undefined);
        return pods.length === count && pods.every((p) => p.spec.nodeName) ? pods : undefined;
      },
      GANG_MS,
      `${count} Pods of JobSet ${name} bound by kube-scheduler`,
      1000,
    );
  } catch (error) {
    const unbound = pods.find((p) => !p.spec.nodeName);
    const detail = unbound ? await describePod(client, NAMESPACE, unbound.metadata.name) : `${pods.length} Pods`;
    throw new Error(`${(error as Error).message}\n${detail}`, { cause: error });
  }
}

/** A bare Pod (no queue: outside Kueue's quota, inside TAS's and the check's count) holding a node's eight device-plugin cards. */
async function holdPluginCards(node: string): Promise<string> {
  const name = `holder-${node}`;
  await client.applyObject(
    pod(name, NAMESPACE, { requests: { [GPU]: String(CARDS_PER_NODE) }, nodeSelector: { [HOSTNAME]: node } }),
  );
  expect((await waitBound(client, NAMESPACE, name)).spec.nodeName).toBe(node);
  return name;
}

/** Deletes the JobSets, the Pods and the claim templates of the namespace; waits until Workloads and claims are gone. */
async function clearNamespace(): Promise<void> {
  for (const object of await client.list(JOBSET_API, 'JobSet', { namespace: NAMESPACE }))
    await client.delete(JOBSET_API, 'JobSet', object.metadata.name, NAMESPACE);
  for (const left of await client.list('v1', 'Pod', { namespace: NAMESPACE }))
    await client.delete('v1', 'Pod', left.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
  await waitFor(
    async () =>
      (await client.list(KUEUE_API, 'Workload', { namespace: NAMESPACE })).length === 0 &&
      (await client.list('v1', 'Pod', { namespace: NAMESPACE })).length === 0 &&
      (await client.list(RESOURCE_API, 'ResourceClaim', { namespace: NAMESPACE })).length === 0,
    120_000,
    'the Workloads, Pods and claims of the deleted objects are gone',
  );
  for (const template of await client.list(RESOURCE_API, 'ResourceClaimTemplate', { namespace: NAMESPACE }))
    await client.delete(RESOURCE_API, 'ResourceClaimTemplate', template.metadata.name, NAMESPACE);
}

useCluster({
  scheduler: true,
  kueue: true,
  frameworks: ['jobset'],
  controllers: ['job'],
  hooks: true,
  checker: true,
  setup: async (c) => {
    client = c.client;
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', { spec: { topology: { mode: 'Auto' } } });
    const draAgents = [];
    for (const node of NODES) {
      const plugin = PLUGIN_NODES.includes(node);
      await createReadyNode(client, {
        name: node,
        labels: { [BLOCK]: blockOf(node) },
        capacity: plugin ? { ...CAPACITY, [GPU]: String(CARDS_PER_NODE) } : CAPACITY,
      });
      const agent = await c.startAgent(node, machine(node));
      if (!plugin) draAgents.push(agent);
    }
    for (const agent of draAgents) {
      const pool = await waitPool(
        client,
        agent,
        NVIDIA,
        (p) => p.devices.filter((d) => attributeOf(d, NVIDIA, 'mode')?.string === 'whole').length === CARDS_PER_NODE,
        `the agent publishes ${CARDS_PER_NODE} whole cards`,
      );
      productKey = attributeOf(pool.devices[0] as SliceDevice, NVIDIA, 'productKey')?.string ?? '';
    }
    if (!productKey) throw new Error('the agents publish no productKey attribute');
    type Flavor = KubeObject & { spec?: { topologyName?: string; nodeLabels?: Record<string, string> } };
    let flavor: Flavor | undefined;
    await waitFor(
      async () => {
        const queue = await client.get<KubeObject & { spec?: { resourceGroups?: unknown[]; stopPolicy?: string } }>(
          KUEUE_API,
          'ClusterQueue',
          clusterQueue(),
        );
        const local = await client.get(KUEUE_API, 'LocalQueue', localQueue(), NAMESPACE);
        flavor = (await client.list<Flavor>(KUEUE_API, 'ResourceFlavor')).find((f) =>
          f.metadata.name.startsWith(`gpustack-${productKey}-linux-amd64-`),
        );
        return (
          queue?.spec?.stopPolicy === 'None' &&
          JSON.stringify(queue.spec.resourceGroups ?? []).includes(`"${CARDS_PER_NODE * NODES.length}"`) &&
          flavor?.spec?.topologyName !== undefined &&
          local !== undefined
        );
      },
      CONVERGE_MS,
      `the chain emits ClusterQueue ${clusterQueue()} with ${CARDS_PER_NODE * NODES.length} cards on one topology-qualified flavor`,
    );
    const topologyName = flavor?.spec?.topologyName as string;
    const topology = await client.get<KubeObject & { spec: { levels: { nodeLabel: string }[] } }>(
      KUEUE_API,
      'Topology',
      topologyName,
    );
    expect(
      topology?.spec.levels.map((l) => l.nodeLabel),
      `Topology ${topologyName}`,
    ).toEqual([BLOCK, HOSTNAME]);
    log(`H100 productKey ${productKey}; flavor ${flavor?.metadata.name} → Topology ${topologyName}`);
  },
});

beforeEach(() => {
  startedAt = Date.now();
});

afterEach(async (context) => {
  const state = context.task.result?.state === 'fail' ? 'FAIL' : 'pass';
  timings.push(`${state} ${((Date.now() - startedAt) / 1000).toFixed(1)} s  ${context.task.name}`);
  await clearNamespace();
}, 300_000);

afterAll(() => {
  log(`scenario outcomes:\n  ${timings.join('\n  ')}`);
});

describe('block-level topology through Kueue TAS, the admission check and kube-scheduler', () => {
  it('(a) a JobSet gang of 2 × 4 Pods × 8 cards with block-level required topology waits while no block has 64 free cards, then lands whole in the block that has them', async () => {
    // One node's cards taken in each device-plugin block: 112 cards free, 56 in each block.
    const holders = [];
    for (const block of PLUGIN_BLOCKS) holders.push(await holdPluginCards(`${block}-n0`));

    const gpus = { requests: { [GPU]: String(CARDS_PER_NODE) }, limits: { [GPU]: String(CARDS_PER_NODE) } };
    await client.applyObject(blockGang('train', 4, { containers: [pause(gpus)] }));
    const held = await waitWorkloadOf(
      'train',
      (w) => /allows to fit only 7 out of 8/.test(conditionOf(w, 'QuotaReserved')?.message ?? ''),
      'TAS finds no block with 8 free nodes',
    );
    log(`(a) held: ${describeWorkload(held)}`);
    expect(held.spec.podSets.map((p) => p.count)).toEqual([8]);
    expect(quotaReserved(held)).toBe(false);
    expect(admitted(held)).toBe(false);
    expect(await gangPods('train'), 'no Pod while the gang waits').toEqual([]);

    // block-2 gets its eighth node back: the gang goes there, one Pod per node.
    await deletePodNow(client, NAMESPACE, holders[1] as string);
    const gang = await waitWorkloadOf('train', admitted, 'admitted once block-2 has the cards');
    log(`(a) admitted: ${describeWorkload(gang)}`);
    expect(checkOf(gang)?.state).toBe('Ready');
    const assignment = gang.status?.admission?.podSetAssignments[0]?.topologyAssignment;
    // Kueue 0.19 writes the lowest level only (the hosts name their blocks).
    expect(assignment?.levels, 'TAS assigns hosts').toEqual([HOSTNAME]);
    log(`(a) topologyAssignment ${JSON.stringify(assignment)}`);

    const pods = await waitPodsBound('train', 8);
    const block2 = nodesOf('block-2', PLUGIN_NODES_PER_BLOCK);
    expect(new Set(pods.map((p) => p.spec.nodeName)), 'eight Pods on the eight nodes of block-2').toEqual(
      new Set(block2),
    );
    for (const current of pods) {
      const spec = current.spec as { nodeSelector?: Record<string, string>; schedulingGates?: unknown[] };
      // Kueue's TAS ungater pins each Pod to its assigned host and lifts its scheduling gate.
      expect(spec.nodeSelector?.[HOSTNAME], `${current.metadata.name} pinned by TAS`).toBe(current.spec.nodeName);
      expect(spec.schedulingGates ?? []).toEqual([]);
    }
  });

  it("(b) a gang of DRA claims is beyond Kueue 0.19's TAS: with no container request Kueue never reserves quota for it; with a cpu request TAS packs it onto one host and the check refuses, naming the domain", async () => {
    await client.applyObject(claimTemplate('eight', 'gpustack-nvidia', { count: CARDS_PER_NODE }));
    const claimSpec = (resources: Record<string, unknown>): PodSpec => ({
      nodeSelector: { [BLOCK]: DRA_BLOCK },
      resourceClaims: [{ name: 'cards', resourceClaimTemplateName: 'eight' }],
      containers: [pause({ ...resources, claims: [{ name: 'cards' }] })],
    });

    // Claims only: TAS's per-Pod requests are empty (claims are not container requests), and
    // Kueue counts an empty request into a domain zero times (resources.CountInWithLimitingResource),
    // so the fit check after the flavor assignment fails on every pass, whatever the block holds.
    await client.applyObject(blockGang('claims-only', 1, claimSpec({})));
    const never = await waitWorkloadOf(
      'claims-only',
      (w) => conditionOf(w, 'QuotaReserved')?.message === 'Workload no longer fits after processing another workload',
      "Kueue's TAS fit check refuses the empty per-Pod request",
    );
    log(`(b) claims only: ${describeWorkload(never)}`);
    expect(quotaReserved(never)).toBe(false);
    expect(checkOf(never)?.state).toBe('Pending');
    await client.delete(JOBSET_API, 'JobSet', 'claims-only', NAMESPACE);

    // With a cpu request TAS places by cpu and pods, blind to cards: both Pods on one host of
    // block-3, which holds 8 cards, not 16. The check verifies the cards inside that domain and
    // says Retry naming it, so no Pod is released to wait unbound.
    await client.applyObject(blockGang('claims-cpu', 1, claimSpec({ requests: { cpu: '1' }, limits: { cpu: '1' } })));
    const refused = await waitWorkloadOf(
      'claims-cpu',
      (w) => checkOf(w)?.state === 'Retry' && /topology domain/.test(checkOf(w)?.message ?? ''),
      `the ${CHECK} check refuses the domain TAS chose`,
    );
    log(`(b) claims + cpu: ${describeWorkload(refused)}`);
    expect(checkOf(refused)?.message).toMatch(
      new RegExp(`^podset "worker": topology domain ${HOSTNAME}=${DRA_BLOCK}-n\\d of flavor \\S+: 2 pods × `),
    );
    expect(admitted(refused)).toBe(false);
    expect(await gangPods('claims-cpu'), 'no Pod of a refused gang').toEqual([]);
  });
});
