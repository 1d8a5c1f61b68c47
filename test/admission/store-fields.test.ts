/**
 * What the stores keep of each object: the projection drops what a real cluster sends and the
 * checker never reads (managedFields, annotations, images, env, volumes, statuses), keeps every
 * field the decision, the reconcile pass and the informer read, and keeps the cordon, taint and
 * toleration fields. Proof by decision: the same scenario decided on the fat objects and on their
 * slim projections gives the same verdict for every Workload.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Informer,
  NODES,
  PODS,
  RESOURCE_CLAIMS,
  RESOURCE_CLAIM_TEMPLATES,
  RESOURCE_FLAVORS,
  RESOURCE_SLICES,
  WORKLOADS,
  deviceTaintRules,
  type WatchedResource,
} from '../../src/admission/index.js';
import { buildDeviceLedger, podDeviceAsks } from '../../src/dra/index.js';
import { allocatedClaim, claimTemplate, nodePool } from '../dra/builders.js';
import type { KubeObject, Node } from '../../src/k8s/index.js';
import { createKubeApi } from '../../src/api-client/index.js';
import {
  decideNodeDevices,
  type Container,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from '../../src/placement/index.js';
import { deviceResourceOf, resolveSettings } from '../../src/contracts/index.js';
import {
  CHECK,
  H100,
  boundPod,
  cpuOnly,
  deviceFlavor,
  gpuNode,
  gpus,
  makeWorkload,
  type WorkloadWrapper,
} from '../placement/builders.js';
import { eventually, kubeConfigFor, recordingLogger, startFakeKube, type FakeKube } from './support.js';

type Json = Record<string, unknown>;

const MANAGED_FIELDS = [
  {
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    manager: 'kubelet',
    operation: 'Update',
    time: '2026-02-01T07:59:31Z',
    fieldsV1: { 'f:status': { 'f:images': {}, 'f:conditions': {} } },
  },
  {
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    manager: 'nfd-master',
    operation: 'Update',
    time: '2025-04-02T03:29:40Z',
    fieldsV1: { 'f:metadata': { 'f:labels': { 'f:feature.node.kubernetes.io/cpu-cpuid.AVX512F': {} } } },
  },
];

function container(c: Container, i: number): Json {
  return {
    ...c,
    image: `nvcr.io/nvidia/pytorch:24.12-py3@sha256:${'ab'.repeat(32)}`,
    imagePullPolicy: 'IfNotPresent',
    command: ['python', '-m', 'torch.distributed.run'],
    args: ['--nproc-per-node=8', 'train.py', `--shard=${i}`],
    env: Array.from({ length: 20 }, (_, e) => ({ name: `ENV_${e}`, value: `value-${e}` })),
    ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }],
    volumeMounts: [
      { name: 'data', mountPath: '/data' },
      { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 10 },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

/** The pod spec a real API server returns around the containers the builder set. */
function fatPodSpec(spec: Json): Json {
  return {
    ...spec,
    containers: (spec['containers'] as Container[]).map(container),
    ...(spec['initContainers'] ? { initContainers: (spec['initContainers'] as Container[]).map(container) } : {}),
    volumes: [
      { name: 'data', persistentVolumeClaim: { claimName: 'data' } },
      { name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } },
    ],
    serviceAccountName: 'default',
    schedulerName: 'default-scheduler',
    dnsPolicy: 'ClusterFirst',
    securityContext: {},
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }] }],
        },
      },
    },
  };
}

/** A builder's Node as `kubectl get node -o json` prints it: annotations, managedFields, cordon, taints, images, status. */
function fatNode(node: Node, extra: { unschedulable?: boolean; taints?: Json[] } = {}): Json {
  return {
    ...node,
    metadata: {
      ...node.metadata,
      resourceVersion: '4711',
      creationTimestamp: '2025-04-02T03:27:51Z',
      annotations: {
        'nfd.node.kubernetes.io/feature-labels': 'cpu-cpuid.AVX512F,cpu-model.family',
        'node.alpha.kubernetes.io/ttl': '0',
      },
      managedFields: MANAGED_FIELDS,
    },
    spec: {
      podCIDR: '10.244.1.0/24',
      providerID: 'aws:///us-east-1a/i-0123456789abcdef0',
      taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }],
      ...extra,
    },
    status: {
      ...(node.status ?? {}),
      allocatable: { 'nvidia.com/gpu': '8', cpu: '223500m' },
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: '2026-02-01T07:59:31Z',
        },
      ],
      images: Array.from({ length: 25 }, (_, i) => ({
        names: [
          `docker.io/vllm/vllm-openai@sha256:${String(i).repeat(64).slice(0, 64)}`,
          `docker.io/vllm/vllm-openai:v0.8.${i}`,
        ],
        sizeBytes: 9_000_000_000 + i,
      })),
      nodeInfo: {
        architecture: 'amd64',
        kubeletVersion: 'v1.31.4',
        osImage: 'Ubuntu 22.04.5 LTS',
        machineID: 'f'.repeat(32),
      },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    },
  };
}

/** A builder's Pod as a real cluster returns it. */
function fatPod(pod: Pod): Json {
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      resourceVersion: '5150',
      generateName: 'train-',
      creationTimestamp: '2026-02-01T08:00:00Z',
      labels: {
        'app.kubernetes.io/name': 'train',
        'kueue.x-k8s.io/queue-name': 'default',
        'pod-template-hash': '7d9f8b6c5d',
      },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(pod.spec),
        'cni.projectcalico.org/podIP': '10.244.1.7/32',
      },
      ownerReferences: [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          name: 'train',
          uid: 'uid-job',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: MANAGED_FIELDS,
    },
    spec: {
      ...fatPodSpec(pod.spec),
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      priority: 0,
    },
    status: {
      ...(pod.status ?? {}),
      hostIP: '10.0.0.1',
      podIP: '10.244.1.7',
      podIPs: [{ ip: '10.244.1.7' }],
      qosClass: 'Burstable',
      startTime: '2026-02-01T08:00:05Z',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-02-01T08:00:30Z' }],
      containerStatuses: [
        {
          name: 'main',
          ready: true,
          restartCount: 0,
          image: 'nvcr.io/nvidia/pytorch:24.12-py3',
          imageID: 'sha256:abc',
          containerID: 'containerd://abc',
          started: true,
          state: { running: { startedAt: '2026-02-01T08:00:20Z' } },
        },
      ],
    },
  };
}

/** A builder's Workload as Kueue stores it: labels, owners, managedFields, full templates with tolerations and a node selector, usage and podSetUpdates. */
function fatWorkload(workload: Workload): Json {
  const status = workload.status ?? {};
  return {
    ...workload,
    metadata: {
      ...workload.metadata,
      resourceVersion: '777',
      generation: 2,
      creationTimestamp: '2026-02-01T08:00:00Z',
      labels: { 'kueue.x-k8s.io/job-uid': 'uid-job' },
      annotations: { 'kueue.x-k8s.io/last-applied': 'x'.repeat(500) },
      ownerReferences: [
        { apiVersion: 'batch/v1', kind: 'Job', name: workload.metadata.name, uid: 'uid-job', controller: true },
      ],
      managedFields: MANAGED_FIELDS,
    },
    spec: {
      ...workload.spec,
      priority: 0,
      priorityClassSource: '',
      podSets: workload.spec.podSets.map((p) => ({
        ...p,
        minCount: p.count,
        template: {
          metadata: {
            labels: { 'app.kubernetes.io/name': 'train' },
            annotations: { 'sidecar.istio.io/inject': 'false' },
          },
          spec: {
            ...fatPodSpec(p.template.spec),
            tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
            nodeSelector: { 'kubernetes.io/arch': 'amd64' },
          },
        },
      })),
    },
    status: {
      ...status,
      resourceRequests: [{ name: 'workers', resources: { 'nvidia.com/gpu': '8', cpu: '1' } }],
      ...(status.admission
        ? {
            admission: {
              ...status.admission,
              podSetAssignments: status.admission.podSetAssignments.map((a) => ({
                ...a,
                resourceUsage: { 'credits.gpustack.ai/nvidia': '8' },
              })),
            },
          }
        : {}),
      admissionChecks: (status.admissionChecks ?? []).map((c) => ({
        ...c,
        retryCount: 1,
        podSetUpdates: [{ name: 'workers', labels: { a: 'b' }, tolerations: [] }],
      })),
    },
  };
}

/** A builder's flavor as the API server holds it once the chain applied it. */
function fatFlavor(flavor: ReceivedResourceFlavor): Json {
  return {
    ...flavor,
    metadata: {
      ...flavor.metadata,
      resourceVersion: '99',
      generation: 1,
      finalizers: ['kueue.x-k8s.io/resource-in-use'],
      annotations: { 'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(flavor) },
      managedFields: MANAGED_FIELDS,
    },
    spec: {
      ...flavor.spec,
      nodeTaints: [{ key: 'gpustack.ai/reserved', value: 'true', effect: 'NoSchedule' }],
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
    },
  };
}

/** Parsed at the boundary as the informer does; slim is what the store then keeps. */
function received<T extends KubeObject>(resource: WatchedResource<T>, raw: Json): { fat: T; slim: T } {
  const fat = resource.schema.parse(raw);
  return { fat, slim: resource.slim(fat) };
}

const settings = (() => {
  const resolution = resolveSettings(undefined);
  if (!resolution.ok) throw new Error(resolution.message);
  return resolution.settings;
})();

/** Nodes with cards busy, a free one, a cordoned one, one of another model; terminated, unbound and sidecar pods; Workloads that fit, do not, need no cards or name no known flavor. */
function scenario() {
  const nodes = [
    received(NODES, fatNode(gpuNode('gpu-a', 8))),
    received(NODES, fatNode(gpuNode('gpu-b', 8))),
    received(NODES, fatNode(gpuNode('gpu-c', 8), { unschedulable: true })),
    received(NODES, fatNode(gpuNode('gpu-d', 4))),
    received(NODES, fatNode(gpuNode('gpu-e', 8))),
    received(NODES, fatNode(gpuNode('other', 8, 'nvidia-a10g'))),
  ];
  const pods = [
    boundPod('busy-a', 'gpu-a', [gpus(4)]),
    boundPod('busy-b', 'gpu-b', [cpuOnly(), gpus('2', 'limits')], 'Running', [gpus(2)]),
    boundPod('sidecar-b', 'gpu-b', [gpus(1)], 'Pending', [{ ...gpus(1), restartPolicy: 'Always' }]),
    boundPod('done-c', 'gpu-c', [gpus(8)], 'Succeeded'),
    boundPod('unbound', undefined, [gpus(8)], 'Pending'),
    boundPod('busy-d', 'gpu-d', [gpus(3)]),
  ].map((p) => received(PODS, fatPod(p)));
  const workloads: WorkloadWrapper[] = [
    makeWorkload('fits-eight').podSet('workers', 1, [gpus(8)]),
    makeWorkload('three-by-eight').podSet('workers', 3, [gpus(8)]),
    makeWorkload('fours')
      .podSet('a', 1, [gpus(4)])
      .podSet('b', 2, [gpus(4)]),
    makeWorkload('sidecars').podSet('workers', 1, [gpus(2)], {
      initContainers: [{ ...gpus(1), restartPolicy: 'Always' }, gpus(6)],
    }),
    makeWorkload('cpu').podSet('main', 1, [cpuOnly()]),
    makeWorkload('unknown-flavor').podSet('workers', 1, [gpus(1)], {
      flavors: { 'credits.gpustack.ai/nvidia': 'gone' },
    }),
    makeWorkload('admitted')
      .podSet('workers', 1, [gpus(1)])
      .condition('Admitted', 'True'),
  ];
  const flavor = received(RESOURCE_FLAVORS, fatFlavor(deviceFlavor()));
  return { nodes, pods, flavor, workloads: workloads.map((w) => received(WORKLOADS, fatWorkload(w.obj()))) };
}

function decideAll(s: ReturnType<typeof scenario>, which: 'fat' | 'slim') {
  const flavor = s.flavor[which];
  return s.workloads.map((w) =>
    decideNodeDevices({
      workload: w[which],
      flavors: { [flavor.metadata.name]: flavor },
      nodes: s.nodes.map((n) => n[which]),
      pods: s.pods.map((p) => p[which]),
      deviceResourceOf: (mfr) => deviceResourceOf(settings, mfr),
      checkName: CHECK,
    }),
  );
}

const DROPPED = [
  'managedFields',
  'annotations',
  'ownerReferences',
  'images',
  'env',
  'volumes',
  'containerStatuses',
  'podSetUpdates',
  'resourceUsage',
  'nodeTaints',
];

describe('slim projections: the decision cannot tell', () => {
  it('every Workload gets the same verdict from the fat objects and from their slim projections', () => {
    const s = scenario();
    const fat = decideAll(s, 'fat');
    expect(decideAll(s, 'slim')).toEqual(fat);
    // The scenario is not trivial: it holds Ready, Retry for lack of cards, Retry for an unknown flavor, and left alone.
    expect(fat.map((v) => v?.state)).toEqual(['Ready', 'Retry', 'Ready', 'Ready', 'Ready', 'Retry', undefined]);
  });

  it('drops managedFields, annotations, images, env, owners, statuses; the JSON shrinks', () => {
    const s = scenario();
    for (const { fat, slim } of [...s.nodes, ...s.pods, ...s.workloads, s.flavor]) {
      const text = JSON.stringify(slim);
      for (const key of DROPPED) expect(text, `${slim.metadata.name}: ${key}`).not.toContain(`"${key}"`);
      expect(text.length).toBeLessThan(JSON.stringify(fat).length);
    }
  });
});

describe('slim projections: what is kept', () => {
  it("a Node keeps name, resourceVersion, every label, cordon and taints; of its status only allocatable's extended resources (who owns the cards)", () => {
    const { slim } = received(NODES, fatNode(gpuNode('gpu-c', 8), { unschedulable: true }));
    expect(slim).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'gpu-c', resourceVersion: '4711', labels: gpuNode('gpu-c', 8).metadata.labels },
      spec: { unschedulable: true, taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }] },
      status: { allocatable: { 'nvidia.com/gpu': '8' } },
    });
    expect(slim.metadata.labels?.[`acceleratable.feature.gpustack.ai/${H100}.count`]).toBe('8');
  });

  it('a Pod keeps identity, node, container names, requests, limits and restart policies, and its phase', () => {
    const pod = boundPod('sidecar', 'gpu-b', [gpus(1)], 'Pending', [{ ...gpus(1, 'limits'), restartPolicy: 'Always' }]);
    expect(received(PODS, fatPod(pod)).slim).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'sidecar', namespace: 'team-b', uid: 'uid-sidecar', resourceVersion: '5150' },
      spec: {
        nodeName: 'gpu-b',
        containers: [{ name: 'main', resources: { requests: { 'nvidia.com/gpu': 1, cpu: '1' } } }],
        initContainers: [
          { name: 'main', restartPolicy: 'Always', resources: { limits: { 'nvidia.com/gpu': 1, cpu: '1' } } },
        ],
      },
      status: { phase: 'Pending' },
    });
  });

  it('a Pod the scheduler served through DRA keeps the resources its extended-resource claim maps, once each', () => {
    const pod = boundPod('served', 'gpu-b', [gpus(2)]);
    const status = {
      phase: 'Running',
      extendedResourceClaimStatus: {
        resourceClaimName: 'served-extended-resources-x7k2p',
        requestMappings: [
          { containerName: 'main', resourceName: 'nvidia.com/gpu', requestName: 'container-0-request-1' },
          { containerName: 'side', resourceName: 'nvidia.com/gpu', requestName: 'container-1-request-0' },
        ],
      },
    };
    expect(received(PODS, fatPod({ ...pod, status })).slim.status).toEqual({
      phase: 'Running',
      extendedResourceClaimStatus: { requestMappings: [{ resourceName: 'nvidia.com/gpu' }] },
    });
  });

  it('a Workload keeps identity, generation, active, pod sets with tolerations and node selector, conditions, admission and check entries', () => {
    const { slim } = received(
      WORKLOADS,
      fatWorkload(
        makeWorkload('train')
          .podSet('workers', 2, [gpus(8)])
          .deactivated()
          .obj(),
      ),
    );
    expect(slim.metadata).toEqual({
      name: 'train',
      namespace: 'team-a',
      uid: 'uid-train',
      resourceVersion: '777',
      generation: 2,
    });
    expect(slim.spec).toEqual({
      active: false,
      podSets: [
        {
          name: 'workers',
          count: 2,
          template: {
            spec: {
              containers: [{ name: 'main', resources: { requests: { 'nvidia.com/gpu': 8, cpu: '1' } } }],
              tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
              nodeSelector: { 'kubernetes.io/arch': 'amd64' },
            },
          },
        },
      ],
    });
    expect(slim.status).toEqual({
      conditions: [{ type: 'QuotaReserved', status: 'True', reason: 'QuotaReserved' }],
      admission: {
        clusterQueue: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
        podSetAssignments: [
          {
            name: 'workers',
            flavors: { 'credits.gpustack.ai/nvidia': 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d' },
          },
        ],
      },
      admissionChecks: [{ name: CHECK, state: 'Pending', message: '', lastTransitionTime: '2026-02-01T08:00:00Z' }],
    });
  });

  it('a Workload keeps the topology assignment TAS wrote (issue 44: the check verifies the cards in those domains)', () => {
    const topologyAssignment = {
      levels: ['kubernetes.io/hostname'],
      slices: [{ domainCount: 1, podCounts: { universal: 2 }, valuesPerLevel: [{ universal: 'gpu-a' }] }],
    };
    const raw = fatWorkload(
      makeWorkload('train')
        .podSet('workers', 2, [gpus(8)])
        .obj(),
    );
    const admission = (raw['status'] as Json)['admission'] as { podSetAssignments: Json[] };
    admission.podSetAssignments = admission.podSetAssignments.map((a) => ({ ...a, topologyAssignment }));
    const { slim } = received(WORKLOADS, raw);
    expect(slim.status?.admission?.podSetAssignments[0]?.topologyAssignment).toEqual(topologyAssignment);
  });

  it('a ResourceFlavor keeps name, resourceVersion, node labels and tolerations', () => {
    const { slim } = received(RESOURCE_FLAVORS, fatFlavor(deviceFlavor()));
    expect(slim).toEqual({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: deviceFlavor().metadata.name, resourceVersion: '99' },
      spec: {
        nodeLabels: deviceFlavor().spec?.nodeLabels,
        tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
      },
    });
  });

  it('a slim object still passes its schema unchanged, and slimming it again changes nothing', () => {
    const s = scenario();
    const all: [WatchedResource<KubeObject>, { slim: KubeObject }][] = [
      ...s.nodes.map((n) => [NODES, n] as never),
      ...s.pods.map((p) => [PODS, p] as never),
      ...s.workloads.map((w) => [WORKLOADS, w] as never),
      [RESOURCE_FLAVORS, s.flavor] as never,
    ];
    for (const [resource, { slim }] of all) {
      expect(resource.schema.parse(structuredClone(slim))).toEqual(slim);
      expect(resource.slim(slim)).toEqual(slim);
    }
  });
});

describe('slim projections: in the informer', () => {
  let api: FakeKube | undefined;
  const stop = new AbortController();
  afterEach(async () => {
    stop.abort();
    await api?.close();
  });

  it('the store holds the slim Node, from the list and from a watch event', async () => {
    api = await startFakeKube();
    api.upsert('nodes', fatNode(gpuNode('gpu-a', 8)));
    const informer = new Informer(createKubeApi(kubeConfigFor(api.url)), NODES, {
      logger: recordingLogger(),
      onChange: () => undefined,
    });
    const running = informer.run(stop.signal);
    await eventually(() => informer.status.streaming && api?.openWatches('nodes') === 1, 'watching nodes');
    api.upsert('nodes', fatNode(gpuNode('gpu-b', 4)));
    await eventually(() => informer.store.has('gpu-b'), 'gpu-b added');
    for (const name of ['gpu-a', 'gpu-b']) {
      const stored = informer.store.get(name) as Node;
      expect(Object.keys(stored.metadata).sort()).toEqual(['labels', 'name', 'resourceVersion']);
      expect(stored.status).toEqual({ allocatable: { 'nvidia.com/gpu': '8' } });
    }
    stop.abort();
    await running;
  });
});

describe('the ledger stores: slim slices, claims and templates give the same ledger and asks', () => {
  const fat = (object: object) => ({
    ...object,
    metadata: { ...(object as { metadata: object }).metadata, managedFields: MANAGED_FIELDS, uid: 'u' },
  });

  it('keeps what the ledger reads of our slices, the pool alone of another driver, and passes the schema again', () => {
    const ours = nodePool('gpu-a', 2).map((s) => RESOURCE_SLICES.slim(RESOURCE_SLICES.schema.parse(fat(s))));
    const theirs = nodePool('gpu-a', 2, { driver: 'gpu.nvidia.com' }).map((s) =>
      RESOURCE_SLICES.slim(RESOURCE_SLICES.schema.parse(fat(s))),
    );
    for (const slice of [...ours, ...theirs]) expect(RESOURCE_SLICES.schema.parse(slice)).toEqual(slice);
    expect(theirs.every((s) => s.spec.devices === undefined)).toBe(true);
    const claims = [allocatedClaim('c', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '10Gi' } }])];
    const slimClaims = claims.map((c) => RESOURCE_CLAIMS.slim(RESOURCE_CLAIMS.schema.parse(fat(c))));
    // Of reservedFor only the Pods' names (the holders of the per-card metrics), not their uids.
    expect(slimClaims[0]?.status?.reservedFor).toEqual([{ name: 'c-pod' }]);
    expect(buildDeviceLedger([...ours, ...theirs], slimClaims).summary()).toEqual(
      buildDeviceLedger(nodePool('gpu-a', 2), claims).summary(),
    );
    const holders = (ledger: ReturnType<typeof buildDeviceLedger>) =>
      ledger.nodeNames().flatMap((n) => ledger.cards(n).map((card) => ledger.use(card).claims));
    expect(holders(buildDeviceLedger(ours, slimClaims))).toEqual(
      holders(buildDeviceLedger(nodePool('gpu-a', 2), claims)),
    );
    expect(JSON.stringify(ours)).not.toContain('managedFields');
  });

  it("keeps the devices' taints (issue 25: a tainted card counted free) and what the ledger reads of a DeviceTaintRule", () => {
    const tainted = nodePool('gpu-a', 2).map((slice) => ({
      ...slice,
      spec: {
        ...slice.spec,
        ...(slice.spec.devices === undefined
          ? {}
          : {
              devices: slice.spec.devices.map((d) =>
                d.name.startsWith('card-1')
                  ? {
                      ...d,
                      taints: [
                        { key: 'gpustack.ai/unhealthy', value: 'missing', effect: 'NoSchedule', timeAdded: 'x' },
                      ],
                    }
                  : d,
              ),
            }),
      },
    }));
    const slim = tainted.map((s) => RESOURCE_SLICES.slim(RESOURCE_SLICES.schema.parse(fat(s))));
    expect(slim.flatMap((s) => s.spec.devices ?? []).flatMap((d) => d.taints ?? [])).toEqual([
      { key: 'gpustack.ai/unhealthy', value: 'missing', effect: 'NoSchedule' },
      { key: 'gpustack.ai/unhealthy', value: 'missing', effect: 'NoSchedule' },
    ]);
    expect(buildDeviceLedger(slim, []).summary()[0]).toMatchObject({ published: 2, freeWhole: 1, tainted: 1 });
    const rules = deviceTaintRules('resource.k8s.io/v1beta2');
    expect(rules.path).toBe('/apis/resource.k8s.io/v1beta2/devicetaintrules');
    const rule = rules.slim(
      rules.schema.parse(
        fat({
          apiVersion: 'resource.k8s.io/v1beta2',
          kind: 'DeviceTaintRule',
          metadata: { name: 'r', labels: { 'gpustack.ai/cordon': 'true' } },
          spec: {
            deviceSelector: { driver: 'nvidia.gpustack.ai', pool: 'gpu-a', device: 'card-0' },
            taint: { key: 'gpustack.ai/cordoned', effect: 'NoSchedule', timeAdded: '2026-01-01T00:00:00Z' },
          },
          status: { conditions: [{ type: 'EvictionInProgress', status: 'False' }] },
        }),
      ),
    );
    expect(rule).toEqual({
      apiVersion: 'resource.k8s.io/v1beta2',
      kind: 'DeviceTaintRule',
      metadata: { name: 'r', labels: { 'gpustack.ai/cordon': 'true' } },
      spec: {
        deviceSelector: { driver: 'nvidia.gpustack.ai', pool: 'gpu-a', device: 'card-0' },
        taint: { key: 'gpustack.ai/cordoned', effect: 'NoSchedule' },
      },
    });
  });

  it('keeps the exactly part of each template request', () => {
    const template = claimTemplate('t', [{ deviceClassName: 'gpustack-nvidia-shared', capacity: { memory: '20Gi' } }]);
    const slim = RESOURCE_CLAIM_TEMPLATES.slim(RESOURCE_CLAIM_TEMPLATES.schema.parse(fat(template)));
    expect(RESOURCE_CLAIM_TEMPLATES.schema.parse(slim)).toEqual(slim);
    expect(podDeviceAsks([{ name: 'a', resourceClaimTemplateName: 't' }], () => slim)).toEqual(
      podDeviceAsks([{ name: 'a', resourceClaimTemplateName: 't' }], () => template),
    );
  });
});
