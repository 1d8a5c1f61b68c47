/**
 * @module `makeNode('gpu-1').h100(8).cpu(224).profiled().obj()`: Nodes as the hooks see them,
 * stating only what differs from a plain linux/amd64 node. Labels are spelled out here, not
 * computed by src/nodefeature, so a test never checks the code against itself.
 *
 * Stage 2 (agent + NFD labels) is always written; `.profiled()` adds stage 3 (what node-profile
 * writes: `gpustack.ai/managed`, the general key and the per-card `.sliced.*` labels).
 */
import type { Node } from '../../src/k8s/index.js';

const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const NFD = 'feature.node.kubernetes.io/';

export interface AcceleratorSpec {
  /** aKey, e.g. `nvidia-h100-80gb-hbm3`; the manufacturer is the text before the first `-`. */
  readonly key: string;
  readonly count: number;
  readonly product: string;
  /** Per-card memory label, e.g. `80Gi`. */
  readonly memory: string;
  readonly cores?: string;
  readonly family?: string;
  readonly comcap?: string;
}

/** The devices of the example clusters (labels exactly as the agent writes them). */
export const DEVICES = {
  h100: {
    key: 'nvidia-h100-80gb-hbm3',
    product: 'NVIDIA-H100-80GB-HBM3',
    memory: '80Gi',
    cores: '16896',
    family: 'Hopper',
    comcap: '9.0',
  },
  h200: {
    key: 'nvidia-h200',
    product: 'NVIDIA-H200',
    memory: '140Gi',
    cores: '16896',
    family: 'Hopper',
    comcap: '9.0',
  },
  a10g: { key: 'nvidia-a10g', product: 'NVIDIA-A10G', memory: '22Gi', cores: '9216', family: 'Ampere', comcap: '8.6' },
  t4: { key: 'nvidia-tesla-t4', product: 'Tesla-T4', memory: '15Gi', cores: '2560', family: 'Turing', comcap: '7.5' },
  ascend910b2: { key: 'ascend-910b2', product: 'Ascend910B2', memory: '64Gi', cores: '24' },
  mi300x: { key: 'amd-instinct-mi300x-oam', product: 'AMD-Instinct-MI300X-OAM', memory: '192Gi', cores: '304' },
} as const satisfies Record<string, Omit<AcceleratorSpec, 'count'>>;

/** `.sliced.cores-percentage` per card: overcommit vendors (nvidia, ascend) give every slice 100 %. */
const CORES_PERCENTAGE: Readonly<Record<string, string>> = { nvidia: '12800', ascend: '6300' };
const MEMORY_UNITS_MIB: Readonly<Record<string, number>> = { Mi: 1, Gi: 1024, Ti: 1024 * 1024 };

function memoryMiB(memory: string): string | undefined {
  const match = /^(\d+)(Mi|Gi|Ti)$/.exec(memory);
  return match ? String(Number(match[1]) * (MEMORY_UNITS_MIB[match[2] as string] as number)) : undefined;
}

interface Profile {
  /** gKey the node-profile stage wrote; `generic` by default. */
  readonly generalKey: string;
  readonly cpuOnly: boolean;
}

export class NodeWrapper {
  private osName = 'linux';
  private archName: string | undefined = 'amd64';
  private cores = 16;
  private cpuVendor: string | undefined;
  private cpuName: string | undefined;
  private readonly accelerators: AcceleratorSpec[] = [];
  private profile: Profile | undefined;
  private managedValue: string | undefined;
  private readonly extraLabels: Record<string, string> = {};
  private readonly dropped = new Set<string>();
  private readonly annotations: Record<string, string> = {};
  private deletionTimestamp: string | undefined;

  constructor(private readonly name: string) {}

  os(os: string): this {
    this.osName = os;
    return this;
  }
  /** `undefined` leaves `kubernetes.io/arch` off (a node the chain must skip). */
  arch(arch: string | undefined): this {
    this.archName = arch;
    return this;
  }
  /** `status.capacity.cpu` (and, once profiled, the general key's `.count`). */
  cpu(cores: number): this {
    this.cores = cores;
    return this;
  }
  /** NFD's CPU vendor label and the agent's `feature.gpustack.ai/cpu-name` annotation. */
  cpuModel(vendor: string, name: string): this {
    this.cpuVendor = vendor;
    this.cpuName = name;
    return this;
  }
  accelerator(spec: AcceleratorSpec): this {
    this.accelerators.push(spec);
    return this;
  }
  h100(count: number): this {
    return this.accelerator({ ...DEVICES.h100, count });
  }
  h200(count: number): this {
    return this.accelerator({ ...DEVICES.h200, count });
  }
  a10g(count: number): this {
    return this.accelerator({ ...DEVICES.a10g, count });
  }
  t4(count: number): this {
    return this.accelerator({ ...DEVICES.t4, count });
  }
  ascend910b2(count: number): this {
    return this.accelerator({ ...DEVICES.ascend910b2, count });
  }
  mi300x(count: number): this {
    return this.accelerator({ ...DEVICES.mi300x, count });
  }
  /** Adds stage-3 labels as node-profile writes them (`gpustack.ai/managed=true` unless set otherwise). */
  profiled(profile: Partial<Profile> = {}): this {
    this.profile = { generalKey: 'generic', cpuOnly: false, ...profile };
    return this;
  }
  /** Sets `gpustack.ai/managed` to any value (`false` = an admin opted the node out). */
  managed(value: string): this {
    this.managedValue = value;
    return this;
  }
  label(key: string, value: string): this {
    this.extraLabels[key] = value;
    this.dropped.delete(key);
    return this;
  }
  withoutLabel(key: string): this {
    this.dropped.add(key);
    return this;
  }
  annotation(key: string, value: string): this {
    this.annotations[key] = value;
    return this;
  }
  deleting(at = '2026-02-28T00:00:00Z'): this {
    this.deletionTimestamp = at;
    return this;
  }

  private stage2Labels(): Record<string, string> {
    const labels: Record<string, string> = {
      'kubernetes.io/hostname': this.name,
      'kubernetes.io/os': this.osName,
      'feature.gpustack.ai/acceleratable': String(this.accelerators.length > 0),
    };
    if (this.archName !== undefined) labels['kubernetes.io/arch'] = this.archName;
    if (this.cpuVendor !== undefined) labels[`${NFD}cpu-model.vendor_id`] = this.cpuVendor;
    for (const device of this.accelerators) {
      const prefix = `${A}${device.key}`;
      labels[`${A}${device.key.split('-')[0]}`] = 'true';
      labels[prefix] = 'true';
      labels[`${prefix}.product`] = device.product;
      labels[`${prefix}.memory`] = device.memory;
      labels[`${prefix}.cores`] = device.cores ?? '0';
      labels[`${prefix}.count`] = String(device.count);
      if (device.family !== undefined) labels[`${prefix}.family`] = device.family;
      if (device.comcap !== undefined) labels[`${prefix}.comcap`] = device.comcap;
    }
    return labels;
  }

  private stage3Labels(profile: Profile): Record<string, string> {
    const labels: Record<string, string> = {
      [`${G}${profile.generalKey}`]: 'true',
      [`${G}${profile.generalKey}.count`]: String(this.cores),
    };
    if (profile.generalKey !== 'generic') labels[`${G}${profile.generalKey.split('-')[0]}`] = 'true';
    for (const device of this.accelerators) {
      const prefix = `${A}${device.key}`;
      labels[`${prefix}.sliced.units`] = '1600000';
      labels[`${prefix}.sliced.cores-percentage`] = CORES_PERCENTAGE[device.key.split('-')[0] as string] ?? '100';
      labels[`${prefix}.sliced.memory-percentage`] = '100';
      const mib = memoryMiB(device.memory);
      if (mib !== undefined) labels[`${prefix}.sliced.memory-mib`] = mib;
    }
    if (profile.cpuOnly && this.accelerators.length === 0) labels['feature.gpustack.ai/cpu-only'] = 'true';
    return labels;
  }

  obj(): Node {
    const labels: Record<string, string> = { ...this.stage2Labels() };
    if (this.profile) Object.assign(labels, { 'gpustack.ai/managed': 'true' }, this.stage3Labels(this.profile));
    if (this.managedValue !== undefined) labels['gpustack.ai/managed'] = this.managedValue;
    Object.assign(labels, this.extraLabels);
    for (const key of this.dropped) delete labels[key];
    const annotations = { ...this.annotations };
    if (this.cpuName !== undefined) annotations['feature.gpustack.ai/cpu-name'] = this.cpuName;
    return {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: this.name,
        uid: `uid-${this.name}`,
        labels,
        ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
        ...(this.deletionTimestamp !== undefined ? { deletionTimestamp: this.deletionTimestamp } : {}),
      },
      status: { capacity: { cpu: String(this.cores), memory: '263855256Ki', pods: '110' } },
    };
  }
}

/** A linux/amd64 node with 16 cores and no accelerators; chain what differs. */
export function makeNode(name: string): NodeWrapper {
  return new NodeWrapper(name);
}
