/**
 * @module Realistic Nodes, as `kubectl get node -o json` prints them: ~100 Node Feature Discovery
 * labels, the agent's device labels (`constructDeviceLabels`) and the node-profile labels
 * (`constructProfileLabels`), annotations, taints, status with capacity, allocatable, conditions,
 * addresses, daemonEndpoints, nodeInfo and dozens of images, and managedFields: 15–25 KB each.
 */
import type { Node } from '../../src/k8s/index.js';
import { DEVICE_LABEL_SOURCES, MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { constructDeviceLabels, constructProfileLabels, type LabelledCard } from '../../src/nodefeature/index.js';
import {
  ARM_FLAGS,
  COMMON_NFD,
  CONDITIONS,
  IMAGE_REPOS,
  KINDS,
  NVIDIA_GFD,
  X86_FLAGS,
  type Card,
  type Kind,
} from './fleet.js';
import { createRandom, type Random } from './random.js';

const NFD = 'feature.node.kubernetes.io/';

export type Json = Record<string, unknown>;

export interface ImageEntry {
  readonly names: string[];
  readonly sizeBytes: number;
}

export function imagePool(random: Random): ImageEntry[] {
  return IMAGE_REPOS.map((ref) => {
    const repo = ref.slice(0, ref.lastIndexOf(':'));
    return { names: [`${repo}@sha256:${random.hex(64)}`, ref], sizeBytes: random.int(700_000, 12_000_000_000) };
  });
}

export function pickKind(random: Random): Kind {
  let roll = random.next();
  for (const kind of KINDS) {
    roll -= kind.weight;
    if (roll < 0) return kind;
  }
  return KINDS[0] as Kind;
}

function cardFacts(card: Card): LabelledCard {
  return {
    manufacturer: card.manufacturer,
    product: card.product,
    memoryMiB: card.memoryMiB,
    cores: card.cores,
    ...(card.family ? { family: card.family } : {}),
    ...(card.computeCapability ? { computeCapability: card.computeCapability } : {}),
    driverVersion: card.driverVersion,
    ...(card.runtimeVersion ? { runtimeVersion: card.runtimeVersion } : {}),
  };
}

function nfdLabels(kind: Kind): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const flag of kind.arch === 'amd64' ? X86_FLAGS : ARM_FLAGS) labels[`${NFD}cpu-cpuid.${flag}`] = 'true';
  for (const [key, value] of Object.entries(COMMON_NFD)) labels[`${NFD}${key}`] = value;
  labels[`${NFD}cpu-model.vendor_id`] = kind.cpu.vendor;
  labels[`${NFD}cpu-model.family`] = kind.cpu.family;
  labels[`${NFD}cpu-model.id`] = kind.cpu.model;
  if (kind.card) {
    labels[`${NFD}pci-${kind.card.pci}.present`] = 'true';
    labels[`${NFD}pci-0302_${kind.card.pci}.present`] = 'true';
  }
  return labels;
}

/** Every path of a label map as managedFields spells it: `{"f:<key>": {}}`. */
export function fieldSet(keys: Iterable<string>): Json {
  const out: Json = {};
  for (const key of keys) out[`f:${key}`] = {};
  return out;
}

function managedFields(
  nfd: readonly string[],
  agent: readonly string[],
  profile: readonly string[],
  conditions: readonly string[],
  resources: readonly string[],
): Json[] {
  const entry = (manager: string, operation: string, time: string, fields: Json, subresource?: string): Json => ({
    apiVersion: 'v1',
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
    manager,
    operation,
    ...(subresource ? { subresource } : {}),
    time,
  });
  const conditionFields = Object.fromEntries(
    conditions.map((type) => [
      `k:{"type":"${type}"}`,
      {
        '.': {},
        'f:lastHeartbeatTime': {},
        'f:lastTransitionTime': {},
        'f:message': {},
        'f:reason': {},
        'f:status': {},
        'f:type': {},
      },
    ]),
  );
  return [
    entry('kubelet', 'Update', '2025-04-02T03:27:51Z', {
      'f:metadata': {
        'f:annotations': { '.': {}, 'f:volumes.kubernetes.io/controller-managed-attach-detach': {} },
        'f:labels': {
          '.': {},
          ...fieldSet([
            'beta.kubernetes.io/arch',
            'beta.kubernetes.io/os',
            'kubernetes.io/arch',
            'kubernetes.io/hostname',
            'kubernetes.io/os',
            'node.kubernetes.io/instance-type',
            'topology.kubernetes.io/region',
            'topology.kubernetes.io/zone',
          ]),
        },
      },
      'f:spec': { 'f:providerID': {} },
    }),
    entry('kube-controller-manager', 'Update', '2025-04-02T03:28:02Z', {
      'f:metadata': { 'f:annotations': { 'f:node.alpha.kubernetes.io/ttl': {} } },
      'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, 'v:"10.244.0.0/24"': {} } },
    }),
    entry('nfd-master', 'Update', '2025-04-02T03:29:40Z', {
      'f:metadata': {
        'f:annotations': fieldSet([
          'nfd.node.kubernetes.io/feature-labels',
          'nfd.node.kubernetes.io/master.version',
          'nfd.node.kubernetes.io/worker.version',
        ]),
        'f:labels': fieldSet(nfd),
      },
    }),
    entry('gpustack-agent', 'Apply', '2025-06-10T11:02:13Z', {
      'f:metadata': { 'f:annotations': fieldSet(['feature.gpustack.ai/cpu-name']), 'f:labels': fieldSet(agent) },
    }),
    entry('metacontroller', 'Update', '2025-06-10T11:02:15Z', { 'f:metadata': { 'f:labels': fieldSet(profile) } }),
    entry(
      'kubelet',
      'Update',
      '2026-02-01T07:59:31Z',
      {
        'f:status': {
          'f:allocatable': fieldSet(resources),
          'f:capacity': fieldSet(resources),
          'f:conditions': conditionFields,
          'f:images': {},
          'f:nodeInfo': { 'f:bootID': {}, 'f:kernelVersion': {}, 'f:containerRuntimeVersion': {} },
        },
      },
      'status',
    ),
  ];
}

/** The well-known labels of a cloud Node (the tenant drawn from `random`). */
function cloudLabels(kind: Kind, name: string, zone: string, random: Random): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': kind.arch,
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': kind.arch,
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': kind.instanceType,
    'topology.kubernetes.io/region': 'us-east-1',
    'topology.kubernetes.io/zone': `us-east-1${zone}`,
    'node-role.kubernetes.io/worker': '',
    'gpustack.ai/tenant': random.pick(['research', 'prod', 'batch']),
  };
}

/** What NFD, the CSI driver, kubeadm and Calico annotate a Node with. */
function nodeAnnotations(
  kind: Kind,
  nfd: Record<string, string>,
  internalIp: string,
  random: Random,
): Record<string, string> {
  return {
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-0${random.hex(16)}` }),
    'feature.gpustack.ai/cpu-name': kind.cpu.name,
    'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
    'nfd.node.kubernetes.io/feature-labels': Object.keys(nfd)
      .map((k) => k.slice(NFD.length))
      .join(','),
    'nfd.node.kubernetes.io/master.version': 'v0.17.0',
    'nfd.node.kubernetes.io/worker.version': 'v0.17.0',
    'node.alpha.kubernetes.io/ttl': '0',
    'projectcalico.org/IPv4Address': `${internalIp}/16`,
    'projectcalico.org/IPv4VXLANTunnelAddr': `192.168.${random.int(0, 255)}.${random.int(1, 254)}`,
    'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
  };
}

/** A kubelet's capacity and allocatable for `cores` and `cards`. */
function nodeResources(
  kind: Kind,
  cores: number,
  cards: number,
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const capacity: Record<string, string> = {
    cpu: String(cores),
    'ephemeral-storage': '3750157848Ki',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: `${kind.memoryKi}Ki`,
    pods: '110',
    ...(kind.card ? { [kind.card.resource]: String(cards) } : {}),
  };
  const allocatable: Record<string, string> = {
    ...capacity,
    cpu: `${cores * 1000 - 500}m`,
    memory: `${kind.memoryKi - 4_300_000}Ki`,
    'ephemeral-storage': '3456145472716',
  };
  return { capacity, allocatable };
}

/** A kubelet's status: addresses, resources, conditions, images and nodeInfo (ids drawn from `random`). */
function nodeStatus(
  kind: Kind,
  internalIp: string,
  resources: ReturnType<typeof nodeResources>,
  images: readonly ImageEntry[],
  random: Random,
): Record<string, unknown> {
  return {
    addresses: [
      { address: internalIp, type: 'InternalIP' },
      { address: `ip-${internalIp.replace(/\./g, '-')}.ec2.internal`, type: 'InternalDNS' },
      { address: `ip-${internalIp.replace(/\./g, '-')}.ec2.internal`, type: 'Hostname' },
    ],
    allocatable: resources.allocatable,
    capacity: resources.capacity,
    conditions: CONDITIONS.map(([type, status, reason, message]) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: '2026-02-01T07:59:31Z',
      lastTransitionTime: '2025-04-02T03:27:51Z',
    })),
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    images,
    nodeInfo: {
      architecture: kind.arch,
      bootID: random.uuid(),
      containerRuntimeVersion: 'containerd://1.7.24',
      kernelVersion: '5.15.0-131-generic',
      kubeProxyVersion: 'v1.31.4',
      kubeletVersion: 'v1.31.4',
      machineID: random.hex(32),
      operatingSystem: 'linux',
      osImage: 'Ubuntu 22.04.5 LTS',
      systemUUID: random.uuid().toUpperCase(),
    },
  };
}

/** node-profile's labels of a Node with these labels and annotations. */
function profileLabelsOf(
  labels: Record<string, string>,
  annotations: Record<string, string>,
  cpu: string,
): ReturnType<typeof constructProfileLabels> {
  return constructProfileLabels(
    { labels, annotations, cpuCapacity: cpu },
    {
      nodeManagement: 'Automatic',
      generalKey: 'Generic',
      mixedOnNode: true,
      manufacturers: new Set(MANUFACTURER_NAMES),
      deviceLabelSources: DEVICE_LABEL_SOURCES,
    },
  );
}

// The draws from `random` keep their order (the Nodes of a seed stay the same): metadata, then spec,
// then status.
export function buildNode(
  index: number,
  kind: Kind,
  images: readonly ImageEntry[],
  random: Random,
  profiled = true,
): Node {
  const name = `${kind.name}-${String(index).padStart(5, '0')}`;
  const cards = kind.card ? kind.cards - (random.chance(kind.degraded) ? 1 : 0) : 0;
  const cores = random.pick(kind.cpu.cores);
  const zone = random.pick(['a', 'b', 'c']);
  const internalIp = `10.${random.int(0, 255)}.${random.int(0, 255)}.${random.int(1, 254)}`;
  const nfd = nfdLabels(kind);
  const gfd = kind.card?.manufacturer === 'nvidia' ? NVIDIA_GFD(kind.card, cards) : {};
  const agent = constructDeviceLabels(
    kind.card ? Array.from({ length: cards }, () => cardFacts(kind.card as Card)) : [],
  );
  const labels: Record<string, string> = { ...cloudLabels(kind, name, zone, random), ...nfd, ...gfd, ...agent };
  const annotations = nodeAnnotations(kind, nfd, internalIp, random);
  const resources = nodeResources(kind, cores, cards);
  const profile = profileLabelsOf(labels, annotations, resources.capacity.cpu as string);
  // A Node fresh from its kubelet has no profile labels yet: node-profile adds them on a live cluster.
  if (profiled) for (const [key, value] of Object.entries(profile)) if (value !== null) labels[key] = value;
  // A few nodes carry a label the chain cannot read, so skippedNodes is exercised as in real fleets.
  if (kind.card && random.chance(0.002))
    labels[Object.keys(agent).find((k) => k.endsWith('.count')) as string] = 'eight';
  const imageCount = random.int(10, 26);
  const start = random.int(0, images.length - 1);
  const nodeImages = Array.from({ length: imageCount }, (_, i) => images[(start + i) % images.length] as ImageEntry);
  const conditionTypes = CONDITIONS.map(([type]) => type);
  const metadata = {
    name,
    uid: random.uuid(),
    resourceVersion: String(random.int(1_000_000, 99_999_999)),
    creationTimestamp: '2025-04-02T03:27:51Z',
    labels,
    annotations,
    managedFields: managedFields(
      Object.keys(nfd),
      Object.keys(agent),
      Object.keys(profile),
      conditionTypes,
      Object.keys(resources.capacity),
    ),
  };
  const spec = {
    podCIDR: `10.244.${index % 256}.0/24`,
    podCIDRs: [`10.244.${index % 256}.0/24`],
    providerID: `aws:///us-east-1${zone}/i-0${random.hex(16)}`,
    ...(kind.card ? { taints: [{ key: kind.card.resource, value: 'present', effect: 'NoSchedule' }] } : {}),
  };
  const status = nodeStatus(kind, internalIp, resources, nodeImages, random);
  return { apiVersion: 'v1', kind: 'Node', metadata, spec, status } as Node;
}

/**
 * The Nodes {@link generateCluster} builds for `size` (same seed, same kinds), as a kubelet, NFD and
 * our agent leave them: without node-profile's labels unless `profiled`. For a live control plane.
 */
export function generateNodes(size: number, seed = 20260201, profiled = false): Node[] {
  const random = createRandom(seed ^ size);
  const images = imagePool(createRandom(seed));
  return Array.from({ length: size }, (_, i) => buildNode(i, pickKind(random), images, random, profiled));
}

/**
 * The label patch (null = remove) that turns `node`'s card labels (our agent's and, for NVIDIA,
 * GPU feature discovery's) into those of `cards` cards of its kind: a card failing or coming back.
 * Undefined for a CPU-only kind.
 */
export function cardLabelPatch(node: Node, cards: number): Record<string, string | null> | undefined {
  const kind = KINDS.find((k) => node.metadata.name.startsWith(`${k.name}-`));
  const card = kind?.card;
  if (card === undefined) return undefined;
  const next: Record<string, string> = {
    ...constructDeviceLabels(Array.from({ length: cards }, () => cardFacts(card))),
    ...(card.manufacturer === 'nvidia' ? { 'nvidia.com/gpu.count': String(cards) } : {}),
  };
  const labels = node.metadata.labels ?? {};
  const patch: Record<string, string | null> = {};
  for (const key of Object.keys(constructDeviceLabels([cardFacts(card)])))
    if (key in labels && !(key in next)) patch[key] = null;
  for (const [key, value] of Object.entries(next)) if (labels[key] !== value) patch[key] = value;
  return patch;
}
