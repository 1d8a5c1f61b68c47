/**
 * @module The machines of the bench's synthetic clusters: CPUs, cards, the node kinds with their
 * share of a cluster, and what Node Feature Discovery, GPU feature discovery and the kubelet
 * report about them.
 */
import type { ManufacturerName } from '../../src/k8s/index.js';

interface Cpu {
  readonly vendor: 'AMD' | 'Intel' | 'HiSilicon';
  readonly name: string;
  readonly family: string;
  readonly model: string;
  readonly cores: readonly number[];
}

export interface Card {
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

export interface Kind {
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

export const KINDS: readonly Kind[] = [
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

export const X86_FLAGS = [
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
export const ARM_FLAGS = [
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
export const COMMON_NFD: Readonly<Record<string, string>> = {
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
export const NVIDIA_GFD = (card: Card, cards: number): Record<string, string> => ({
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

export const CONDITIONS: readonly [string, string, string, string][] = [
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

export const IMAGE_REPOS = [
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

/** The node kind named `name` (`h100-8x`, `a10g-4x` …). */
export function kindNamed(name: string): Kind {
  const kind = KINDS.find((k) => k.name === name);
  if (kind === undefined)
    throw new Error(`bench cluster: no node kind ${name} (known: ${KINDS.map((k) => k.name).join(', ')})`);
  return kind;
}
