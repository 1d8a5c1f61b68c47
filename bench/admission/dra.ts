/**
 * @module The DRA side of the admission bench cluster: every node publishes its pool as the agent
 * does (docs/architecture.md#resourceslices: a slice of eight counter sets and a slice of sixteen devices, whole and shared
 * per card); on a share of the nodes the training pods hold their cards through ResourceClaims
 * (one claim per pod, allocated whole) and one more card is shared by two 20 GiB slices; a share
 * of the Workloads asks for its cards through a ResourceClaimTemplate instead of `nvidia.com/gpu`.
 * Objects look as an API server returns them (managedFields, owners, the allocation's node selector).
 */
import { createRandom, type Random } from '../shared/random.js';

type Json = Record<string, unknown>;

const DRIVER = 'nvidia.gpustack.ai';
const NOW = '2026-02-01T08:00:00Z';
const CARDS = 8;
const CARD_MIB = 81559;
/** As `CARD_SPLITS` of the device-plugin pods, shifted so claim nodes look different. */
const CLAIM_SPLITS: readonly (readonly number[])[] = [[4, 2], [8], [1, 1, 1], [], [2, 2, 2], [4]];

function managed(manager: string, fields: Json, subresource?: string): Json {
  return {
    apiVersion: 'resource.k8s.io/v1',
    fieldsType: 'FieldsV1',
    manager,
    operation: subresource ? 'Update' : 'Apply',
    ...(subresource ? { subresource } : {}),
    time: '2026-01-31T22:10:00Z',
    fieldsV1: fields,
  };
}

function capacity(): Json {
  return {
    memory: {
      value: `${CARD_MIB}Mi`,
      requestPolicy: { default: `${Math.floor(CARD_MIB / 10)}Mi`, validRange: { min: '1Gi' } },
    },
    units: { value: '1600000', requestPolicy: { default: '160000', validRange: { min: '1' } } },
    cores: { value: '100', requestPolicy: { default: '10', validRange: { min: '1' } } },
  };
}

function attributes(random: Random, aKey: string, index: number, mode: string): Json {
  return {
    manufacturer: { string: 'nvidia' },
    productKey: { string: aKey },
    productName: { string: 'NVIDIA H100 80GB HBM3' },
    family: { string: 'hopper' },
    computeCapability: { version: '9.0.0' },
    driverVersion: { version: '570.124.6' },
    uuid: { string: `GPU-${random.uuid()}` },
    index: { int: index },
    pciBusID: { string: `0000:${(0x18 + index * 0x10).toString(16)}:00.0` },
    numaNode: { int: index < 4 ? 0 : 1 },
    mode: { string: mode },
    'resource.kubernetes.io/pcieRoot': { string: `pci0000:${(index * 0x10).toString(16).padStart(2, '0')}` },
  };
}

/** The two slices of one node's pool. */
export function nodeSlices(random: Random, node: string, aKey: string): Json[] {
  const pool = { name: node, generation: 1, resourceSliceCount: 2 };
  const metadata = (suffix: string) => ({
    name: `${node}-${DRIVER}-${suffix}`,
    uid: random.uuid(),
    resourceVersion: String(random.int(1_000_000, 99_999_999)),
    creationTimestamp: NOW,
    ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid: random.uuid(), controller: true }],
    managedFields: [managed('gpustack-agent', { 'f:spec': { 'f:devices': {}, 'f:pool': {}, 'f:driver': {} } })],
  });
  const counters = () => ({ memory: { value: `${CARD_MIB}Mi` }, units: { value: '1600000' } });
  const indexes = Array.from({ length: CARDS }, (_, i) => i);
  return [
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: metadata('counters'),
      spec: {
        driver: DRIVER,
        nodeName: node,
        pool,
        sharedCounters: indexes.map((i) => ({ name: `card-${i}-counters`, counters: counters() })),
      },
    },
    {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceSlice',
      metadata: metadata('devices'),
      spec: {
        driver: DRIVER,
        nodeName: node,
        pool,
        devices: indexes.flatMap((i) => {
          const consumes = [{ counterSet: `card-${i}-counters`, counters: counters() }];
          return [
            {
              name: `card-${i}`,
              attributes: attributes(random, aKey, i, 'whole'),
              // No request policy on the whole device (API validation).
              capacity: { memory: { value: `${CARD_MIB}Mi` }, units: { value: '1600000' }, cores: { value: '100' } },
              consumesCounters: consumes,
            },
            {
              name: `card-${i}-shared`,
              attributes: attributes(random, aKey, i, 'shared'),
              capacity: capacity(),
              allowMultipleAllocations: true,
              consumesCounters: consumes,
            },
          ];
        }),
      },
    },
  ];
}

function claim(random: Random, name: string, namespace: string, node: string, results: Json[], requests: Json[]): Json {
  const podName = `${name.replace(/-gpus-[0-9a-z]+$/, '')}`;
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: {
      name,
      namespace,
      uid: random.uuid(),
      resourceVersion: String(random.int(1_000_000, 99_999_999)),
      creationTimestamp: NOW,
      annotations: { 'resource.kubernetes.io/pod-claim-name': 'gpus' },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Pod',
          name: podName,
          uid: random.uuid(),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        managed('kube-controller-manager', { 'f:spec': { 'f:devices': {} } }),
        managed('kube-scheduler', { 'f:status': { 'f:allocation': {}, 'f:reservedFor': {} } }, 'status'),
      ],
    },
    spec: { devices: { requests } },
    status: {
      allocation: {
        devices: { results },
        nodeSelector: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
      reservedFor: [{ resource: 'pods', name: podName, uid: random.uuid() }],
    },
  };
}

/** The claims of one node: none unless it is a claim node; then its pods' whole cards and two slices of one card. */
export function nodeClaims(random: Random, node: string, index: number, aKey: string): Json[] {
  const split = CLAIM_SPLITS[index % CLAIM_SPLITS.length] as readonly number[];
  const namespace = `team-${String(index % 40).padStart(4, '0')}`;
  const out: Json[] = [];
  let next = 0;
  split.forEach((cards, i) => {
    const results = Array.from({ length: cards }, () => ({
      request: 'gpus',
      driver: DRIVER,
      pool: node,
      device: `card-${next++}`,
    }));
    const requests = [
      { name: 'gpus', exactly: { deviceClassName: `gpustack-${aKey}`, allocationMode: 'ExactCount', count: cards } },
    ];
    out.push(claim(random, `train-dra-${index}-${i}-gpus-${random.hex(5)}`, namespace, node, results, requests));
  });
  if (next < CARDS) {
    for (let i = 0; i < 2; i++) {
      const results = [
        {
          request: 'slice',
          driver: DRIVER,
          pool: node,
          device: `card-${next}-shared`,
          shareID: random.uuid(),
          consumedCapacity: { memory: '20Gi', units: '160k', cores: '10' },
        },
      ];
      const requests = [
        {
          name: 'slice',
          exactly: {
            deviceClassName: `gpustack-${aKey}-shared`,
            allocationMode: 'ExactCount',
            count: 1,
            capacity: { requests: { memory: '20Gi' } },
          },
        },
      ];
      out.push(claim(random, `infer-dra-${index}-${i}-gpus-${random.hex(5)}`, namespace, node, results, requests));
    }
  }
  return out;
}

/** A Workload asking for its cards through a template instead of the device resource, and that template. */
export function claimWorkload(workload: Json, aKey: string): { workload: Json; template: Json } {
  const copy = structuredClone(workload) as {
    metadata: { name: string; namespace: string };
    spec: { podSets: { template: { spec: { containers: Json[]; resourceClaims?: Json[] } } }[] };
  };
  const podSet = copy.spec.podSets[0];
  if (podSet === undefined) throw new Error('bench workload without a PodSet');
  const spec = podSet.template.spec;
  let cards = 1;
  for (const container of spec.containers) {
    const resources = container['resources'] as { requests?: Json; limits?: Json } | undefined;
    cards = Number(resources?.requests?.['nvidia.com/gpu'] ?? cards);
    delete resources?.requests?.['nvidia.com/gpu'];
    delete resources?.limits?.['nvidia.com/gpu'];
    container['resources'] = { ...resources, claims: [{ name: 'gpus' }] };
  }
  const templateName = `${copy.metadata.name}-gpus`;
  spec.resourceClaims = [{ name: 'gpus', resourceClaimTemplateName: templateName }];
  const template = {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: {
      name: templateName,
      namespace: copy.metadata.namespace,
      uid: `${copy.metadata.name}-t`,
      creationTimestamp: NOW,
    },
    spec: {
      spec: {
        devices: {
          requests: [
            {
              name: 'gpus',
              exactly: { deviceClassName: `gpustack-${aKey}`, allocationMode: 'ExactCount', count: cards },
            },
          ],
        },
      },
    },
  };
  return { workload: copy, template };
}

/** The aKey of a device flavor name `gpustack-<aKey>-<os>-<arch>-<n>d`. */
export function aKeyOfFlavor(flavor: string): string {
  const match = /^gpustack-(.+)-linux-amd64-\d+d$/.exec(flavor);
  if (!match?.[1]) throw new Error(`bench: not a device flavor name: ${flavor}`);
  return match[1];
}

export interface DraObjects {
  readonly slices: Json[];
  readonly claims: Json[];
}

/** Slices of every node, claims on `claimShare` of them (spread evenly). */
export function generateDra(nodes: readonly string[], aKey: string, claimShare: number, seed = 20260203): DraObjects {
  const random = createRandom(seed ^ nodes.length);
  const slices: Json[] = [];
  const claims: Json[] = [];
  const claimNodes = Math.round(nodes.length * claimShare);
  nodes.forEach((node, i) => {
    slices.push(...nodeSlices(random, node, aKey));
    const isClaimNode = Math.floor(((i + 1) * claimNodes) / nodes.length) > Math.floor((i * claimNodes) / nodes.length);
    if (isClaimNode) claims.push(...nodeClaims(random, node, i, aKey));
  });
  return { slices, claims };
}
