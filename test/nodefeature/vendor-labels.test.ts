import { describe, expect, it } from 'vitest';
import {
  constructAcceleratorKey,
  constructModelLabels,
  deriveVendorModels,
  type DeviceModel,
  type VendorLabelSource,
  type VendorNodeInput,
} from '../../src/nodefeature/index.js';

/** What GPU Feature Discovery writes on an 8 × H100 node (its `internal/lm` labelers). */
const GFD_H100 = {
  'nvidia.com/gpu.present': 'true',
  'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
  'nvidia.com/gpu.count': '8',
  'nvidia.com/gpu.memory': '81559',
  'nvidia.com/gpu.family': 'hopper',
  'nvidia.com/gpu.compute.major': '9',
  'nvidia.com/gpu.compute.minor': '0',
  'nvidia.com/gpu.replicas': '1',
  'nvidia.com/cuda.driver.major': '570',
  'nvidia.com/cuda.driver.minor': '124',
  'nvidia.com/cuda.driver.rev': '06',
  'nvidia.com/cuda.runtime.major': '12',
  'nvidia.com/cuda.runtime.minor': '8',
  'nvidia.com/mig.strategy': 'single',
};
const H100_MODEL: DeviceModel = {
  manufacturer: 'nvidia',
  product: 'NVIDIA-H100-80GB-HBM3',
  memoryMiB: 81559,
  count: 8,
  family: 'hopper',
  computeCapability: '9.0',
  driverVersion: '570.124.06',
  runtimeVersion: '12.8',
};

/** What AMD's node labeller writes on an 8 × MI300X node (all cards agree). */
const AMD_MI300X = {
  'amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM',
  'beta.amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM',
  'beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM': '8',
  'amd.com/gpu.vram': '192G',
  'beta.amd.com/gpu.vram': '192G',
  'beta.amd.com/gpu.vram.192G': '8',
  'amd.com/gpu.cu-count': '304',
  'beta.amd.com/gpu.cu-count.304': '8',
  'amd.com/gpu.family': 'AI',
  'beta.amd.com/gpu.family.AI': '8',
  'amd.com/gpu.device-id': '74a1',
  'beta.amd.com/gpu.device-id.74a1': '8',
  'amd.com/gpu.driver-version': '6.8.5',
};

/** What Ascend's device plugin writes on an Atlas 800T A2 (8 × 910B3). */
const ASCEND_910B3 = {
  'huawei.com/npu.chip.name': '910B3',
  'node.kubernetes.io/npu.chip.name': '910B3',
  'huawei.com/npu.chip.memory': '64G',
  'mind-cluster/npu-chip-memory': '64G',
  'huawei.com/npu.driver.version': '24.1.rc3',
  'accelerator-type': 'module-910b-8',
  servertype: 'Ascend910B-20',
};

function node(
  labels: Record<string, string>,
  capacity: Record<string, string> = {},
  deviceResource = 'nvidia.com/gpu',
): VendorNodeInput {
  return { labels, capacity, deviceResource };
}

describe('deriveVendorModels', () => {
  it.each<{ name: string; source: VendorLabelSource; input: VendorNodeInput; want: DeviceModel[] }>([
    // NVIDIA GPU Feature Discovery
    { name: 'GFD: an 8 × H100 node', source: 'NVIDIAGFD', input: node(GFD_H100), want: [H100_MODEL] },
    {
      name: 'GFD: a count written 08 still reads (we write 8)',
      source: 'NVIDIAGFD',
      input: node({ ...GFD_H100, 'nvidia.com/gpu.count': '08' }),
      want: [H100_MODEL],
    },
    {
      name: 'GFD: time-slicing appends -SHARED to the product; the card is the same model',
      source: 'NVIDIAGFD',
      input: node({
        ...GFD_H100,
        'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3-SHARED',
        'nvidia.com/gpu.replicas': '4',
      }),
      want: [H100_MODEL],
    },
    {
      name: 'GFD: the MIG single strategy offers MIG devices as nvidia.com/gpu: one model of them',
      source: 'NVIDIAGFD',
      input: node({
        ...GFD_H100,
        'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3-MIG-1g.10gb',
        'nvidia.com/gpu.count': '56',
        'nvidia.com/gpu.memory': '9856',
      }),
      want: [{ ...H100_MODEL, product: 'NVIDIA-H100-80GB-HBM3-MIG-1g.10gb', count: 56, memoryMiB: 9856 }],
    },
    {
      name: 'GFD: the MIG mixed strategy counts cards not offered as nvidia.com/gpu: nothing',
      source: 'NVIDIAGFD',
      input: node({ ...GFD_H100, 'nvidia.com/mig.strategy': 'mixed' }),
      want: [],
    },
    {
      name: 'GFD: an invalid MIG configuration (count 0) derives nothing',
      source: 'NVIDIAGFD',
      input: node({
        ...GFD_H100,
        'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3-MIG-INVALID',
        'nvidia.com/gpu.count': '0',
      }),
      want: [],
    },
    {
      name: 'GFD: no memory, family, versions: a model with unknown memory',
      source: 'NVIDIAGFD',
      input: node({ 'nvidia.com/gpu.product': 'Tesla-T4', 'nvidia.com/gpu.count': '1' }),
      want: [{ manufacturer: 'nvidia', product: 'Tesla-T4', memoryMiB: 0, count: 1 }],
    },
    {
      name: 'GFD: a garbage count derives nothing',
      source: 'NVIDIAGFD',
      input: node({ ...GFD_H100, 'nvidia.com/gpu.count': 'eight' }),
      want: [],
    },
    {
      name: 'GFD: no product derives nothing',
      source: 'NVIDIAGFD',
      input: node({ 'nvidia.com/gpu.count': '8' }),
      want: [],
    },
    { name: 'GFD: a node it has not labelled', source: 'NVIDIAGFD', input: node({}), want: [] },
    // AMD node labeller
    {
      name: 'AMD: an 8 × MI300X node; the product gets its spaces back; 192G is GiB',
      source: 'AMDNodeLabeller',
      input: node(AMD_MI300X, {}, 'amd.com/gpu'),
      want: [
        {
          manufacturer: 'amd',
          product: 'AMD Instinct MI300X OAM',
          memoryMiB: 196608,
          count: 8,
          cores: 304,
          family: 'AI',
          driverVersion: '6.8.5',
        },
      ],
    },
    {
      name: 'AMD: two products on one node; one vram value for all cards is every card’s memory',
      source: 'AMDNodeLabeller',
      input: node(
        {
          'amd.com/gpu.product-name.AMD_Instinct_MI210': '2',
          'amd.com/gpu.product-name.AMD_Instinct_MI250X': '4',
          'beta.amd.com/gpu.product-name.AMD_Instinct_MI210': '2',
          'beta.amd.com/gpu.product-name.AMD_Instinct_MI250X': '4',
          'amd.com/gpu.vram.64G': '6',
        },
        {},
        'amd.com/gpu',
      ),
      want: [
        { manufacturer: 'amd', product: 'AMD Instinct MI210', memoryMiB: 65536, count: 2 },
        { manufacturer: 'amd', product: 'AMD Instinct MI250X', memoryMiB: 65536, count: 4 },
      ],
    },
    {
      name: 'AMD: cards disagreeing on vram leave the memory unknown',
      source: 'AMDNodeLabeller',
      input: node(
        {
          'beta.amd.com/gpu.product-name.AMD_Instinct_MI210': '2',
          'beta.amd.com/gpu.vram.64G': '1',
          'beta.amd.com/gpu.vram.48G': '1',
        },
        {},
        'amd.com/gpu',
      ),
      want: [{ manufacturer: 'amd', product: 'AMD Instinct MI210', memoryMiB: 0, count: 2 }],
    },
    {
      name: 'AMD: only the scalar product label: the count is the device resource capacity',
      source: 'AMDNodeLabeller',
      input: node({ 'amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM' }, { 'amd.com/gpu': '8' }, 'amd.com/gpu'),
      want: [{ manufacturer: 'amd', product: 'AMD Instinct MI300X OAM', memoryMiB: 0, count: 8 }],
    },
    {
      name: 'AMD: only the scalar product label and no capacity: nothing',
      source: 'AMDNodeLabeller',
      input: node({ 'amd.com/gpu.product-name': 'AMD_Instinct_MI300X_OAM' }, {}, 'amd.com/gpu'),
      want: [],
    },
    {
      name: 'AMD: a device id without a product name derives nothing',
      source: 'AMDNodeLabeller',
      input: node({ 'amd.com/gpu.device-id': '74a1', 'beta.amd.com/gpu.device-id.74a1': '8' }, {}, 'amd.com/gpu'),
      want: [],
    },
    // Ascend device plugin
    {
      name: 'Ascend: the chip name, 64G memory, and the count from the device resource',
      source: 'AscendDevicePlugin',
      input: node(ASCEND_910B3, { 'huawei.com/npu': '8' }, 'huawei.com/npu'),
      want: [{ manufacturer: 'ascend', product: '910B3', memoryMiB: 65536, count: 8, driverVersion: '24.1.rc3' }],
    },
    {
      name: 'Ascend: its own resource name counts the chips when ours is absent',
      source: 'AscendDevicePlugin',
      input: node(ASCEND_910B3, { 'huawei.com/Ascend910': '8' }, 'huawei.com/npu'),
      want: [{ manufacturer: 'ascend', product: '910B3', memoryMiB: 65536, count: 8, driverVersion: '24.1.rc3' }],
    },
    {
      name: 'Ascend: only the older labels (node.kubernetes.io, mind-cluster, huawei.com/driver.version)',
      source: 'AscendDevicePlugin',
      input: node(
        {
          'node.kubernetes.io/npu.chip.name': '310P3',
          'mind-cluster/npu-chip-memory': '0G',
          'huawei.com/driver.version': '23.0.0',
        },
        { 'huawei.com/Ascend310P': '4' },
        'huawei.com/npu',
      ),
      want: [{ manufacturer: 'ascend', product: '310P3', memoryMiB: 0, count: 4, driverVersion: '23.0.0' }],
    },
    {
      name: 'Ascend: a chip name without a count in capacity derives nothing',
      source: 'AscendDevicePlugin',
      input: node(ASCEND_910B3, {}, 'huawei.com/npu'),
      want: [],
    },
  ])('$name', ({ source, input, want }) => {
    expect(deriveVendorModels(source, input)).toEqual(want);
  });

  it.each([
    {
      source: 'NVIDIAGFD' as const,
      input: node(GFD_H100),
      aKey: 'nvidia-h100-80gb-hbm3',
      agentProduct: 'NVIDIA H100 80GB HBM3',
    },
    {
      source: 'AMDNodeLabeller' as const,
      input: node(AMD_MI300X, {}, 'amd.com/gpu'),
      aKey: 'amd-instinct-mi300x-oam',
      agentProduct: 'AMD Instinct MI300X OAM',
    },
    {
      source: 'AscendDevicePlugin' as const,
      input: node(ASCEND_910B3, { 'huawei.com/npu': '8' }, 'huawei.com/npu'),
      aKey: 'ascend-910b3',
      agentProduct: 'Ascend910B3',
    },
  ])('$source derives the aKey our agent would publish ($aKey)', ({ source, input, aKey, agentProduct }) => {
    const [model] = deriveVendorModels(source, input);
    expect(model && constructAcceleratorKey(model.manufacturer, model.product)).toBe(aKey);
    expect(constructAcceleratorKey(model?.manufacturer ?? 'nvidia', agentProduct)).toBe(aKey);
    expect(constructModelLabels(deriveVendorModels(source, input))).toHaveProperty(
      [`acceleratable.feature.gpustack.ai/${aKey}`],
      'true',
    );
  });
});
