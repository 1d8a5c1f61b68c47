// The real Kueue manager admitting work through the chain: etcd, kube-apiserver,
// kube-controller-manager, Metacontroller and Kueue built from the Go module proxy; Kueue run
// out-of-cluster with our resource transformations (manifests/kueue) and its kueue.x-k8s.io
// webhooks registered, so every object the chain emits also passes Kueue's own validation.
// Install order (reference, "Checklist for the e2e harness"): CRDs, Kueue + webhooks, our
// hook server, Metacontroller, our manifests, then the Nodes.
//
// The gpustack-node-devices checker runs as the built CLI (`gpustack-operator admission`).
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

import { afterEach, describe, expect, it } from 'vitest';

import { MANUFACTURER_NAMES, type Node } from '../../src/k8s/index.js';
import { DRA_COUNTER_MINOR, draQuotaResource, kueueMinor } from '../../src/kueue/index.js';
import { localQueueName } from '../../src/nodefeature/index.js';
import { sleep, waitFor, type KubeClient, type KubeObject, converge } from '../../harness/e2e/apply.js';
import { createNode, exampleNodes } from '../../harness/e2e/chain.js';
import { ensureComponents } from '../../harness/e2e/components.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import { quantities, type Kueue } from '../../harness/e2e/kueue.js';
import { markNodeReady } from '../../harness/e2e/scheduling.js';
import { freePorts, startProcess, type ManagedProcess } from '../../harness/e2e/processes.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import { makeInstanceType } from '../builders/gpustack.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const NAMESPACE = 'default';
const CHECK = 'gpustack-node-devices';
const IN_USE = 'kueue.x-k8s.io/resource-in-use';
const GENERIC = 'gpustack-generic-linux-amd64';
const H100 = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64';
const H100_FLAVOR = `${H100}-8d`;
const RESOURCE_API = 'resource.k8s.io/v1';
const BLOCKER_LABEL = 'app.kubernetes.io/name';
const BLOCKER_SELECTOR = `${BLOCKER_LABEL}=e2e-blocker`;
/** Kueue admits within a second or two of a Job's creation (measured: ~150 ms after its Workload). */
const ADMIT_MS = 60_000;
/**
 * Kueue v0.17 on a `Retry` with requeueAfterSeconds 30 (measured, and pkg/controller/core/
 * workload_controller.go): it sets status.requeueState.requeueAt = the check's lastTransitionTime
 * + 30 s and KEEPS the quota reservation meanwhile (QuotaReserved stays True, the Job suspended);
 * at requeueAt it evicts (reason AdmissionCheck), re-reserves in the same breath (Requeued=True,
 * BackoffFinished) and resets the check to Pending ("Reset to Pending after eviction. Previously:
 * Retry", retryCount 1). Admission after the blocking Pods go therefore takes up to ~30 s plus the
 * checker's answer; 150 s leaves room for one more Retry round.
 */
const RETRY_ADMIT_MS = 150_000;

type Condition = { type: string; status: string; reason?: string; message?: string };
type Conditioned = KubeObject & { status?: { conditions?: Condition[] } };
type CheckState = { name: string; state: string; message?: string; requeueAfterSeconds?: number; retryCount?: number };
type Workload = KubeObject & {
  spec: { queueName?: string; podSets: { name: string; count: number }[] };
  status?: {
    conditions?: Condition[];
    admission?: {
      clusterQueue: string;
      podSetAssignments: {
        name: string;
        flavors?: Record<string, string>;
        resourceUsage?: Record<string, string>;
        count?: number;
      }[];
    };
    admissionChecks?: CheckState[];
    requeueState?: { count?: number; requeueAt?: string };
  };
};
type ManagedFields = { manager: string; operation: string; subresource?: string; fieldsV1?: Record<string, unknown> };
type Job = KubeObject & { spec: { suspend?: boolean; template: { spec: { nodeSelector?: Record<string, string> } } } };

/** The Kueue version this file runs (named in the suite's title, as the issue asks). */
const KUEUE_VERSION = (() => {
  try {
    const { kueue } = ensureComponents(['kueue']);
    return kueue.module === 'prebuilt' && kueue.version !== 'prebuilt' ? `${kueue.version} (prebuilt)` : kueue.version;
  } catch {
    return '(unavailable)';
  }
})();

let client: KubeClient;
let kueue: Kueue;
let checker: ManagedProcess | undefined;

const condition = (
  object: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined => object?.status?.conditions?.find((c) => c.type === type);
const isTrue = (object: { status?: { conditions?: Condition[] } } | undefined, type: string): boolean =>
  condition(object, type)?.status === 'True';

/** The two 8-card H100 nodes of one flavor (the example node and a twin) and three CPU-only nodes. */
function clusterNodes(): Node[] {
  const [h100] = exampleNodes('h100-8x.yaml') as [Node];
  const twin = structuredClone(h100);
  twin.metadata.name = 'gpu-h100-02';
  twin.metadata.labels = { ...twin.metadata.labels, 'kubernetes.io/hostname': 'gpu-h100-02' };
  return [h100, twin, ...exampleNodes('cpu-only.yaml')];
}

function job(name: string, queue: string, resources: Record<string, string>, parallelism = 1): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NAMESPACE, labels: { 'kueue.x-k8s.io/queue-name': queue } },
    spec: {
      suspend: true,
      parallelism,
      completions: parallelism,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: resources, limits: resources },
            },
          ],
        },
      },
    },
  };
}

/**
 * A Job whose pods each take `cards` whole cards through a ResourceClaimTemplate on `deviceClass`
 * (only templates count in Kueue; it reads the template when it builds the Workload).
 */
function claimJob(name: string, queue: string, template: string, parallelism = 1): KubeObject {
  const base = job(name, queue, {}, parallelism) as KubeObject & {
    spec: { template: { spec: { containers: Record<string, unknown>[]; resourceClaims?: unknown[] } } };
  };
  base.spec.template.spec.resourceClaims = [{ name: 'cards', resourceClaimTemplateName: template }];
  base.spec.template.spec.containers = [
    { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'cards' }] } },
  ];
  return base;
}

function claimTemplate(name: string, deviceClass: string, count: number): KubeObject {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      spec: {
        devices: {
          requests: [{ name: 'cards', exactly: { deviceClassName: deviceClass, allocationMode: 'ExactCount', count } }],
        },
      },
    },
  };
}

/**
 * A stand-in for what the agent publishes (docs/architecture.md#resourceslices), reduced to what Kueue's counter charge reads:
 * one counter set per card in its own slice, and each card's whole device consuming all of it.
 */
function standInPool(node: string): KubeObject[] {
  const cards = [0, 1];
  const pool = { name: node, generation: 1, resourceSliceCount: 2 };
  const counters = { memory: { value: '81559Mi' }, units: { value: '1600000' } };
  const base = { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceSlice' };
  return [
    {
      ...base,
      metadata: { name: `e2e-${node}-counters` },
      spec: {
        driver: 'nvidia.gpustack.ai',
        nodeName: node,
        pool,
        sharedCounters: cards.map((i) => ({ name: `card-${i}-counters`, counters })),
      },
    },
    {
      ...base,
      metadata: { name: `e2e-${node}-devices` },
      spec: {
        driver: 'nvidia.gpustack.ai',
        nodeName: node,
        pool,
        devices: cards.map((i) => ({
          name: `card-${i}`,
          attributes: { mode: { string: 'whole' }, productKey: { string: 'nvidia-h100-80gb-hbm3' } },
          capacity: { memory: { value: '81559Mi' }, units: { value: '1600000' } },
          consumesCounters: [{ counterSet: `card-${i}-counters`, counters }],
        })),
      },
    },
  ];
}

/** A Pod standing in for running work: bound straight to `node` (no scheduler, no kubelet: it stays Pending). */
function boundPod(name: string, node: string, cards: number): KubeObject {
  const resources = { 'nvidia.com/gpu': String(cards) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { [BLOCKER_LABEL]: 'e2e-blocker' } },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      containers: [
        { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { requests: resources, limits: resources } },
      ],
    },
  };
}

/**
 * Stands in for the kubelet and the node lifecycle controller, neither of which runs here: the API
 * server's TaintNodesByCondition admission taints every new Node `node.kubernetes.io/not-ready:
 * NoSchedule` until it reports Ready, and the checker (rightly) counts no cards on such a node.
 */
async function markReady(name: string): Promise<void> {
  const node = await client.get<KubeObject & { spec?: { taints?: { key: string; effect: string }[] } }>(
    'v1',
    'Node',
    name,
  );
  const taints = node?.spec?.taints ?? [];
  expect(
    taints.map((t) => `${t.key}:${t.effect}`),
    `new Node ${name}`,
  ).toContain('node.kubernetes.io/not-ready:NoSchedule');
  await markNodeReady(client, name);
}

async function workloadOf(jobName: string): Promise<Workload | undefined> {
  const owner = await client.get('batch/v1', 'Job', jobName, NAMESPACE);
  if (!owner) return undefined;
  return (await client.list<Workload>(KUEUE, 'Workload', { namespace: NAMESPACE })).find((w) =>
    w.metadata.ownerReferences?.some((o) => o['uid'] === owner.metadata.uid),
  );
}

function describeWorkload(w: Workload | undefined): string {
  if (!w) return 'no Workload yet';
  const conditions = (w.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`)
    .join(' ');
  const checks = (w.status?.admissionChecks ?? []).map((c) => `${c.name}:${c.state} "${c.message ?? ''}"`).join(' ');
  return `Workload ${w.metadata.name}: ${conditions || 'no conditions'}${checks ? `; checks ${checks}` : ''}`;
}

/** Waits until the Job's Workload is Admitted and Kueue has unsuspended the Job; returns both. */
async function admitted(jobName: string, timeoutMs = ADMIT_MS): Promise<{ workload: Workload; job: Job }> {
  let last: Workload | undefined;
  let lastJob: Job | undefined;
  try {
    return await waitFor(
      async () => {
        last = await workloadOf(jobName);
        lastJob = await client.get<Job>('batch/v1', 'Job', jobName, NAMESPACE);
        return isTrue(last, 'Admitted') && lastJob?.spec.suspend === false
          ? { workload: last as Workload, job: lastJob }
          : undefined;
      },
      timeoutMs,
      `Job ${jobName} admitted and unsuspended`,
      500,
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\n${describeWorkload(last)}; job suspend=${String(lastJob?.spec.suspend)}`,
      { cause: error },
    );
  }
}

async function deleteJob(name: string): Promise<void> {
  await client.delete('batch/v1', 'Job', name, NAMESPACE, { gracePeriodSeconds: 0 });
  await converge(
    `Job ${name} and its Workload are gone`,
    async () => {
      const left = (await client.list<Workload>(KUEUE, 'Workload', { namespace: NAMESPACE })).filter((w) =>
        w.metadata.name.includes(name),
      );
      return [
        ...((await client.get('batch/v1', 'Job', name, NAMESPACE)) ? ['Job still there'] : []),
        ...left.map((w) => `Workload ${w.metadata.name} still there`),
      ];
    },
    60_000,
  );
}

// Install order (as the fixture does it): CRDs, Kueue + webhooks, our hook server, Metacontroller, our
// manifests (through Kueue's webhooks), the checker; then the Nodes.
const cluster = useCluster({
  kueue: true,
  hooks: true,
  checker: true,
  setup: async (c) => {
    client = c.client;
    kueue = c.kueue as Kueue;
    checker = c.checker?.process;
    log(
      `Kueue ${kueue.version}: config ${JSON.stringify({ ...kueue.config, resources: { ...(kueue.config['resources'] as object), transformations: `(${((kueue.config['resources'] as { transformations?: unknown[] }).transformations ?? []).length} from manifests/kueue)` } })}`,
    );
    for (const node of clusterNodes()) {
      await createNode(client, node);
      await markReady(node.metadata.name);
    }
    await waitFor(
      async () => (await fetch(`${c.checker?.url}/healthz`, { signal: AbortSignal.timeout(2000) })).status === 200,
      60_000,
      `the checker (gpustack-operator admission) did not report /healthz 200 at ${c.checker?.url}; see ${checker?.logFile}`,
    );
    log(`checker running: ${CLI} admission (pid ${checker?.pid}, ${c.checker?.url})`);
  },
});

/**
 * Removes what a test that failed before its own clean-up left behind, which would fail the next:
 * Jobs (their Workloads hold quota), the blocker Pods (they hold cards), claim templates and the
 * stand-in ResourceSlices.
 */
async function removeLeftovers(): Promise<void> {
  for (const left of await client.list('batch/v1', 'Job', { namespace: NAMESPACE }))
    await deleteJob(left.metadata.name);
  const blockers = await client.list('v1', 'Pod', { namespace: NAMESPACE, labelSelector: BLOCKER_SELECTOR });
  for (const pod of blockers) await client.delete('v1', 'Pod', pod.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
  for (const template of await client.list(RESOURCE_API, 'ResourceClaimTemplate', { namespace: NAMESPACE }))
    await client.delete(RESOURCE_API, 'ResourceClaimTemplate', template.metadata.name, NAMESPACE);
  for (const slice of await client.list(RESOURCE_API, 'ResourceSlice'))
    if (slice.metadata.name.startsWith('e2e-')) await client.delete(RESOURCE_API, 'ResourceSlice', slice.metadata.name);
}

afterEach(async () => {
  await removeLeftovers();
}, 120_000);

describe(`Kueue ${KUEUE_VERSION} (real manager, webhooks registered) admitting work through the chain`, () => {
  it('every ClusterQueue the chain emits becomes Active: flavors and the gpustack-node-devices check resolved', async () => {
    const h100Groups = [
      {
        // Credits (device plugin, shares, DRA claims from Kueue 0.18) and whole DRA cards (Kueue 0.17).
        coveredResources: ['credits.gpustack.ai/nvidia', 'cards.gpustack.ai/nvidia'],
        flavors: [
          {
            name: H100_FLAVOR,
            resources: [
              { name: 'credits.gpustack.ai/nvidia', nominalQuota: '25600k' },
              { name: 'cards.gpustack.ai/nvidia', nominalQuota: '16' },
            ],
          },
        ],
      },
    ];
    // Both H100 Nodes join at once: a queue counting only the first one is on its way, not the answer.
    await converge(
      'the chain emitted the generic and H100 queues with both H100 Nodes, and Kueue reports every ClusterQueue Active',
      async () => {
        const queues = await client.list<Conditioned & { spec?: { resourceGroups?: unknown } }>(KUEUE, 'ClusterQueue', {
          labelSelector: 'resource.gpustack.ai/type=instancetypes',
        });
        const names = queues.map((q) => q.metadata.name);
        const check = await client.get<Conditioned>(KUEUE, 'AdmissionCheck', CHECK);
        const h100Now = queues.find((q) => q.metadata.name === H100)?.spec?.resourceGroups;
        return [
          ...[GENERIC, H100].filter((name) => !names.includes(name)).map((name) => `no ClusterQueue ${name}`),
          ...(h100Now === undefined || isDeepStrictEqual(h100Now, h100Groups)
            ? []
            : [`ClusterQueue ${H100} quotas are ${JSON.stringify(h100Now)}`]),
          ...queues
            .filter((q) => !isTrue(q, 'Active'))
            .map((q) => `ClusterQueue ${q.metadata.name} not Active: ${JSON.stringify(condition(q, 'Active'))}`),
          ...(isTrue(check, 'Active')
            ? []
            : [`AdmissionCheck ${CHECK} not Active: ${JSON.stringify(condition(check, 'Active'))}`]),
        ];
      },
    );
    const h100 = await client.get<
      KubeObject & {
        spec: {
          admissionChecksStrategy?: unknown;
          resourceGroups: {
            coveredResources: string[];
            flavors: { name: string; resources: { nominalQuota: string }[] }[];
          }[];
        };
      }
    >(KUEUE, 'ClusterQueue', H100);
    expect(h100?.spec.admissionChecksStrategy).toEqual({ admissionChecks: [{ name: CHECK }] });
    expect(h100?.spec.resourceGroups).toEqual(h100Groups);
    // Kueue's webhook or controller holds every flavor and queue it knows with its finalizer.
    for (const kind of ['ClusterQueue', 'ResourceFlavor']) {
      const objects = await client.list(KUEUE, kind, {
        labelSelector: `resource.gpustack.ai/type=${kind === 'ClusterQueue' ? 'instancetypes' : 'nodes'}`,
      });
      for (const object of objects)
        expect(object.metadata.finalizers, `${kind} ${object.metadata.name}`).toContain(IN_USE);
    }
    // The chain's LocalQueues are Active too (their ClusterQueue is).
    await converge(
      'every LocalQueue of ours is Active',
      async () =>
        (await client.list<Conditioned>(KUEUE, 'LocalQueue', { namespace: NAMESPACE }))
          .filter((q) => q.metadata.name.startsWith('gpustack-fnv64-') && !isTrue(q, 'Active'))
          .map((q) => `LocalQueue ${q.metadata.name} not Active`),
      30_000,
    );
  });

  it("a CPU-only suspended Job through the generic pool's LocalQueue is admitted against cpu quota and unsuspended", async () => {
    const generic = await client.get<KubeObject & { spec: { admissionChecksStrategy?: unknown } }>(
      KUEUE,
      'ClusterQueue',
      GENERIC,
    );
    expect(
      generic?.spec.admissionChecksStrategy,
      'the generic pool carries no device check, so no checker is needed',
    ).toBeUndefined();
    const queue = localQueueName(GENERIC);
    expect(await client.get(KUEUE, 'LocalQueue', queue, NAMESPACE)).toBeDefined();
    const name = 'e2e-cpu-only';
    await client.applyObject(job(name, queue, { cpu: '2' }));
    const { workload, job: live } = await admitted(name);
    expect(workload.status?.admission?.clusterQueue).toBe(GENERIC);
    const [assignment] = workload.status?.admission?.podSetAssignments ?? [];
    expect(quantities(assignment?.resourceUsage)).toEqual({ cpu: 2 });
    expect(assignment?.flavors?.['cpu']).toMatch(/^gpustack-generic-linux-amd64-\d+c$/);
    // Kueue injects the flavor's nodeLabels when it unsuspends.
    expect(live.spec.template.spec.nodeSelector).toMatchObject({
      'general.feature.gpustack.ai/generic': 'true',
      'gpustack.ai/managed': 'true',
    });
    await deleteJob(name);
  });

  it('deleting an InstanceType while Kueue runs: Kueue holds its ClusterQueue while a Workload is admitted, then releases it; nothing is left behind', async () => {
    const name = 'e2e-kueue-custom-cpu';
    await client.applyObject(
      makeInstanceType(name).byAdmin().displayName('Custom CPU').unitResources('2', '4Gi').manifest(),
    );
    const entrance = localQueueName(name);
    await converge('the admin InstanceType gets an Active ClusterQueue and LocalQueue', async () => {
      const queue = await client.get<Conditioned>(KUEUE, 'ClusterQueue', name);
      const local = await client.get<Conditioned>(KUEUE, 'LocalQueue', entrance, NAMESPACE);
      return [
        ...(isTrue(queue, 'Active')
          ? []
          : [`ClusterQueue ${JSON.stringify(condition(queue, 'Active') ?? queue ?? null)}`]),
        ...(queue?.metadata.finalizers?.includes(IN_USE) ? [] : ["ClusterQueue without Kueue's finalizer"]),
        ...(isTrue(local, 'Active') ? [] : ['LocalQueue not Active']),
      ];
    });
    const jobName = 'e2e-custom-cpu-job';
    await client.applyObject(job(jobName, entrance, { cpu: '1' }));
    await admitted(jobName);

    await client.delete(GPUSTACK, 'InstanceType', name);
    // Kueue keeps a ClusterQueue with an admitted Workload (its finalizer) until the Workload goes.
    await converge(
      "the ClusterQueue is terminating, held by Kueue's finalizer",
      async () => {
        const queue = await client.get(KUEUE, 'ClusterQueue', name);
        return queue?.metadata.deletionTimestamp && queue.metadata.finalizers?.includes(IN_USE)
          ? []
          : [`ClusterQueue ${JSON.stringify(queue?.metadata ?? null)}`];
      },
      60_000,
    );
    await sleep(3000);
    expect(
      (await client.get(KUEUE, 'ClusterQueue', name))?.metadata.finalizers,
      'Kueue must not release a ClusterQueue in use',
    ).toContain(IN_USE);

    await deleteJob(jobName);
    await converge('queue, LocalQueues and the InstanceType are gone', async () => {
      const locals = (await client.list(KUEUE, 'LocalQueue')).filter((q) => q.metadata.name === entrance);
      return [
        ...((await client.get(KUEUE, 'ClusterQueue', name)) ? ['ClusterQueue still there'] : []),
        ...locals.map((q) => `LocalQueue ${q.metadata.namespace}/${q.metadata.name} still there`),
        ...((await client.get(GPUSTACK, 'InstanceType', name)) ? ['InstanceType still there'] : []),
      ];
    });
    // Nothing stuck: no Kueue object of any kind waits on a finalizer, and the shared flavors stay.
    for (const kind of ['ClusterQueue', 'ResourceFlavor', 'LocalQueue', 'AdmissionCheck', 'Workload']) {
      const stuck = (await client.list(KUEUE, kind)).filter((o) => o.metadata.deletionTimestamp);
      expect(stuck.map((o) => `${kind} ${o.metadata.name}: ${JSON.stringify(o.metadata.finalizers)}`)).toEqual([]);
    }
    const generic = await client.get<Conditioned>(KUEUE, 'ClusterQueue', GENERIC);
    expect(isTrue(generic, 'Active')).toBe(true);
  });

  it('a Job asking nvidia.com/gpu: 2 is admitted: 3,200,000 credits reserved, gpustack-node-devices Ready, Job unsuspended', async () => {
    const name = 'e2e-h100-2';
    await client.applyObject(job(name, localQueueName(H100), { 'nvidia.com/gpu': '2' }));
    const { workload, job: live } = await admitted(name);
    expect(workload.status?.admission?.clusterQueue).toBe(H100);
    const [assignment] = workload.status?.admission?.podSetAssignments ?? [];
    expect(quantities(assignment?.resourceUsage)).toEqual({ 'credits.gpustack.ai/nvidia': 3_200_000 });
    expect(assignment?.flavors).toEqual({ 'credits.gpustack.ai/nvidia': H100_FLAVOR });
    expect(workload.status?.admissionChecks).toContainEqual(expect.objectContaining({ name: CHECK, state: 'Ready' }));
    expect(live.spec.template.spec.nodeSelector).toMatchObject({
      'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count': '8',
    });
    // Server-side apply on the status subresource: our field manager owns our entry and nothing else.
    const fresh = await client.get<KubeObject & { metadata: { managedFields?: ManagedFields[] } }>(
      KUEUE,
      'Workload',
      workload.metadata.name,
      NAMESPACE,
    );
    const ours = (fresh?.metadata.managedFields ?? []).filter((m) => m.manager === CHECK);
    expect(ours.map((m) => [m.operation, m.subresource])).toEqual([['Apply', 'status']]);
    const owned = ours[0]?.fieldsV1 ?? {};
    expect(Object.keys(owned)).toEqual(['f:status']);
    expect(Object.keys((owned['f:status'] ?? {}) as object)).toEqual(['f:admissionChecks']);
    expect(Object.keys((owned['f:status'] as Record<string, object>)['f:admissionChecks'] ?? {})).toEqual([
      `k:{"name":"${CHECK}"}`,
    ]);
    await deleteJob(name);
  });

  it('8 cards per pod on 4 + 4 free cards: quota yes, check Retry, Job stays suspended; admitted once the blocking Pods go', async () => {
    // The flavor selects exactly the two 8-card nodes, so 4 + 4 are all the free cards there are.
    const flavor = await client.get<KubeObject & { spec: { nodeLabels: Record<string, string> } }>(
      KUEUE,
      'ResourceFlavor',
      H100_FLAVOR,
    );
    const selector = Object.entries(flavor?.spec.nodeLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    expect((await client.list('v1', 'Node', { labelSelector: selector })).map((n) => n.metadata.name).sort()).toEqual([
      'gpu-h100-01',
      'gpu-h100-02',
    ]);
    const blockers = [boundPod('e2e-blocker-1', 'gpu-h100-01', 4), boundPod('e2e-blocker-2', 'gpu-h100-02', 4)];
    for (const pod of blockers) await client.applyObject(pod);
    const name = 'e2e-h100-8';
    await client.applyObject(job(name, localQueueName(H100), { 'nvidia.com/gpu': '8' }));
    let retry: CheckState | undefined;
    let last: Workload | undefined;
    try {
      await waitFor(
        async () => {
          last = await workloadOf(name);
          retry = last?.status?.admissionChecks?.find((c) => c.name === CHECK && c.state === 'Retry');
          return retry;
        },
        ADMIT_MS,
        'the check answers Retry',
        500,
      );
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${describeWorkload(last)}`, { cause: error });
    }
    log(`Retry: ${retry?.message ?? ''} (requeueAfterSeconds ${String(retry?.requeueAfterSeconds)})`);
    expect(retry?.message).toMatch(/largest free block is 4 cards/);
    expect(retry?.requeueAfterSeconds).toBe(30);
    expect(quantities(last?.status?.admission?.podSetAssignments[0]?.resourceUsage)).toEqual({
      'credits.gpustack.ai/nvidia': 12_800_000,
    });
    expect((await client.get<Job>('batch/v1', 'Job', name, NAMESPACE))?.spec.suspend).toBe(true);
    await sleep(5000);
    expect(
      (await client.get<Job>('batch/v1', 'Job', name, NAMESPACE))?.spec.suspend,
      'still suspended a while later',
    ).toBe(true);
    expect(isTrue(await workloadOf(name), 'Admitted')).toBe(false);

    const freedAt = Date.now();
    for (const pod of blockers)
      await client.delete('v1', 'Pod', pod.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
    const { workload } = await admitted(name, RETRY_ADMIT_MS);
    log(
      `admitted ${((Date.now() - freedAt) / 1000).toFixed(1)} s after the blocking Pods went (requeue state ${JSON.stringify(workload.status?.requeueState ?? null)})`,
    );
    expect(workload.status?.admissionChecks).toContainEqual(expect.objectContaining({ name: CHECK, state: 'Ready' }));
    await deleteJob(name);
  });

  it('a cordoned node offers no cards: 8 cards per pod, one node cordoned and 4 busy on the other → Retry naming what was left out', async () => {
    await client.mergePatch('v1', 'Node', 'gpu-h100-02', { spec: { unschedulable: true } });
    const blocker = boundPod('e2e-blocker-3', 'gpu-h100-01', 4);
    const name = 'e2e-h100-cordoned';
    try {
      await client.applyObject(blocker);
      await client.applyObject(job(name, localQueueName(H100), { 'nvidia.com/gpu': '8' }));
      let last: Workload | undefined;
      const retry = await waitFor(
        async () => {
          last = await workloadOf(name);
          return last?.status?.admissionChecks?.find((c) => c.name === CHECK && c.state === 'Retry');
        },
        ADMIT_MS,
        'the check answers Retry',
        500,
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${describeWorkload(last)}`, { cause: error });
      });
      // 8 + 4 free by quota (16 cards, 4 busy); the cordoned node's 8 do not count for the scheduler.
      expect(retry.message).toMatch(
        /the largest free block is 4 cards \(node gpu-h100-01\); 1 node cordoned or tainted not counted/,
      );
      expect((await client.get<Job>('batch/v1', 'Job', name, NAMESPACE))?.spec.suspend).toBe(true);
    } finally {
      await client.mergePatch('v1', 'Node', 'gpu-h100-02', { spec: { unschedulable: null } });
      await client.delete('v1', 'Pod', blocker.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
      await deleteJob(name);
    }
  });

  it('Kueue runs with the DRA configuration of its version; the DeviceClasses the chain emits pass the API server', async () => {
    const minor = kueueMinor(kueue.version) ?? DRA_COUNTER_MINOR + 1;
    const config = kueue.config as {
      featureGates: Record<string, boolean>;
      resources: { deviceClassMappings?: { name: string; deviceClassNames: string[]; sources?: unknown[] }[] };
    };
    // The manager validates gates and mappings at start (an unknown gate or a bad mapping is fatal):
    // it is running, so it took this configuration.
    expect(kueue.process.running()).toBe(true);
    if (minor < DRA_COUNTER_MINOR) expect(config.featureGates['DynamicResourceAllocation']).toBe(true);
    else expect(config.featureGates['KueueDRAIntegration']).toBe(true);
    const mappings = config.resources.deviceClassMappings ?? [];
    expect(mappings.map((m) => m.name)).toEqual(MANUFACTURER_NAMES.map((m) => draQuotaResource(m, minor)));
    expect(mappings.find((m) => m.deviceClassNames.includes('gpustack-nvidia'))?.name).toBe(
      draQuotaResource('nvidia', minor),
    );
    // Metacontroller created the classes (a declared child it may write); the API server compiled their CEL.
    type DeviceClass = KubeObject & {
      spec: { selectors: { cel: { expression: string } }[]; extendedResourceName?: string };
    };
    let classes: DeviceClass[] = [];
    await converge('the chain has written its DeviceClasses', async () => {
      classes = await client.list<DeviceClass>('resource.k8s.io/v1', 'DeviceClass', {
        labelSelector: 'resource.gpustack.ai/type=deviceclasses',
      });
      const names = classes.map((c) => c.metadata.name);
      return ['gpustack-nvidia', 'gpustack-nvidia-shared', 'gpustack-nvidia-h100-80gb-hbm3']
        .filter((n) => !names.includes(n))
        .map((n) => `no DeviceClass ${n}`);
    });
    expect(classes).toHaveLength(2 * MANUFACTURER_NAMES.length + 2);
    const shared = classes.find((c) => c.metadata.name === 'gpustack-nvidia-shared');
    expect(shared?.spec.extendedResourceName).toBe('nvidia.com/gpu.shared');
    log(`DeviceClasses: ${classes.map((c) => c.metadata.name).join(', ')}`);
  });

  it('a ResourceClaimTemplate on gpustack-nvidia draws on the H100 queue: 2 cards reserved (0.17: cards, 0.18+: 3,200,000 credits), 9 × 2 cards stay suspended', async () => {
    const minor = kueueMinor(kueue.version) ?? DRA_COUNTER_MINOR + 1;
    const quota = draQuotaResource('nvidia', minor);
    // From 0.18 Kueue charges a card the `units` its devices consume, read from the ResourceSlices:
    // no agent runs here, so publish a stand-in pool of two whole cards on each H100 node.
    const slices =
      minor >= DRA_COUNTER_MINOR
        ? clusterNodes()
            .slice(0, 2)
            .flatMap((n) => standInPool(n.metadata.name))
        : [];
    for (const slice of slices) await client.applyObject(slice);
    await client.applyObject(claimTemplate('e2e-two-cards', 'gpustack-nvidia', 2));
    const name = 'e2e-claim-2';
    await client.applyObject(claimJob(name, localQueueName(H100), 'e2e-two-cards'));
    // Quota is what this proves: the checker's per-card verdict on claims is the ledger's (issue 10 item 4).
    let workload: Workload | undefined;
    await converge(`Job ${name} holds a quota reservation`, async () => {
      workload = await workloadOf(name);
      return isTrue(workload, 'QuotaReserved') ? [] : [describeWorkload(workload)];
    });
    const [assignment] = workload?.status?.admission?.podSetAssignments ?? [];
    expect(workload?.status?.admission?.clusterQueue).toBe(H100);
    // Two cards: 2 of cards.gpustack.ai/nvidia, or 3,200,000 credits (two cards of M).
    expect(quantities(assignment?.resourceUsage)).toEqual({ [quota]: minor >= DRA_COUNTER_MINOR ? 3_200_000 : 2 });
    expect(assignment?.flavors).toEqual({ [quota]: H100_FLAVOR });
    log(`claim Job ${name}: ${JSON.stringify(assignment)}`);
    await deleteJob(name);

    // 9 pods × 2 cards = 18 > the 16 cards of the pool: no quota, the Job stays suspended.
    const over = 'e2e-claim-over';
    await client.applyObject(claimJob(over, localQueueName(H100), 'e2e-two-cards', 9));
    let message = '';
    await converge(`Job ${over} is refused quota`, async () => {
      const w = await workloadOf(over);
      if (isTrue(w, 'QuotaReserved')) throw new Error(`${over} got quota: ${describeWorkload(w)}`);
      // Kueue 0.17 says it in an Event at once; its status write of the same message can lose a
      // conflict with the checker's and land only at its next attempt (measured: 2 minutes later).
      type Event = KubeObject & { involvedObject?: { name?: string }; message?: string };
      const events = w
        ? (await client.list<Event>('v1', 'Event', { namespace: NAMESPACE })).filter(
            (e) => e.involvedObject?.name === w.metadata.name,
          )
        : [];
      message =
        [condition(w, 'QuotaReserved')?.message ?? '', ...events.map((e) => e.message ?? '')].find((m) =>
          m.includes(`insufficient quota for ${quota}`),
        ) ?? '';
      return message ? [] : [describeWorkload(w)];
    });
    expect((await client.get<Job>('batch/v1', 'Job', over, NAMESPACE))?.spec.suspend).toBe(true);
    log(`over-quota claim Job: ${message}`);
    await deleteJob(over);
    await client.delete('resource.k8s.io/v1', 'ResourceClaimTemplate', 'e2e-two-cards', NAMESPACE);
    for (const slice of slices) await client.delete('resource.k8s.io/v1', 'ResourceSlice', slice.metadata.name);
  });

  it('shares through the extended resource: a Job asking nvidia.com/gpu.shared: 3 is charged three tenths of a card (480k credits)', async () => {
    // gpustack-nvidia-shared serves nvidia.com/gpu.shared; Kueue still charges it by the transformation.
    const name = 'e2e-shares-3';
    await client.applyObject(job(name, localQueueName(H100), { 'nvidia.com/gpu.shared': '3' }));
    let workload: Workload | undefined;
    await converge(`Job ${name} holds a quota reservation`, async () => {
      workload = await workloadOf(name);
      return isTrue(workload, 'QuotaReserved') ? [] : [describeWorkload(workload)];
    });
    const usage = workload?.status?.admission?.podSetAssignments[0]?.resourceUsage ?? {};
    log(`shares Job ${name}: ${JSON.stringify(usage)}`);
    expect(quantities(usage)).toEqual({ 'credits.gpustack.ai/nvidia': 480_000 });
    await deleteJob(name);
  });

  it('6. two checkers at once: only the Lease holder decides; SIGKILLed, the other takes over and admits what the first would have', async () => {
    const first = checker as ManagedProcess;
    const firstUrl = cluster.checker?.url as string;
    const [port] = (await freePorts(1)) as [number];
    const secondUrl = `http://127.0.0.1:${port}`;
    const healthz = async (url: string): Promise<{ healthy?: boolean; leading?: boolean }> => {
      try {
        return (await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) })).json()) as object;
      } catch {
        return {};
      }
    };
    // A second replica, as a rolling update or a node cut off from the cluster would run it.
    const second = cluster.manage(
      startProcess(
        'admission-checker-2',
        process.execPath,
        [CLI, 'admission', '--kubeconfig', cluster.kubeconfig, '--health-port', String(port)],
        cluster.logsDir,
        { env: process.env },
      ),
    );
    await waitFor(async () => (await healthz(secondUrl)).healthy, 60_000, 'the second checker lists every store', 500);
    expect([(await healthz(firstUrl)).leading, (await healthz(secondUrl)).leading]).toEqual([true, false]);
    const written = (proc: ManagedProcess) =>
      readFileSync(proc.logFile, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"admission check written"')).length;

    // 4 + 4 busy: the holder answers Retry, the follower writes nothing.
    const blockers = [boundPod('e2e-blocker-1', 'gpu-h100-01', 4), boundPod('e2e-blocker-2', 'gpu-h100-02', 4)];
    for (const pod of blockers) await client.applyObject(pod);
    const name = 'e2e-h100-8-two-checkers';
    const followerWritesBefore = written(second);
    await client.applyObject(job(name, localQueueName(H100), { 'nvidia.com/gpu': '8' }));
    await waitFor(
      async () =>
        (await workloadOf(name))?.status?.admissionChecks?.find((c) => c.name === CHECK && c.state === 'Retry'),
      ADMIT_MS,
      'the holder answers Retry',
      500,
    );
    await sleep(3000);
    expect(written(second), 'the follower wrote a verdict').toBe(followerWritesBefore);

    // The holder dies mid-work (no goodbye: its Lease must expire); the blockers go meanwhile.
    const killedAt = Date.now();
    await first.kill();
    for (const pod of blockers)
      await client.delete('v1', 'Pod', pod.metadata.name, NAMESPACE, { gracePeriodSeconds: 0 });
    await waitFor(async () => (await healthz(secondUrl)).leading, 60_000, 'the second checker leads', 500);
    const tookOverMs = Date.now() - killedAt;
    const { workload } = await admitted(name, RETRY_ADMIT_MS);
    expect(workload.status?.admissionChecks).toContainEqual(expect.objectContaining({ name: CHECK, state: 'Ready' }));
    expect(written(second)).toBeGreaterThan(followerWritesBefore);
    log(
      `fault: the leading checker SIGKILLed beside a second | took over ${(tookOverMs / 1000).toFixed(1)} s after the kill, admitted ${((Date.now() - killedAt) / 1000).toFixed(1)} s after | checks: follower wrote nothing while following, one Ready (the single checker's verdict)`,
    );
    await deleteJob(name);
    // The rest of the file runs on the second; the first stays down (its exit is not a clean one).
    checker = second;
  });

  it('the checker exits 0 on SIGTERM', async () => {
    expect(checker?.running()).toBe(true);
    await checker?.stop();
    expect(await checker?.exited).toEqual({ code: 0, signal: null });
  });
});
