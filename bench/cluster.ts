/**
 * @module A seeded generator of realistic clusters and the hook requests Metacontroller would send
 * for them. Nodes look like `kubectl get node -o json` prints them: ~100 Node Feature Discovery
 * labels, the agent's device labels (`constructDeviceLabels`) and the node-profile labels
 * (`constructProfileLabels`), annotations, taints, status with capacity, allocatable, conditions,
 * addresses, daemonEndpoints, nodeInfo and dozens of images, and managedFields: 15–25 KB each.
 * Children and related objects carry what the API server adds (uid, resourceVersion, ownerReferences,
 * Metacontroller's last-applied annotation, managedFields, Kueue status).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Node } from '../src/k8s/index.js';
import {
  DEVICE_LABEL_SOURCES,
  MANUFACTURER_NAMES,
  SCHEDULING_CHAIN_NAME,
  type ManufacturerName,
} from '../src/k8s/index.js';
import {
  PROFILED_LABEL,
  constructDeviceLabels,
  constructProfileLabels,
  type LabelledCard,
} from '../src/nodefeature/index.js';
import {
  SchedulingChainSyncRequestSchema,
  InstanceTypeSyncRequestSchema,
  buildNodeProfile,
  syncInstanceType,
  syncSchedulingChain,
} from '../src/sync/index.js';
import { createRandom, type Random } from './random.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const NOW = '2026-02-01T08:00:00Z';
const NFD = 'feature.node.kubernetes.io/';

type Json = Record<string, unknown>;
type ObjectMap = Record<string, Record<string, Json>>;

interface Cpu {
  readonly vendor: 'AMD' | 'Intel' | 'HiSilicon';
  readonly name: string;
  readonly family: string;
  readonly model: string;
  readonly cores: readonly number[];
}

interface Card {
  readonly manufacturer: ManufacturerName;
  readonly product: string;
  readonly memoryMiB: number;
  readonly cores: number;
  readonly family?: string;
  readonly computeCapability?: string;
  readonly driverVersion: string;
  readonly runtimeVersion?: string;
  /** Device-plugin resource and its PCI vendor id (for the NFD `pci-<id>.present` label). */
  readonly resource: string;
  readonly pci: string;
}

interface Kind {
  readonly name: string;
  readonly weight: number;
  readonly arch: 'amd64' | 'arm64';
  readonly cpu: Cpu;
  readonly card?: Card;
  readonly cards: number;
  /** Share of nodes of this kind with one card fewer (a failed card): more flavors, as in real fleets. */
  readonly degraded: number;
  readonly instanceType: string;
  readonly memoryKi: number;
}

const EPYC_7763: Cpu = {
  vendor: 'AMD',
  name: 'AMD EPYC 7763 64-Core Processor',
  family: '25',
  model: '1',
  cores: [32, 64, 96, 128],
};
const XEON_8375C: Cpu = {
  vendor: 'Intel',
  name: 'Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz',
  family: '6',
  model: '106',
  cores: [32, 64, 128],
};
const XEON_8480: Cpu = {
  vendor: 'Intel',
  name: 'Intel(R) Xeon(R) Platinum 8480+',
  family: '6',
  model: '143',
  cores: [224],
};
const EPYC_7R32: Cpu = { vendor: 'AMD', name: 'AMD EPYC 7R32', family: '23', model: '49', cores: [48] };
const EPYC_9654: Cpu = {
  vendor: 'AMD',
  name: 'AMD EPYC 9654 96-Core Processor',
  family: '25',
  model: '17',
  cores: [384],
};
const KUNPENG_920: Cpu = { vendor: 'HiSilicon', name: 'Kunpeng-920', family: '8', model: '53312', cores: [192] };

const H100: Card = {
  manufacturer: 'nvidia',
  product: 'NVIDIA H100 80GB HBM3',
  memoryMiB: 81559,
  cores: 16896,
  family: 'Hopper',
  computeCapability: '9.0',
  driverVersion: '570.124.06',
  runtimeVersion: '12.8',
  resource: 'nvidia.com/gpu',
  pci: '10de',
};
const A10G: Card = {
  manufacturer: 'nvidia',
  product: 'NVIDIA A10G',
  memoryMiB: 23028,
  cores: 9216,
  family: 'Ampere',
  computeCapability: '8.6',
  driverVersion: '550.144.03',
  runtimeVersion: '12.4',
  resource: 'nvidia.com/gpu',
  pci: '10de',
};
const ASCEND_910B2: Card = {
  manufacturer: 'ascend',
  product: 'Ascend910B2',
  memoryMiB: 65536,
  cores: 24,
  driverVersion: '24.1.rc2',
  runtimeVersion: '8.0.RC2',
  resource: 'huawei.com/Ascend910',
  pci: '19e5',
};
const MI300X: Card = {
  manufacturer: 'amd',
  product: 'AMD Instinct MI300X OAM',
  memoryMiB: 196592,
  cores: 304,
  family: 'CDNA3',
  driverVersion: '6.8.5',
  runtimeVersion: '6.2.4',
  resource: 'amd.com/gpu',
  pci: '1002',
};

const KINDS: readonly Kind[] = [
  {
    name: 'cpu-epyc',
    weight: 0.25,
    arch: 'amd64',
    cpu: EPYC_7763,
    cards: 0,
    degraded: 0,
    instanceType: 'm6a.32xlarge',
    memoryKi: 528_000_000,
  },
  {
    name: 'cpu-xeon',
    weight: 0.15,
    arch: 'amd64',
    cpu: XEON_8375C,
    cards: 0,
    degraded: 0,
    instanceType: 'm6i.32xlarge',
    memoryKi: 528_000_000,
  },
  {
    name: 'h100-8x',
    weight: 0.2,
    arch: 'amd64',
    cpu: XEON_8480,
    card: H100,
    cards: 8,
    degraded: 0.02,
    instanceType: 'p5.48xlarge',
    memoryKi: 2_115_271_393,
  },
  {
    name: 'a10g-4x',
    weight: 0.2,
    arch: 'amd64',
    cpu: EPYC_7R32,
    card: A10G,
    cards: 4,
    degraded: 0.01,
    instanceType: 'g5.12xlarge',
    memoryKi: 195_784_028,
  },
  {
    name: 'ascend-910b2-8x',
    weight: 0.1,
    arch: 'arm64',
    cpu: KUNPENG_920,
    card: ASCEND_910B2,
    cards: 8,
    degraded: 0.02,
    instanceType: 'atlas-800t-a2',
    memoryKi: 1_584_000_000,
  },
  {
    name: 'mi300x-8x',
    weight: 0.1,
    arch: 'amd64',
    cpu: EPYC_9654,
    card: MI300X,
    cards: 8,
    degraded: 0.02,
    instanceType: 'mi300x-oam-8',
    memoryKi: 2_113_000_000,
  },
];

const X86_FLAGS = [
  'ADX',
  'AESNI',
  'AVX',
  'AVX2',
  'AVX512BW',
  'AVX512CD',
  'AVX512DQ',
  'AVX512F',
  'AVX512VL',
  'AVX512VNNI',
  'AVX512BF16',
  'AVX512VBMI',
  'AVX512VBMI2',
  'AVX512BITALG',
  'AVX512VPOPCNTDQ',
  'AMXBF16',
  'AMXINT8',
  'AMXTILE',
  'CETSS',
  'CLDEMOTE',
  'CMPXCHG8',
  'FMA3',
  'FSRM',
  'FXSR',
  'FXSROPT',
  'GFNI',
  'HYPERVISOR',
  'IBPB',
  'IBRS',
  'LAHF',
  'MOVBE',
  'MOVDIR64B',
  'MOVDIRI',
  'OSXSAVE',
  'SERIALIZE',
  'SHA',
  'STIBP',
  'SYSCALL',
  'SYSEE',
  'TSXLDTRK',
  'VAES',
  'VMX',
  'VPCLMULQDQ',
  'WAITPKG',
  'X87',
  'XGETBV1',
  'XSAVE',
  'XSAVEC',
  'XSAVEOPT',
  'XSAVES',
];
const ARM_FLAGS = [
  'AES',
  'ASIMD',
  'ASIMDDP',
  'ASIMDHP',
  'ASIMDRDM',
  'ATOMICS',
  'CPUID',
  'CRC32',
  'DCPOP',
  'EVTSTRM',
  'FCMA',
  'FP',
  'FPHP',
  'JSCVT',
  'LRCPC',
  'PMULL',
  'SHA1',
  'SHA2',
  'SHA3',
  'SHA512',
  'SM3',
  'SM4',
  'SVE',
  'SVE2',
  'BF16',
  'I8MM',
  'DIT',
  'USCAT',
  'ILRCPC',
  'FLAGM',
  'SSBS',
  'SB',
  'PACA',
  'PACG',
  'DCPODP',
  'SVEI8MM',
  'SVEBF16',
  'RNG',
  'BTI',
  'MTE',
  'ECV',
  'AFP',
  'RPRES',
  'WFXT',
  'EBF16',
  'SVEAES',
  'SVEPMULL',
  'SVEBITPERM',
  'SVESHA3',
  'SVESM4',
];
const COMMON_NFD: Readonly<Record<string, string>> = {
  'cpu-cstate.enabled': 'true',
  'cpu-hardware_multithreading': 'true',
  'cpu-pstate.scaling_governor': 'performance',
  'cpu-pstate.status': 'active',
  'cpu-pstate.turbo': 'true',
  'cpu-rdt.RDTCMT': 'true',
  'cpu-rdt.RDTL3CA': 'true',
  'cpu-rdt.RDTMBA': 'true',
  'cpu-rdt.RDTMBM': 'true',
  'cpu-rdt.RDTMON': 'true',
  'cpu-security.sgx.enabled': 'false',
  'cpu-security.tdx.enabled': 'false',
  'kernel-config.NO_HZ': 'true',
  'kernel-config.NO_HZ_IDLE': 'true',
  'kernel-config.PREEMPT_VOLUNTARY': 'true',
  'kernel-selinux.enabled': 'false',
  'kernel-version.full': '5.15.0-131-generic',
  'kernel-version.major': '5',
  'kernel-version.minor': '15',
  'kernel-version.revision': '0',
  'memory-numa': 'true',
  'memory-nv.present': 'false',
  'network-sriov.capable': 'true',
  'pci-0200_15b3.present': 'true',
  'pci-15b3.present': 'true',
  'pci-1d0f.present': 'true',
  'storage-nonrotationaldisk': 'true',
  'system-os_release.ID': 'ubuntu',
  'system-os_release.VERSION_ID': '22.04',
  'system-os_release.VERSION_ID.major': '22',
  'system-os_release.VERSION_ID.minor': '04',
  'usb-ef_0bda_8153.present': 'true',
};
const NVIDIA_GFD = (card: Card, cards: number): Record<string, string> => ({
  'nvidia.com/cuda.driver-version.full': card.driverVersion,
  'nvidia.com/cuda.driver.major': card.driverVersion.split('.')[0] as string,
  'nvidia.com/cuda.driver.minor': card.driverVersion.split('.')[1] as string,
  'nvidia.com/cuda.runtime-version.full': card.runtimeVersion ?? '',
  'nvidia.com/gfd.timestamp': '1738396800',
  'nvidia.com/gpu-driver-upgrade-state': 'upgrade-done',
  'nvidia.com/gpu.compute.major': (card.computeCapability ?? '0.0').split('.')[0] as string,
  'nvidia.com/gpu.count': String(cards),
  'nvidia.com/gpu.deploy.container-toolkit': 'true',
  'nvidia.com/gpu.deploy.dcgm': 'true',
  'nvidia.com/gpu.deploy.dcgm-exporter': 'true',
  'nvidia.com/gpu.deploy.device-plugin': 'true',
  'nvidia.com/gpu.deploy.driver': 'pre-installed',
  'nvidia.com/gpu.deploy.gpu-feature-discovery': 'true',
  'nvidia.com/gpu.family': (card.family ?? '').toLowerCase(),
  'nvidia.com/gpu.memory': String(card.memoryMiB),
  'nvidia.com/gpu.present': 'true',
  'nvidia.com/gpu.product': card.product.replace(/ /g, '-'),
  'nvidia.com/gpu.replicas': '1',
  'nvidia.com/mig.capable': String(card.product.includes('H100')),
  'nvidia.com/mig.strategy': 'single',
});

const CONDITIONS: readonly [string, string, string, string][] = [
  ['KernelDeadlock', 'False', 'KernelHasNoDeadlock', 'kernel has no deadlock'],
  ['ReadonlyFilesystem', 'False', 'FilesystemIsNotReadOnly', 'Filesystem is not read-only'],
  ['FrequentKubeletRestart', 'False', 'NoFrequentKubeletRestart', 'kubelet is functioning properly'],
  ['FrequentContainerdRestart', 'False', 'NoFrequentContainerdRestart', 'containerd is functioning properly'],
  ['NetworkUnavailable', 'False', 'CalicoIsUp', 'Calico is running on this node'],
  ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
];

const IMAGE_REPOS = [
  'registry.k8s.io/kube-proxy:v1.31.4',
  'registry.k8s.io/pause:3.10',
  'docker.io/calico/node:v3.29.1',
  'docker.io/calico/cni:v3.29.1',
  'registry.k8s.io/nfd/node-feature-discovery:v0.17.0',
  'nvcr.io/nvidia/k8s-device-plugin:v0.17.0',
  'nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04',
  'nvcr.io/nvidia/gpu-operator:v24.9.1',
  'nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.1',
  'nvcr.io/nvidia/k8s/container-toolkit:v1.17.3-ubuntu20.04',
  'docker.io/gpustack/gpustack:v0.6.2',
  'docker.io/gpustack/gpustack:v0.6.1',
  'docker.io/gpustack/gpustack-operator:v0.1.0',
  'docker.io/vllm/vllm-openai:v0.8.4',
  'docker.io/vllm/vllm-openai:v0.8.3',
  'docker.io/vllm/vllm-openai:v0.7.3',
  'nvcr.io/nvidia/pytorch:24.12-py3',
  'nvcr.io/nvidia/tritonserver:24.12-trtllm-python-py3',
  'docker.io/lmsysorg/sglang:v0.4.5-cu124',
  'quay.io/prometheus/node-exporter:v1.8.2',
  'quay.io/prometheus-operator/prometheus-config-reloader:v0.79.2',
  'docker.io/grafana/promtail:3.3.2',
  'docker.io/fluent/fluent-bit:3.2.4',
  'registry.k8s.io/kueue/kueue:v0.14.1',
  'ghcr.io/metacontroller/metacontroller:v4.11.22',
  'docker.io/library/busybox:1.37.0',
  'docker.io/library/python:3.12-slim',
  'docker.io/library/ubuntu:22.04',
  'docker.io/rocm/vllm:rocm6.3.1_vllm_0.8.5',
  'docker.io/rocm/pytorch:rocm6.3_ubuntu22.04_py3.10',
  'ascendhub.huawei.com/public-ascendhub/mindie:2.0.RC1-800I-A2-py311',
  'ascendhub.huawei.com/public-ascendhub/ascend-k8sdeviceplugin:v6.0.0',
  'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0',
  'registry.k8s.io/sig-storage/livenessprobe:v2.14.0',
  'docker.io/rancher/local-path-provisioner:v0.0.30',
  'quay.io/jetstack/cert-manager-controller:v1.16.2',
  'docker.io/istio/proxyv2:1.24.2',
  'docker.io/bitnami/kubectl:1.31.4',
  'docker.io/nginx:1.27.3',
  'docker.io/redis:7.4.2',
  'docker.io/postgres:17.2',
  'ghcr.io/huggingface/text-generation-inference:3.0.2',
  'ghcr.io/ggml-org/llama.cpp:server-cuda-b4600',
  'docker.io/ollama/ollama:0.5.7',
];

interface ImageEntry {
  readonly names: string[];
  readonly sizeBytes: number;
}

function imagePool(random: Random): ImageEntry[] {
  return IMAGE_REPOS.map((ref) => {
    const repo = ref.slice(0, ref.lastIndexOf(':'));
    return { names: [`${repo}@sha256:${random.hex(64)}`, ref], sizeBytes: random.int(700_000, 12_000_000_000) };
  });
}

function pickKind(random: Random): Kind {
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
function fieldSet(keys: Iterable<string>): Json {
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

function buildNode(index: number, kind: Kind, images: readonly ImageEntry[], random: Random, profiled = true): Node {
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
  const base: Record<string, string> = {
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
  const labels: Record<string, string> = { ...base, ...nfd, ...gfd, ...agent };
  const annotations: Record<string, string> = {
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
  const profile = constructProfileLabels(
    { labels, annotations, cpuCapacity: capacity.cpu as string },
    {
      nodeManagement: 'Automatic',
      generalKey: 'Generic',
      mixedOnNode: true,
      manufacturers: new Set(MANUFACTURER_NAMES),
      deviceLabelSources: DEVICE_LABEL_SOURCES,
    },
  );
  // A Node fresh from its kubelet has no profile labels yet: node-profile adds them on a live cluster.
  if (profiled) for (const [key, value] of Object.entries(profile)) if (value !== null) labels[key] = value;
  // A few nodes carry a label the chain cannot read, so skippedNodes is exercised as in real fleets.
  if (kind.card && random.chance(0.002))
    labels[Object.keys(agent).find((k) => k.endsWith('.count')) as string] = 'eight';
  const imageCount = random.int(10, 26);
  const start = random.int(0, images.length - 1);
  const conditionTypes = CONDITIONS.map(([type]) => type);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
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
        Object.keys(capacity),
      ),
    },
    spec: {
      podCIDR: `10.244.${index % 256}.0/24`,
      podCIDRs: [`10.244.${index % 256}.0/24`],
      providerID: `aws:///us-east-1${zone}/i-0${random.hex(16)}`,
      ...(kind.card ? { taints: [{ key: kind.card.resource, value: 'present', effect: 'NoSchedule' }] } : {}),
    },
    status: {
      addresses: [
        { address: internalIp, type: 'InternalIP' },
        { address: `ip-${internalIp.replace(/\./g, '-')}.ec2.internal`, type: 'InternalDNS' },
        { address: `ip-${internalIp.replace(/\./g, '-')}.ec2.internal`, type: 'Hostname' },
      ],
      allocatable,
      capacity,
      conditions: CONDITIONS.map(([type, status, reason, message]) => ({
        type,
        status,
        reason,
        message,
        lastHeartbeatTime: '2026-02-01T07:59:31Z',
        lastTransitionTime: '2025-04-02T03:27:51Z',
      })),
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      images: Array.from({ length: imageCount }, (_, i) => images[(start + i) % images.length]),
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
    },
  } as Node;
}

/** The SchedulingChain `default` as the API server holds it. */
function schedulingChain(random: Random, deriveInstanceTypes: boolean): Json {
  return {
    apiVersion: GPUSTACK,
    kind: 'SchedulingChain',
    metadata: {
      name: SCHEDULING_CHAIN_NAME,
      uid: random.uuid(),
      generation: 1,
      resourceVersion: '4388',
      creationTimestamp: '2025-05-20T09:20:00Z',
    },
    spec: {
      nodeManagement: 'Automatic',
      generalKey: 'Generic',
      mixedOnNode: true,
      ...(deriveInstanceTypes ? { deriveInstanceTypes: true } : {}),
      admissionCheck: 'Enabled',
      systemNamespace: 'gpustack-system',
    },
  };
}

/** The kinds of the chain's children, as its sync request declares them. */
const CHAIN_CHILDREN = [`AdmissionCheck.${KUEUE}`, `InstanceType.${GPUSTACK}`, `ResourceFlavor.${KUEUE}`];

/** The chain's sync request before it has any child: what Metacontroller sends first. */
function firstChainRequest(chain: Json, nodes: readonly Node[], random: Random): Json {
  return {
    controller: exampleController('scheduling-chain'),
    parent: chain,
    children: objectMap([], CHAIN_CHILDREN),
    related: chainRelated(nodes, random),
    finalizing: false,
  };
}

function syncChain(request: Json) {
  return unwrap(syncSchedulingChain(SchedulingChainSyncRequestSchema.parse(request), { now: NOW }));
}

/**
 * `size` realistic Nodes of one kind (`h100-8x`, `a10g-4x` …), built as {@link generateCluster}
 * builds them, and the ResourceFlavors the chain emits for them (observed, with the API server's
 * metadata): what the admission checker lists.
 */
export function generateNodesOfKind(
  size: number,
  kindName: string,
  seed = 20260201,
): { nodes: Node[]; flavors: Json[] } {
  const kind = KINDS.find((k) => k.name === kindName);
  if (kind === undefined)
    throw new Error(`bench cluster: no node kind ${kindName} (known: ${KINDS.map((k) => k.name).join(', ')})`);
  const random = createRandom(seed ^ size);
  const images = imagePool(createRandom(seed));
  const nodes = Array.from({ length: size }, (_, i) => buildNode(i, kind, images, random));
  const chain = schedulingChain(random, false);
  const output = syncChain(firstChainRequest(chain, nodes, random));
  const flavors = output.children
    .filter((c) => c['kind'] === 'ResourceFlavor')
    .map((c) => observed(c as Json, chain, random));
  return { nodes, flavors };
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

/** The hooks whose requests carry cluster data; the others (customize, node-devices-check) are constant and tiny. */
export const HOOKS = ['scheduling-chain/sync', 'instance-type/sync', 'node-profile/sync'] as const;
export type HookName = (typeof HOOKS)[number];

/** The hook requests of one synthetic cluster, as JSON text (what Metacontroller POSTs). */
export interface ClusterBodies {
  readonly nodes: number;
  /** Mean size of one Node's JSON in bytes. */
  readonly nodeBytes: number;
  readonly flavors: number;
  readonly namespaces: number;
  readonly bodies: Readonly<Record<HookName, string>>;
}

function exampleController(hook: string): Json {
  const example = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'hooks', `${hook}.sync.json`), 'utf8')) as {
    controller: Json;
  };
  return example.controller;
}

function objectMap(objects: readonly Json[], declared: readonly string[]): ObjectMap {
  const map: ObjectMap = Object.fromEntries(declared.map((key) => [key, {}]));
  for (const object of objects) {
    const meta = object['metadata'] as { name: string; namespace?: string };
    const outer = `${String(object['kind'])}.${String(object['apiVersion'])}`;
    (map[outer] ??= {})[meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name] = object;
  }
  return map;
}

/** A desired object as the API server returns it once Metacontroller has applied it. */
/**
 * What Metacontroller relates to the chain for labelled Nodes: the NodeProfile node-profile wrote
 * of each (as the API server serves it: uid, ownerReferences…), no whole Node.
 */
function chainRelated(nodes: readonly Node[], random: Random): Record<string, Record<string, Json>> {
  return { ...chainRelatedProfiles(nodes, random), 'Node.v1': {} };
}

/** The NodeProfiles of labelled Nodes as the API server serves them (uid, ownerReferences…). */
function chainRelatedProfiles(nodes: readonly Node[], random: Random): Record<string, Record<string, Json>> {
  const profiles = nodes.map((node) =>
    observed(buildNodeProfile(node) as unknown as Json, node as unknown as Json, random),
  );
  return objectMap(profiles, [`NodeProfile.${GPUSTACK}`]);
}

function observed(desired: Json, parent: Json, random: Random, status?: Json): Json {
  const meta = desired['metadata'] as Json;
  const parentMeta = parent['metadata'] as Json;
  return {
    ...desired,
    metadata: {
      ...meta,
      uid: random.uuid(),
      resourceVersion: String(random.int(1_000_000, 99_999_999)),
      generation: 1,
      creationTimestamp: '2025-06-10T11:02:20Z',
      annotations: {
        ...(meta['annotations'] as Json | undefined),
        'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
      },
      ownerReferences: [
        {
          apiVersion: parent['apiVersion'],
          kind: parent['kind'],
          name: parentMeta['name'],
          uid: parentMeta['uid'],
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      ...(desired['apiVersion'] === KUEUE && desired['kind'] !== 'LocalQueue'
        ? { finalizers: ['kueue.x-k8s.io/resource-in-use'] }
        : {}),
      managedFields: [
        {
          apiVersion: desired['apiVersion'],
          fieldsType: 'FieldsV1',
          manager: 'metacontroller',
          operation: 'Update',
          time: '2025-06-10T11:02:20Z',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': fieldSet(['metacontroller.k8s.io/last-applied-configuration']),
              'f:labels': fieldSet(Object.keys((meta['labels'] as Json | undefined) ?? {})),
              'f:ownerReferences': {},
            },
            'f:spec': {},
          },
        },
      ],
    },
    ...(status ? { status } : {}),
  };
}

function condition(type: string, status: string, reason: string, message: string): Json {
  return { type, status, reason, message, lastTransitionTime: '2025-06-10T11:02:25Z', observedGeneration: 1 };
}

function namespaces(count: number, random: Random): Json[] {
  const fixed = [
    'default',
    'kube-system',
    'kube-public',
    'kube-node-lease',
    'gpustack-system',
    'kueue-system',
    'monitoring',
  ];
  const names = [
    ...fixed,
    ...Array.from({ length: Math.max(0, count - fixed.length) }, (_, i) => `team-${String(i).padStart(4, '0')}`),
  ];
  return names.map((name) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: random.uuid(),
      resourceVersion: String(random.int(1000, 9_999_999)),
      creationTimestamp: '2025-04-02T03:30:00Z',
      labels: {
        'kubernetes.io/metadata.name': name,
        ...(name.startsWith('team-') ? { 'gpustack.ai/tenant': random.pick(['research', 'prod', 'batch']) } : {}),
      },
      managedFields: [
        {
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } },
          manager: 'kubectl-create',
          operation: 'Update',
          time: '2025-04-02T03:30:00Z',
        },
      ],
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }));
}

/** Namespaces grow with the cluster: one team per 50 nodes, at least 20 namespaces. */
export function namespaceCount(nodes: number): number {
  return 20 + Math.floor(nodes / 50);
}

function unwrap<T>(outcome: { ok: true; response: T } | { ok: false; error: { message: string } }): T {
  if (!outcome.ok) throw new Error(`bench cluster: sync refused: ${outcome.error.message}`);
  return outcome.response;
}

/**
 * A cluster of `size` nodes from `seed`, and the bodies of the three data-bearing hooks in their
 * steady state: every child observed as the API server holds it after an earlier sync.
 */
export function generateCluster(size: number, seed = 20260201): ClusterBodies {
  const random = createRandom(seed ^ size);
  const images = imagePool(createRandom(seed));
  const nodes = Array.from({ length: size }, (_, i) => buildNode(i, pickKind(random), images, random));
  const sample = nodes.slice(0, 200);
  const nodeBytes = sample.reduce((sum, node) => sum + JSON.stringify(node).length, 0) / sample.length;
  const chain = schedulingChain(random, true);
  const firstChain = firstChainRequest(chain, nodes, random);
  const first = syncChain(firstChain);
  const chainWithStatus: Json = { ...chain, status: first.status };
  const chainChildren = first.children.map((child) => observed(child as Json, chain, random));
  const chainSettings = chainChildren.find((c) => c['kind'] === 'ChainSettings') as Json;
  const chainBody = JSON.stringify({
    ...firstChain,
    parent: chainWithStatus,
    children: objectMap(chainChildren, CHAIN_CHILDREN),
  });

  // The instance-type hook of the largest device pool (most flavors).
  const types = chainChildren.filter((c) => c['kind'] === 'InstanceType');
  const flavors = chainChildren.filter((c) => c['kind'] === 'ResourceFlavor');
  const pools = (first.status as { pools: { name: string; acceleratable: boolean; flavors: string[] }[] }).pools;
  const largest = [...pools].sort(
    (a, b) => Number(b.acceleratable) - Number(a.acceleratable) || b.flavors.length - a.flavors.length,
  )[0];
  const type = types.find((t) => (t['metadata'] as Json)['name'] === largest?.name) as Json;
  const admissionCheck = chainChildren.find((c) => c['kind'] === 'AdmissionCheck') as Json;
  const itRelated = objectMap(
    [
      chainSettings,
      ...flavors,
      ...namespaces(namespaceCount(size), random),
      {
        ...admissionCheck,
        status: { conditions: [condition('Active', 'True', 'Active', 'the admission check is active')] },
      },
    ],
    [`AdmissionCheck.${KUEUE}`, `ChainSettings.${GPUSTACK}`, 'Namespace.v1', `ResourceFlavor.${KUEUE}`],
  );
  const itKeys = [`ClusterQueue.${KUEUE}`, `LocalQueue.${KUEUE}`];
  const firstType = {
    controller: exampleController('instance-type'),
    parent: type,
    children: objectMap([], itKeys),
    related: itRelated,
    finalizing: false,
  };
  const typeOutput = unwrap(syncInstanceType(InstanceTypeSyncRequestSchema.parse(firstType), { now: NOW }));
  const queues = typeOutput.children.map((child) =>
    observed(
      child as Json,
      type,
      random,
      child['kind'] === 'ClusterQueue'
        ? {
            conditions: [condition('Active', 'True', 'Ready', 'Can admit new workloads')],
            admittedWorkloads: 3,
            pendingWorkloads: 1,
            reservingWorkloads: 3,
            flavorsReservation: [],
            flavorsUsage: [],
          }
        : {
            conditions: [condition('Active', 'True', 'Ready', 'Can submit new workloads')],
            admittedWorkloads: 0,
            pendingWorkloads: 0,
            reservingWorkloads: 0,
          },
    ),
  );
  const typeBody = JSON.stringify({
    ...firstType,
    parent: { ...type, status: typeOutput.status },
    children: objectMap(queues, itKeys),
  });

  // node-profile in the steady state: a marked Node whose NodeProfile exists, the ChainSettings related.
  const target = nodes.find((n) => n.metadata.name.startsWith('h100')) ?? (nodes[0] as Node);
  const marked = {
    ...target,
    metadata: { ...target.metadata, labels: { ...target.metadata.labels, [PROFILED_LABEL]: 'true' } },
  };
  const profileBody = JSON.stringify({
    controller: exampleController('node-profile'),
    parent: marked,
    children: chainRelatedProfiles([target], random),
    related: objectMap([chainSettings], [`ChainSettings.${GPUSTACK}`]),
    finalizing: false,
  });
  return {
    nodes: size,
    nodeBytes,
    flavors: flavors.length,
    namespaces: namespaceCount(size),
    bodies: { 'scheduling-chain/sync': chainBody, 'instance-type/sync': typeBody, 'node-profile/sync': profileBody },
  };
}
