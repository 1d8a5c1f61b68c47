/**
 * @module What the admission checker lists in a GPU cluster, generated from a seed: realistic
 * 8-card H100 Nodes and their ResourceFlavors (`generateNodesOfKind`), ~10 Pods per node as a
 * real API server returns them (seven DaemonSet pods and a few training pods holding cards,
 * with managedFields, owners, env, volumes, statuses), and Kueue Workloads of which a share holds
 * a quota reservation and awaits our check's verdict.
 */
import type { Node } from '../../src/k8s/index.js';
import { generateNodesOfKind } from '../shared/cluster.js';
import { createRandom, type Random } from '../shared/random.js';

type Json = Record<string, unknown>;

export const CHECK_NAME = 'gpustack-node-devices';
const GPU = 'nvidia.com/gpu';
const CREDITS = 'credits.gpustack.ai/nvidia';
const NOW = '2026-02-01T08:00:00Z';

const DAEMONS: readonly { name: string; namespace: string; image: string; cpu: string; memory: string }[] = [
  {
    name: 'kube-proxy',
    namespace: 'kube-system',
    image: 'registry.k8s.io/kube-proxy:v1.31.4',
    cpu: '100m',
    memory: '128Mi',
  },
  {
    name: 'calico-node',
    namespace: 'kube-system',
    image: 'docker.io/calico/node:v3.29.1',
    cpu: '250m',
    memory: '256Mi',
  },
  {
    name: 'nfd-worker',
    namespace: 'node-feature-discovery',
    image: 'registry.k8s.io/nfd/node-feature-discovery:v0.17.0',
    cpu: '5m',
    memory: '64Mi',
  },
  {
    name: 'nvidia-device-plugin',
    namespace: 'gpu-operator',
    image: 'nvcr.io/nvidia/k8s-device-plugin:v0.17.0',
    cpu: '50m',
    memory: '64Mi',
  },
  {
    name: 'dcgm-exporter',
    namespace: 'gpu-operator',
    image: 'nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04',
    cpu: '100m',
    memory: '512Mi',
  },
  {
    name: 'node-exporter',
    namespace: 'monitoring',
    image: 'quay.io/prometheus/node-exporter:v1.8.2',
    cpu: '100m',
    memory: '180Mi',
  },
  {
    name: 'gpustack-agent',
    namespace: 'gpustack-system',
    image: 'docker.io/gpustack/gpustack-operator:v0.1.0',
    cpu: '50m',
    memory: '64Mi',
  },
];

function managedFields(manager: string, fields: Json): Json[] {
  return [
    {
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      manager,
      operation: 'Update',
      time: '2026-01-31T22:10:00Z',
      fieldsV1: fields,
    },
    {
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      manager: 'kubelet',
      operation: 'Update',
      subresource: 'status',
      time: '2026-01-31T22:11:00Z',
      fieldsV1: {
        'f:status': {
          'f:conditions': {
            'k:{"type":"Ready"}': {
              '.': {},
              'f:lastProbeTime': {},
              'f:lastTransitionTime': {},
              'f:status': {},
              'f:type': {},
            },
          },
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': {},
          'f:startTime': {},
        },
      },
    },
  ];
}

function container(random: Random, name: string, image: string, resources: Json, env: number): Json {
  return {
    name,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c'],
    args: [`exec /usr/local/bin/${name} --v=2 --metrics-bind-address=:9100`],
    env: Array.from({ length: env }, (_, i) =>
      i % 3 === 0
        ? { name: `NODE_NAME_${i}`, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } }
        : { name: `SETTING_${i}`, value: random.hex(12) },
    ),
    ports: [{ containerPort: 9100, name: 'metrics', protocol: 'TCP' }],
    resources,
    volumeMounts: [
      { name: 'host-root', mountPath: '/host', readOnly: true },
      { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
    ],
    livenessProbe: {
      httpGet: { path: '/healthz', port: 9100, scheme: 'HTTP' },
      initialDelaySeconds: 10,
      periodSeconds: 10,
      timeoutSeconds: 1,
      failureThreshold: 3,
      successThreshold: 1,
    },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
}

function podSpec(random: Random, node: string | undefined, containers: Json[]): Json {
  return {
    ...(node !== undefined ? { nodeName: node } : {}),
    containers,
    volumes: [
      { name: 'host-root', hostPath: { path: '/', type: '' } },
      {
        name: 'kube-api-access',
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
        },
      },
    ],
    dnsPolicy: 'ClusterFirst',
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
    priority: 0,
    restartPolicy: 'Always',
    schedulerName: 'default-scheduler',
    securityContext: {},
    serviceAccount: 'default',
    serviceAccountName: 'default',
    terminationGracePeriodSeconds: 30,
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: GPU, operator: 'Exists', effect: 'NoSchedule' },
    ],
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node ?? 'any'] }] }],
        },
      },
    },
    ...(random.chance(0.5) ? { hostNetwork: true } : {}),
  };
}

function podStatus(random: Random, names: readonly string[]): Json {
  const ip = `10.244.${random.int(0, 255)}.${random.int(1, 254)}`;
  return {
    phase: 'Running',
    hostIP: `10.0.${random.int(0, 255)}.${random.int(1, 254)}`,
    podIP: ip,
    podIPs: [{ ip }],
    qosClass: 'Burstable',
    startTime: '2026-01-31T22:10:05Z',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      (type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-31T22:10:30Z' }),
    ),
    containerStatuses: names.map((name) => ({
      name,
      ready: true,
      restartCount: random.int(0, 3),
      started: true,
      image: `registry.example/${name}:v1`,
      imageID: `registry.example/${name}@sha256:${random.hex(64)}`,
      containerID: `containerd://${random.hex(64)}`,
      state: { running: { startedAt: '2026-01-31T22:10:20Z' } },
    })),
  };
}

function pod(
  random: Random,
  name: string,
  namespace: string,
  node: string | undefined,
  containers: Json[],
  owner: Json,
): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      generateName: `${name.slice(0, name.lastIndexOf('-'))}-`,
      uid: random.uuid(),
      resourceVersion: String(random.int(1_000_000, 99_999_999)),
      creationTimestamp: '2026-01-31T22:10:00Z',
      labels: {
        'app.kubernetes.io/name': name.slice(0, name.lastIndexOf('-')),
        'controller-revision-hash': random.hex(10),
        'pod-template-generation': '3',
      },
      annotations: {
        'cni.projectcalico.org/containerID': random.hex(64),
        'cni.projectcalico.org/podIP': `10.244.${random.int(0, 255)}.${random.int(1, 254)}/32`,
        'kubectl.kubernetes.io/restartedAt': '2026-01-20T10:00:00Z',
      },
      ownerReferences: [{ ...owner, controller: true, blockOwnerDeletion: true, uid: random.uuid() }],
      managedFields: managedFields('kube-controller-manager', {
        'f:metadata': { 'f:generateName': {}, 'f:labels': {}, 'f:ownerReferences': {} },
        'f:spec': { 'f:containers': {}, 'f:volumes': {}, 'f:tolerations': {} },
      }),
    },
    spec: podSpec(random, node, containers),
    status: podStatus(
      random,
      containers.map((c) => String(c['name'])),
    ),
  };
}

/** Card splits of a node's training pods: some nodes full, some half, some idle, as a busy fleet looks. */
const CARD_SPLITS: readonly (readonly number[])[] = [[8], [4, 4], [4, 2, 1], [2, 2], [4], [1, 1], [], [2, 2, 2, 2]];

/** The Pods of one node: seven DaemonSet pods and up to four training pods holding cards. */
export function podsOfNode(random: Random, node: string, index: number): Json[] {
  const daemons = DAEMONS.map((d) =>
    pod(
      random,
      `${d.name}-${random.hex(5)}`,
      d.namespace,
      node,
      [
        container(
          random,
          d.name,
          d.image,
          { requests: { cpu: d.cpu, memory: d.memory }, limits: { memory: d.memory } },
          6,
        ),
      ],
      { apiVersion: 'apps/v1', kind: 'DaemonSet', name: d.name },
    ),
  );
  const split = CARD_SPLITS[index % CARD_SPLITS.length] as readonly number[];
  const trainers = split.map((cards, i) =>
    pod(
      random,
      `train-${index}-${i}-${random.hex(5)}`,
      `team-${String(index % 40).padStart(4, '0')}`,
      node,
      [
        container(
          random,
          'trainer',
          'nvcr.io/nvidia/pytorch:24.12-py3',
          {
            requests: { cpu: '16', memory: '128Gi', [GPU]: String(cards) },
            limits: { memory: '128Gi', [GPU]: String(cards) },
          },
          24,
        ),
      ],
      { apiVersion: 'batch/v1', kind: 'Job', name: `train-${index}-${i}` },
    ),
  );
  return [...daemons, ...trainers];
}

/** The conditions of a Workload with quota reserved on `flavor`, and admitted unless `awaiting`. */
function workloadConditions(flavor: string, awaiting: boolean): Json[] {
  const condition = (type: string, message: string): Json => ({
    type,
    status: 'True',
    reason: type,
    message,
    lastTransitionTime: NOW,
    observedGeneration: 1,
  });
  return [
    condition('QuotaReserved', `Quota reserved in ClusterQueue ${flavor}`),
    ...(awaiting ? [] : [condition('Admitted', 'The workload is admitted')]),
  ];
}

function workloadMetadata(random: Random, index: number, name: string): Json {
  return {
    name,
    namespace: `team-${String(index % 40).padStart(4, '0')}`,
    uid: random.uuid(),
    generation: 1,
    resourceVersion: String(random.int(1_000_000, 99_999_999)),
    creationTimestamp: NOW,
    labels: { 'kueue.x-k8s.io/job-uid': random.uuid() },
    finalizers: ['kueue.x-k8s.io/resource-in-use'],
    ownerReferences: [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: `train-${index}`,
        uid: random.uuid(),
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: managedFields('kueue', {
      'f:metadata': { 'f:labels': {}, 'f:ownerReferences': {} },
      'f:spec': { 'f:podSets': {}, 'f:queueName': {} },
    }),
  };
}

function workloadSpec(random: Random, index: number, cards: number, count: number): Json {
  return {
    active: true,
    queueName: 'gpustack-nvidia-h100',
    priority: 0,
    priorityClassSource: '',
    podSets: [
      {
        name: 'main',
        count,
        minCount: count,
        template: {
          metadata: { labels: { 'batch.kubernetes.io/job-name': `train-${index}` } },
          spec: {
            ...podSpec(random, undefined, [
              container(
                random,
                'trainer',
                'nvcr.io/nvidia/pytorch:24.12-py3',
                { requests: { cpu: '16', memory: '128Gi', [GPU]: String(cards) }, limits: { [GPU]: String(cards) } },
                24,
              ),
            ]),
            restartPolicy: 'Never',
            nodeSelector: { 'kubernetes.io/arch': 'amd64' },
          },
        },
      },
    ],
  };
}

function workloadStatus(flavor: string, cards: number, count: number, awaiting: boolean): Json {
  return {
    conditions: workloadConditions(flavor, awaiting),
    admission: {
      clusterQueue: 'gpustack-nvidia-h100',
      podSetAssignments: [
        {
          name: 'main',
          count,
          flavors: { [CREDITS]: flavor, cpu: flavor, memory: flavor },
          resourceUsage: {
            [CREDITS]: String(cards * count * 100),
            cpu: String(16 * count),
            memory: `${128 * count}Gi`,
          },
        },
      ],
    },
    admissionChecks: [
      {
        name: CHECK_NAME,
        state: awaiting ? 'Pending' : 'Ready',
        message: awaiting ? '' : 'the assigned flavor pool has enough free cards to place every pod',
        lastTransitionTime: NOW,
      },
    ],
    resourceRequests: [{ name: 'main', resources: { cpu: '16', memory: '128Gi', [GPU]: String(cards) } }],
  };
}

/**
 * One Workload. `awaiting`: quota reserved on `flavor`, our check Pending (the checker decides it);
 * otherwise already admitted with our check Ready (the checker leaves it alone). The draws from
 * `random` keep their order: name, sizes, metadata, spec.
 */
export function workload(random: Random, index: number, flavor: string, awaiting: boolean): Json {
  const name = `job-train-${index}-${random.hex(5)}`;
  const cards = random.pick([1, 2, 4, 8]);
  const count = random.pick([1, 1, 1, 2]);
  const metadata = workloadMetadata(random, index, name);
  const spec = workloadSpec(random, index, cards, count);
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata,
    spec,
    status: workloadStatus(flavor, cards, count, awaiting),
  };
}

export interface AdmissionCluster {
  readonly nodes: Node[];
  readonly flavors: Json[];
  /** The flavor of the 8-card nodes, which every Workload is assigned. */
  readonly flavor: string;
  /**
   * Generates the pods one node at a time, so a caller can turn each into its stored form at once:
   * ~9 per node, or, with `total`, going round the nodes again until there are `total`.
   */
  pods(each: (pod: Json) => void, total?: number): number;
  workloads(count: number, awaitingShare: number, each: (workload: Json) => void): void;
}

/** An H100 cluster of `size` nodes (seed fixed per size). */
export function generateAdmissionCluster(size: number, seed = 20260201): AdmissionCluster {
  const { nodes, flavors } = generateNodesOfKind(size, 'h100-8x', seed);
  const flavor = flavors.map((f) => (f['metadata'] as { name: string }).name).find((n) => n.endsWith('-8d'));
  if (flavor === undefined) throw new Error('bench admission cluster: no 8-card flavor');
  // Names kept apart, so a caller may drop the Nodes and still generate their pods.
  const names = nodes.map((n) => n.metadata.name);
  return {
    nodes,
    flavors,
    flavor,
    pods(each, total) {
      const random = createRandom(seed ^ size ^ 0x9e3779b9);
      let count = 0;
      for (let i = 0; total === undefined ? i < names.length : count < total; i++) {
        for (const p of podsOfNode(random, names[i % names.length] as string, i)) {
          if (total !== undefined && count >= total) break;
          each(p);
          count++;
        }
      }
      return count;
    },
    workloads(count, awaitingShare, each) {
      const random = createRandom(seed ^ count ^ 0x85ebca6b);
      const awaiting = Math.round(count * awaitingShare);
      // Spread the awaiting ones through the collection, as a store's insertion order would.
      for (let i = 0; i < count; i++)
        each(
          workload(random, i, flavor, Math.floor(((i + 1) * awaiting) / count) > Math.floor((i * awaiting) / count)),
        );
    },
  };
}
