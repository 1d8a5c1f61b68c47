import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { DEVICE_LABEL_SOURCES, isLabelKey, isLabelValue, MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  constructDeviceLabels,
  constructProfileLabels,
  type LabelledCard,
  isProfileOwnedLabel,
  type ProfileNodeInput,
  type ProfileOptions,
} from '../../src/nodefeature/index.js';

const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const MANAGED = 'gpustack.ai/managed';
const CPU_ONLY = 'feature.gpustack.ai/cpu-only';
const H100 = 'nvidia-h100-80gb-hbm3';
const OS_ARCH = { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' };
const INTEL_8480 = 'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz';

const DEFAULTS: ProfileOptions = {
  nodeManagement: 'Automatic',
  generalKey: 'Generic',
  mixedOnNode: true,
  manufacturers: new Set(MANUFACTURER_NAMES),
  deviceLabelSources: DEVICE_LABEL_SOURCES,
};

function options(overrides: Partial<ProfileOptions> = {}): ProfileOptions {
  return { ...DEFAULTS, ...overrides };
}

function devices(n: number, device: LabelledCard): LabelledCard[] {
  return Array.from({ length: n }, () => device);
}

const H100_DEVICE: LabelledCard = {
  manufacturer: 'nvidia',
  product: 'NVIDIA H100 80GB HBM3',
  memoryMiB: 81559,
  cores: 16896,
  family: 'Hopper',
  computeCapability: '9.0',
};
const H100_LABELS = { ...OS_ARCH, ...constructDeviceLabels(devices(8, H100_DEVICE)) };
const ASCEND_LABELS = {
  ...OS_ARCH,
  ...constructDeviceLabels(devices(8, { manufacturer: 'ascend', product: 'Ascend910B2', memoryMiB: 65536 })),
};
const HYGON_LABELS = {
  ...OS_ARCH,
  ...constructDeviceLabels(devices(4, { manufacturer: 'hygon', product: 'K100_AI', memoryMiB: 65536 })),
};
const CPU_LABELS = { ...OS_ARCH, 'feature.gpustack.ai/acceleratable': 'false' };

function sliced(aKey: string, cores: string, mib?: string): Record<string, string> {
  return {
    [`${A}${aKey}.sliced.units`]: '1600000',
    [`${A}${aKey}.sliced.cores-percentage`]: cores,
    [`${A}${aKey}.sliced.memory-percentage`]: '100',
    ...(mib !== undefined ? { [`${A}${aKey}.sliced.memory-mib`]: mib } : {}),
  };
}

interface Case {
  readonly name: string;
  readonly input: { readonly node: ProfileNodeInput; readonly options?: Partial<ProfileOptions> };
  readonly want: Record<string, string | null>;
}

const cases: Case[] = [
  {
    name: 'injects managed, the generic key and per-card sliced labels on an 8 × H100 node',
    input: { node: { labels: H100_LABELS, cpuCapacity: '224' } },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '81920'),
    },
  },
  {
    name: 'CPUModel mode writes the CPU key and its manufacturer',
    input: {
      node: {
        labels: { ...H100_LABELS, 'feature.node.kubernetes.io/cpu-model.vendor_id': 'Intel' },
        annotations: { 'feature.gpustack.ai/cpu-name': INTEL_8480 },
        cpuCapacity: '224',
      },
      options: { generalKey: 'CPUModel' },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}intel`]: 'true',
      [`${G}intel-xeon-platinum-8480`]: 'true',
      [`${G}intel-xeon-platinum-8480.count`]: '224',
      ...sliced(H100, '12800', '81920'),
    },
  },
  {
    name: 'CPUModel mode without NFD labels falls back to generic',
    input: { node: { labels: CPU_LABELS, cpuCapacity: 8 }, options: { generalKey: 'CPUModel' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '8' },
  },
  {
    name: 'CPUModel mode with an empty vendor label keys the node off generic instead of leaving it out of CPU pools',
    input: {
      node: {
        labels: {
          ...CPU_LABELS,
          'feature.node.kubernetes.io/cpu-model.vendor_id': '',
          [`${G}amd`]: 'true',
          [`${G}amd-epyc-7763`]: 'true',
          [`${G}amd-epyc-7763.count`]: '8',
        },
        annotations: { 'feature.gpustack.ai/cpu-name': 'AMD EPYC 7763 64-Core Processor' },
        cpuCapacity: 8,
      },
      options: { generalKey: 'CPUModel' },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic-amd-epyc-7763`]: 'true',
      [`${G}generic-amd-epyc-7763.count`]: '8',
      [`${G}amd`]: null,
      [`${G}amd-epyc-7763`]: null,
      [`${G}amd-epyc-7763.count`]: null,
    },
  },
  {
    name: 'CPUModel mode on an arm64 Kunpeng host whose NFD vendor is VendorUnknown splits by model',
    input: {
      node: {
        labels: { ...ASCEND_LABELS, 'feature.node.kubernetes.io/cpu-model.vendor_id': 'VendorUnknown' },
        annotations: { 'feature.gpustack.ai/cpu-name': 'Kunpeng-920' },
        cpuCapacity: '192',
      },
      options: { generalKey: 'CPUModel' },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic-kunpeng-920`]: 'true',
      [`${G}generic-kunpeng-920.count`]: '192',
      ...sliced('ascend-910b2', '6300', '65536'),
    },
  },
  {
    name: 'ascend cards get 6300 cores-percentage and 64Gi → 65536 MiB',
    input: { node: { labels: ASCEND_LABELS, cpuCapacity: '192' } },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '192',
      ...sliced('ascend-910b2', '6300', '65536'),
    },
  },
  {
    name: 'other manufacturers get 100 cores-percentage',
    input: { node: { labels: HYGON_LABELS, cpuCapacity: '64' } },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '64',
      ...sliced('hygon-k100_ai', '100', '65536'),
    },
  },
  {
    name: 'Manual mode does not inject managed and so writes nothing',
    input: { node: { labels: H100_LABELS, cpuCapacity: '224' }, options: { nodeManagement: 'Manual' } },
    want: {},
  },
  {
    name: 'Manual mode removes owned labels of a node that is not managed',
    input: {
      node: {
        labels: {
          ...H100_LABELS,
          [`${G}generic`]: 'true',
          [`${G}generic.count`]: '224',
          ...sliced(H100, '12800', '81920'),
        },
        cpuCapacity: '224',
      },
      options: { nodeManagement: 'Manual' },
    },
    want: { [`${G}generic`]: null, [`${G}generic.count`]: null, ...nulls(sliced(H100, '12800', '81920')) },
  },
  {
    name: 'Manual mode labels a node an admin marked managed, without mentioning managed',
    input: {
      node: { labels: { ...H100_LABELS, [MANAGED]: 'true' }, cpuCapacity: '224' },
      options: { nodeManagement: 'Manual' },
    },
    want: { [`${G}generic`]: 'true', [`${G}generic.count`]: '224', ...sliced(H100, '12800', '81920') },
  },
  {
    name: 'an admin managed=false is never overwritten and owned labels get null',
    input: {
      node: {
        labels: {
          ...H100_LABELS,
          [MANAGED]: 'false',
          [`${G}generic`]: 'true',
          [`${G}generic.count`]: '224',
          [CPU_ONLY]: 'true',
          ...sliced(H100, '12800', '81920'),
        },
        cpuCapacity: '224',
      },
    },
    want: {
      [`${G}generic`]: null,
      [`${G}generic.count`]: null,
      [CPU_ONLY]: null,
      ...nulls(sliced(H100, '12800', '81920')),
    },
  },
  {
    name: 'an admin managed value other than true counts as not managed',
    input: { node: { labels: { ...CPU_LABELS, [MANAGED]: 'yes' }, cpuCapacity: '8' } },
    want: {},
  },
  {
    name: 'stale keys of an old CPU key and a removed card model are removed',
    input: {
      node: {
        labels: {
          ...H100_LABELS,
          [MANAGED]: 'true',
          [`${G}amd`]: 'true',
          [`${G}amd-epyc-7763`]: 'true',
          [`${G}amd-epyc-7763.count`]: '128',
          ...sliced('nvidia-a100', '12800', '81920'),
        },
        cpuCapacity: '224',
      },
    },
    want: {
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '81920'),
      [`${G}amd`]: null,
      [`${G}amd-epyc-7763`]: null,
      [`${G}amd-epyc-7763.count`]: null,
      ...nulls(sliced('nvidia-a100', '12800', '81920')),
    },
  },
  {
    name: 'foreign keys are never mentioned, even next to owned ones',
    input: {
      node: {
        labels: {
          ...CPU_LABELS,
          team: 'a',
          'feature.gpustack.ai/rdma.capable': 'true',
          [`${A}nvidia.driver-version`]: '1',
          [`${A}intel-arc.sliced.units`]: '1',
          'topology.gpustack.ai/profile': 'fnv64-87bf574bea2a4f23',
        },
        cpuCapacity: '8',
      },
    },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '8' },
  },
  {
    name: 'cpu-only is written on a CPU node when mixedOnNode is false',
    input: { node: { labels: CPU_LABELS, cpuCapacity: '128' }, options: { mixedOnNode: false } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '128', [CPU_ONLY]: 'true' },
  },
  {
    name: 'cpu-only is not written on an accelerated node and a stale one is removed',
    input: {
      node: { labels: { ...H100_LABELS, [CPU_ONLY]: 'true' }, cpuCapacity: '224' },
      options: { mixedOnNode: false },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '81920'),
      [CPU_ONLY]: null,
    },
  },
  {
    name: 'cpu-only is not written while acceleratable=true even without model labels yet',
    input: {
      node: { labels: { ...OS_ARCH, 'feature.gpustack.ai/acceleratable': 'true' }, cpuCapacity: '8' },
      options: { mixedOnNode: false },
    },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '8' },
  },
  {
    name: 'cpu-only is removed when mixedOnNode is true',
    input: { node: { labels: { ...CPU_LABELS, [CPU_ONLY]: 'true' }, cpuCapacity: '8' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '8', [CPU_ONLY]: null },
  },
  {
    name: 'a milli-CPU capacity counts up: 3500m → 4',
    input: { node: { labels: CPU_LABELS, cpuCapacity: '3500m' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '4' },
  },
  {
    name: 'a garbage CPU capacity writes no count and removes the old one',
    input: { node: { labels: { ...CPU_LABELS, [`${G}generic.count`]: '8' }, cpuCapacity: 'lots' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: null },
  },
  {
    name: 'a zero CPU capacity writes no count',
    input: { node: { labels: CPU_LABELS, cpuCapacity: '0' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true' },
  },
  {
    name: 'a missing CPU capacity writes no count',
    input: { node: { labels: CPU_LABELS } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true' },
  },
  {
    name: 'a node without labels is managed and generic',
    input: { node: {} },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true' },
  },
  {
    name: 'a garbage .memory writes the sliced labels but no memory-mib',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.memory`]: 'huge' }, cpuCapacity: '224' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '224', ...sliced(H100, '12800') },
  },
  {
    name: 'a .memory another tool wrote as 24G gives the MiB of 24·10^9 bytes',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.memory`]: '24G' }, cpuCapacity: '224' } },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '22888'),
    },
  },
  {
    name: 'a .memory of raw bytes reads as a quantity',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.memory`]: '85899345920' }, cpuCapacity: '224' } },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '81920'),
    },
  },
  {
    name: 'a .memory of 0 (unknown) writes the sliced labels but no memory-mib, which a consumer divides by',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.memory`]: '0' }, cpuCapacity: '224' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '224', ...sliced(H100, '12800') },
  },
  {
    name: 'a .count written 08 writes no sliced labels: the chain will not pool the model either',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.count`]: '08' }, cpuCapacity: '224' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '224' },
  },
  {
    name: 'a CPU capacity of ten million (a virtual node) is counted',
    input: { node: { labels: CPU_LABELS, cpuCapacity: '10000000' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '10000000' },
  },
  {
    name: 'a CPU capacity beyond int32 writes no count',
    input: { node: { labels: CPU_LABELS, cpuCapacity: '3G' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true' },
  },
  {
    name: 'a garbage .count writes no sliced labels for that model',
    input: { node: { labels: { ...H100_LABELS, [`${A}${H100}.count`]: 'abc' }, cpuCapacity: '224' } },
    want: { [MANAGED]: 'true', [`${G}generic`]: 'true', [`${G}generic.count`]: '224' },
  },
  {
    name: "a model key beyond the 38-character budget (an older agent's) gets no sliced labels, which would be invalid keys",
    input: {
      node: {
        labels: {
          ...OS_ARCH,
          [`${A}nvidia-${'x'.repeat(45)}`]: 'true',
          [`${A}nvidia-${'x'.repeat(45)}.count`]: '8',
          [`${A}nvidia-${'x'.repeat(45)}.memory`]: '80Gi',
          ...H100_LABELS,
        },
        cpuCapacity: '224',
      },
      options: { mixedOnNode: false },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...sliced(H100, '12800', '81920'),
    },
  },
  {
    name: 'a disabled manufacturer gets no sliced labels and its old ones are removed',
    input: {
      node: { labels: { ...HYGON_LABELS, ...sliced('hygon-k100_ai', '100', '65536') }, cpuCapacity: '64' },
      options: { manufacturers: new Set<ManufacturerName>(['nvidia']) },
    },
    want: {
      [MANAGED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '64',
      ...nulls(sliced('hygon-k100_ai', '100', '65536')),
    },
  },
];

function nulls(labels: Record<string, string>): Record<string, null> {
  return Object.fromEntries(Object.keys(labels).map((k) => [k, null]));
}

describe('constructProfileLabels', () => {
  it.each(cases)('$name', ({ input, want }) => {
    const got = constructProfileLabels(input.node, options(input.options));
    expect(got).toEqual(want);
    for (const [key, value] of Object.entries(got)) {
      expect(isLabelKey(key), key).toBe(true);
      if (value !== null) expect(isLabelValue(value), `${key}=${value}`).toBe(true);
    }
  });

  it('is a fixed point: applying its answer and asking again changes nothing', () => {
    const node = {
      labels: { ...H100_LABELS, 'feature.node.kubernetes.io/cpu-model.vendor_id': 'Intel' },
      annotations: { 'feature.gpustack.ai/cpu-name': INTEL_8480 },
      cpuCapacity: '224',
    };
    const opts = options({ generalKey: 'CPUModel' });
    const first = constructProfileLabels(node, opts);
    const applied: Record<string, string> = { ...node.labels };
    for (const [k, v] of Object.entries(first)) {
      if (v === null) delete applied[k];
      else applied[k] = v;
    }
    const second = constructProfileLabels({ ...node, labels: applied }, opts);
    // managed now exists on the node and is not repeated; everything else is identical
    const { [MANAGED]: _managed, ...rest } = first;
    expect(second).toEqual(rest);
  });
});

describe('isProfileOwnedLabel', () => {
  it.each([
    { name: 'owns a general key', input: `${G}generic`, want: true },
    { name: 'owns a general count', input: `${G}amd-epyc-7763.count`, want: true },
    { name: 'owns cpu-only', input: CPU_ONLY, want: true },
    { name: 'owns a sliced label of a known manufacturer', input: `${A}${H100}.sliced.memory-mib`, want: true },
    { name: "does not own the agent's count", input: `${A}${H100}.count`, want: false },
    { name: "does not own the agent's model label", input: `${A}${H100}`, want: false },
    {
      name: 'does not own a sliced label of an unknown manufacturer',
      input: `${A}intel-arc.sliced.units`,
      want: false,
    },
    { name: 'does not own an unknown sliced suffix', input: `${A}${H100}.sliced.partitions`, want: false },
    { name: 'does not own managed', input: MANAGED, want: false },
    { name: 'does not own acceleratable', input: 'feature.gpustack.ai/acceleratable', want: false },
  ])('$name', ({ input, want }) => {
    expect(isProfileOwnedLabel(input)).toBe(want);
  });
});
