// Real workloads end to end (issue 44 part 3, docs/architecture.md#workloads): JobSet training gangs,
// LeaderWorkerSet groups (multi-node inference) and a Deployment of shared-card Pods (single-node
// inference) through Kueue's integrations — the ones `kueue-config` names — on real components:
// etcd, kube-apiserver, kube-controller-manager (Job, ReplicaSet, Deployment, StatefulSet and resource
// claim controllers), kube-scheduler, Metacontroller, the Kueue manager with its webhooks for JobSets,
// LeaderWorkerSets, Pods and Deployments, the JobSet and LeaderWorkerSet managers with theirs, and from
// this repository the hook server, the admission checker and one node agent per Node on the fake
// vendor libraries. No kubelet: a Pod the scheduler binds stays Pending with spec.nodeName set and its
// claims allocated, which is the placement these scenarios assert (as dra.e2e does).
//
// Cluster: eight Nodes with 8× H100 each: one ClusterQueue of 64 cards.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

import { localQueueName } from '../../src/nodefeature/index.js';
import { MANUFACTURERS } from '../../src/contracts/index.js';
import { MiB, fleet, type FakeMachine } from '../../harness/native/fake-machine.js';
import { attributeOf, waitPool, type SliceDevice } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { KUEUE_API } from '../../harness/e2e/kueue.js';
import {
  RESOURCE_API,
  allocated,
  claimTemplate,
  claimsOf,
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
const JOBSET_API = 'jobset.x-k8s.io/v1alpha2';
const LWS_API = 'leaderworkerset.x-k8s.io/v1';
const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
const PRIORITY_LABEL = 'kueue.x-k8s.io/priority-class';
/** How long the chain may take to follow a change (Metacontroller, two or three hooks deep). */
const CONVERGE_MS = 120_000;
/** Admission and binding of a gang: Kueue, the check's pass, then eight Pods through the scheduler. */
const GANG_MS = 180_000;

const NODES = Array.from({ length: 8 }, (_, i) => `wl-${i}`);
const CARDS_PER_NODE = 8;

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
/** The ClusterQueue of the H100s and its LocalQueue in the namespace. */
const clusterQueue = (): string => `gpustack-${productKey}-linux-amd64`;
const localQueue = (): string => localQueueName(clusterQueue());
const timings: string[] = [];
let startedAt = 0;

/** A Pod spec whose one container uses a claim from `template` and requests nothing else (the device queue covers only cards). */
function claimPodSpec(template: string, restartPolicy: 'Never' | 'Always' = 'Never'): Record<string, unknown> {
  return {
    restartPolicy,
    terminationGracePeriodSeconds: 0,
    resourceClaims: [{ name: 'cards', resourceClaimTemplateName: template }],
    containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'cards' }] } }],
  };
}

/** A JobSet of `replicas` Jobs × `pods` Pods, each Pod with a claim from `template`, through our LocalQueue. */
function jobSet(name: string, template: string, options: { replicas: number; pods: number; priority?: string }) {
  return {
    apiVersion: JOBSET_API,
    kind: 'JobSet',
    metadata: {
      name,
      namespace: NAMESPACE,
      labels: { [QUEUE_LABEL]: localQueue(), ...(options.priority ? { [PRIORITY_LABEL]: options.priority } : {}) },
    },
    spec: {
      replicatedJobs: [
        {
          name: 'worker',
          replicas: options.replicas,
          template: {
            spec: {
              parallelism: options.pods,
              completions: options.pods,
              backoffLimit: 0,
              template: { spec: claimPodSpec(template) },
            },
          },
        },
      ],
    },
  };
}

/** The Workload Kueue made for an object (by owner uid), or undefined. */
async function workloadOf(apiVersion: string, kind: string, name: string): Promise<Workload | undefined> {
  const owner = await client.get(apiVersion, kind, name, NAMESPACE);
  if (!owner) return undefined;
  return (await client.list<Workload>(KUEUE_API, 'Workload', { namespace: NAMESPACE })).find((w) =>
    w.metadata.ownerReferences?.some((o) => o['uid'] === owner.metadata.uid),
  );
}

/** Waits until `ok` holds for the object's Workload; fails with what Kueue and the check said last. */
async function waitWorkloadOf(
  apiVersion: string,
  kind: string,
  name: string,
  ok: (workload: Workload) => boolean,
  what: string,
  timeoutMs = GANG_MS,
): Promise<Workload> {
  let last: Workload | undefined;
  return waitFor(
    async () => {
      last = await workloadOf(apiVersion, kind, name);
      return last && ok(last) ? last : undefined;
    },
    timeoutMs,
    `${kind} ${NAMESPACE}/${name}: ${what}`,
    500,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${describeWorkload(last)}`, { cause: error });
  });
}

const admitted = (w: Workload): boolean => conditionOf(w, 'Admitted')?.status === 'True';
const checkState = (w: Workload): string | undefined => w.status?.admissionChecks?.find((c) => c.name === CHECK)?.state;

/** The Pods matching `selector`, once `count` of them are bound; fails with the scheduler's words on one unbound. */
async function waitPodsBound(selector: string, count: number, timeoutMs = GANG_MS): Promise<Pod[]> {
  let pods: Pod[] = [];
  try {
    return await waitFor(
      async () => {
        pods = (await client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE, labelSelector: selector })).filter(
          (p) => p.metadata.deletionTimestamp === undefined,
        );
        const bound = pods.filter((p) => p.spec.nodeName);
        return bound.length === count && pods.length === count ? bound : undefined;
      },
      timeoutMs,
      `${count} Pods (${selector}) bound by kube-scheduler`,
      1000,
    );
  } catch (error) {
    const unbound = pods.find((p) => !p.spec.nodeName);
    const detail = unbound ? await describePod(client, NAMESPACE, unbound.metadata.name) : `${pods.length} Pods`;
    throw new Error(`${(error as Error).message}\n${detail}`, { cause: error });
  }
}

/** Each Pod's claim holds `cards` devices of ours, all on the Node the Pod is bound to; returns the Nodes. */
async function assertCardsOnTheirNodes(pods: readonly Pod[], cards: number): Promise<string[]> {
  const nodes: string[] = [];
  for (const current of pods) {
    const claims = await claimsOf(client, current);
    expect(claims, `claims of ${current.metadata.name}`).toHaveLength(1);
    const results = allocated(claims[0] as KubeObject);
    expect(results, `devices of ${current.metadata.name}`).toHaveLength(cards);
    for (const result of results) expect(result).toMatchObject({ driver: NVIDIA, pool: current.spec.nodeName });
    nodes.push(current.spec.nodeName as string);
  }
  return nodes;
}

/** Waits until no ResourceClaim is left in the namespace, or only the ones `keep` accepts. */
async function claimsReleased(keep: (claim: KubeObject) => boolean = () => false): Promise<void> {
  let left: string[] = [];
  await waitFor(
    async () => {
      left = (await client.list(RESOURCE_API, 'ResourceClaim', { namespace: NAMESPACE }))
        .filter((c) => !keep(c))
        .map((c) => c.metadata.name);
      return left.length === 0;
    },
    120_000,
    'the claims of the deleted Pods are released and deleted',
  ).catch((error: Error) => {
    throw new Error(`${error.message}; left: ${left.join(', ')}`, { cause: error });
  });
}

/** Deletes every workload object, Pod and template of the namespace and waits until their claims are gone. */
async function clearNamespace(): Promise<void> {
  for (const [apiVersion, kind] of [
    [JOBSET_API, 'JobSet'],
    [LWS_API, 'LeaderWorkerSet'],
    ['apps/v1', 'Deployment'],
    ['batch/v1', 'Job'],
  ] as const)
    for (const object of await client.list(apiVersion, kind, { namespace: NAMESPACE }))
      await client.delete(apiVersion, kind, object.metadata.name, NAMESPACE);
  await waitFor(
    async () => (await client.list('apps/v1', 'StatefulSet', { namespace: NAMESPACE })).length === 0,
    60_000,
    "the LeaderWorkerSets' StatefulSets are gone",
  );
  for (const left of await client.list('v1', 'Pod', { namespace: NAMESPACE }))
    await client.delete('v1', 'Pod', left.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
  await claimsReleased();
  // Kueue's Workloads go with their owners (the garbage collector): the next scenario counts its own.
  await waitFor(
    async () => (await client.list(KUEUE_API, 'Workload', { namespace: NAMESPACE })).length === 0,
    120_000,
    'the Workloads of the deleted objects are gone',
  );
  for (const template of await client.list(RESOURCE_API, 'ResourceClaimTemplate', { namespace: NAMESPACE }))
    await client.delete(RESOURCE_API, 'ResourceClaimTemplate', template.metadata.name, NAMESPACE);
}

useCluster({
  scheduler: true,
  kueue: true,
  frameworks: ['jobset', 'lws', 'pod', 'deployment'],
  controllers: ['job', 'replicaset', 'deployment', 'statefulset'],
  hooks: true,
  checker: true,
  setup: async (c) => {
    client = c.client;
    const agents = [];
    for (const node of NODES) {
      await createReadyNode(client, { name: node });
      agents.push(await c.startAgent(node, machine(node)));
    }
    for (const agent of agents) {
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
    // The chain's queue of the H100s, with all 64 cards, and its LocalQueue here.
    await waitFor(
      async () => {
        const queue = await client.get<KubeObject & { spec?: { resourceGroups?: unknown[]; stopPolicy?: string } }>(
          KUEUE_API,
          'ClusterQueue',
          clusterQueue(),
        );
        const local = await client.get(KUEUE_API, 'LocalQueue', localQueue(), NAMESPACE);
        const classes = (await client.list(RESOURCE_API, 'DeviceClass')).map((d) => d.metadata.name);
        return (
          queue?.spec?.stopPolicy === 'None' &&
          JSON.stringify(queue.spec.resourceGroups ?? []).includes(`"${CARDS_PER_NODE * NODES.length}"`) &&
          local !== undefined &&
          classes.includes('gpustack-nvidia') &&
          classes.includes(`gpustack-${productKey}-shared`)
        );
      },
      CONVERGE_MS,
      `the chain emits ClusterQueue ${clusterQueue()} with ${CARDS_PER_NODE * NODES.length} cards, its LocalQueue and our DeviceClasses`,
    );
    for (const [name, value] of [
      ['e2e-low', 100],
      ['e2e-high', 1000],
    ] as const)
      await client.applyObject({ apiVersion: KUEUE_API, kind: 'WorkloadPriorityClass', metadata: { name }, value });
    log(`H100 productKey ${productKey}; ClusterQueue ${clusterQueue()}, LocalQueue ${localQueue()}`);
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

describe('workloads through Kueue, the admission check and kube-scheduler', () => {
  it("(a) a JobSet gang of 2 × 4 Pods with 8 cards each is held while a node's cards are taken, then admitted as one and placed on the nodes with the cards", async () => {
    await client.applyObject(claimTemplate('eight', 'gpustack-nvidia', { count: CARDS_PER_NODE }));
    // A bare Pod (no queue) holds the eight cards of one node: quota for 64 cards is there, 56 cards are free.
    await client.applyObject(
      pod('holder', NAMESPACE, {
        claims: [{ name: 'cards', template: 'eight' }],
        nodeSelector: { 'kubernetes.io/hostname': 'wl-7' },
      }),
    );
    expect((await waitBound(client, NAMESPACE, 'holder')).spec.nodeName).toBe('wl-7');

    await client.applyObject(jobSet('train', 'eight', { replicas: 2, pods: 4 }));
    const held = await waitWorkloadOf(
      JOBSET_API,
      'JobSet',
      'train',
      (w) => checkState(w) === 'Retry',
      `the ${CHECK} check says Retry`,
    );
    log(`(a) held: ${describeWorkload(held)}`);
    expect(held.spec.podSets.map((p) => p.count)).toEqual([8]);
    expect(admitted(held)).toBe(false);
    const suspended = await client.get<KubeObject & { spec: { suspend?: boolean } }>(
      JOBSET_API,
      'JobSet',
      'train',
      NAMESPACE,
    );
    expect(suspended?.spec.suspend, "Kueue's webhook suspended the JobSet on create").toBe(true);
    expect(
      await client.list('v1', 'Pod', { namespace: NAMESPACE, labelSelector: 'jobset.sigs.k8s.io/jobset-name=train' }),
    ).toEqual([]);

    await deletePodNow(client, NAMESPACE, 'holder');
    const gang = await waitWorkloadOf(JOBSET_API, 'JobSet', 'train', admitted, 'admitted once the cards are free');
    log(`(a) admitted: ${describeWorkload(gang)}`);
    expect(gang.status?.admission?.clusterQueue).toBe(clusterQueue());
    const pods = await waitPodsBound('jobset.sigs.k8s.io/jobset-name=train', 8);
    const nodes = await assertCardsOnTheirNodes(pods, CARDS_PER_NODE);
    expect(new Set(nodes), 'eight Pods of eight cards take the eight nodes, one each').toEqual(new Set(NODES));
  });

  it('(b) a LeaderWorkerSet group (leader + worker, 8 cards each) is admitted as one Workload and placed on two nodes', async () => {
    await client.applyObject(claimTemplate('eight', 'gpustack-nvidia', { count: CARDS_PER_NODE }));
    await client.applyObject({
      apiVersion: LWS_API,
      kind: 'LeaderWorkerSet',
      metadata: { name: 'infer', namespace: NAMESPACE, labels: { [QUEUE_LABEL]: localQueue() } },
      spec: {
        replicas: 1,
        leaderWorkerTemplate: {
          size: 2,
          // StatefulSets underneath: their Pods restart Always.
          leaderTemplate: { spec: claimPodSpec('eight', 'Always') },
          workerTemplate: { spec: claimPodSpec('eight', 'Always') },
        },
      },
    });
    const pods = await waitPodsBound('leaderworkerset.sigs.k8s.io/name=infer', 2);
    const nodes = await assertCardsOnTheirNodes(pods, CARDS_PER_NODE);
    expect(new Set(nodes).size, 'leader and worker on two nodes').toBe(2);
    const workloads = (await client.list<Workload>(KUEUE_API, 'Workload', { namespace: NAMESPACE })).filter(
      (w) => w.spec.queueName === localQueue(),
    );
    log(`(b) ${workloads.map((w) => describeWorkload(w)).join('\n    ')}`);
    expect(workloads, 'one Workload for the group').toHaveLength(1);
    const group = workloads[0] as Workload;
    expect(admitted(group)).toBe(true);
    expect(checkState(group)).toBe('Ready');
    expect(
      group.spec.podSets.reduce((sum, p) => sum + p.count, 0),
      'leader + worker',
    ).toBe(2);
  });

  it('(c) a Deployment of shared-card Pods goes through Kueue Pod by Pod and shares cards', async () => {
    const shared = `${MANUFACTURERS.nvidia.deviceResource}.shared`;
    await client.applyObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'serve', namespace: NAMESPACE, labels: { [QUEUE_LABEL]: localQueue() } },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'serve' } },
        template: {
          metadata: { labels: { app: 'serve' } },
          spec: {
            terminationGracePeriodSeconds: 0,
            containers: [
              {
                name: 'main',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { [shared]: '1' }, limits: { [shared]: '1' } },
              },
            ],
          },
        },
      },
    });
    const pods = await waitPodsBound('app=serve', 3);
    for (const current of pods) {
      expect(current.metadata.labels?.[QUEUE_LABEL], `${current.metadata.name} carries the queue`).toBe(localQueue());
      const [claim] = await claimsOf(client, current);
      const [result] = allocated(claim as KubeObject);
      expect(result, `${current.metadata.name}'s shared card`).toMatchObject({
        driver: NVIDIA,
        pool: current.spec.nodeName,
      });
      expect(result?.device).toMatch(/^card-\d+-shared$/);
    }
    const workloads = (await client.list<Workload>(KUEUE_API, 'Workload', { namespace: NAMESPACE })).filter(
      (w) => w.spec.queueName === localQueue(),
    );
    log(`(c) ${workloads.map((w) => describeWorkload(w)).join('\n    ')}`);
    expect(workloads, 'one Workload per Pod').toHaveLength(3);
    for (const w of workloads) {
      expect(admitted(w), describeWorkload(w)).toBe(true);
      expect(checkState(w)).toBe('Ready');
    }
  });

  it('(d) a higher-priority gang evicts a lower one, whose Pods and cards are released, and takes the cards', async () => {
    await client.applyObject(claimTemplate('eight', 'gpustack-nvidia', { count: CARDS_PER_NODE }));
    await client.applyObject(jobSet('low', 'eight', { replicas: 2, pods: 4, priority: 'e2e-low' }));
    await waitWorkloadOf(JOBSET_API, 'JobSet', 'low', admitted, 'the low-priority gang admitted');
    await assertCardsOnTheirNodes(await waitPodsBound('jobset.sigs.k8s.io/jobset-name=low', 8), CARDS_PER_NODE);

    await client.applyObject(jobSet('high', 'eight', { replicas: 2, pods: 4, priority: 'e2e-high' }));
    const evicted = await waitWorkloadOf(
      JOBSET_API,
      'JobSet',
      'low',
      (w) => conditionOf(w, 'Evicted')?.status === 'True' || conditionOf(w, 'Preempted')?.status === 'True',
      'the low-priority gang evicted',
    );
    log(`(d) evicted: ${describeWorkload(evicted)}`);
    expect(
      `${conditionOf(evicted, 'Preempted')?.reason ?? ''} ${conditionOf(evicted, 'Evicted')?.reason ?? ''}`,
    ).toMatch(/Preempt|InClusterQueue/);
    const high = await waitWorkloadOf(JOBSET_API, 'JobSet', 'high', admitted, 'the high-priority gang admitted');
    log(`(d) admitted: ${describeWorkload(high)}`);
    const pods = await waitPodsBound('jobset.sigs.k8s.io/jobset-name=high', 8);
    expect(new Set(await assertCardsOnTheirNodes(pods, CARDS_PER_NODE))).toEqual(new Set(NODES));
    // The low gang holds nothing: no Pod of it left, every claim left is the high gang's.
    expect(
      await client.list('v1', 'Pod', { namespace: NAMESPACE, labelSelector: 'jobset.sigs.k8s.io/jobset-name=low' }),
    ).toEqual([]);
    const highClaims = new Set(
      pods.flatMap((p) => (p.status?.resourceClaimStatuses ?? []).map((s) => s.resourceClaimName)),
    );
    await claimsReleased((claim) => highClaims.has(claim.metadata.name));
    const low = await client.get<KubeObject & { spec: { suspend?: boolean } }>(JOBSET_API, 'JobSet', 'low', NAMESPACE);
    expect(low?.spec.suspend, 'the evicted JobSet is suspended').toBe(true);
  });
});
