import { describe, expect, it } from 'vitest';
import { isLabelKey, isLabelValue, type ManufacturerName } from '../../src/k8s/index.js';
import { constructDeviceLabels, type LabelledCard } from '../../src/nodefeature/index.js';

const A = 'acceleratable.feature.gpustack.ai/';

function h100(overrides: Partial<LabelledCard> = {}): LabelledCard {
  return {
    manufacturer: 'nvidia',
    product: 'NVIDIA H100 80GB HBM3',
    memoryMiB: 81559,
    cores: 16896,
    family: 'Hopper',
    computeCapability: '9.0',
    driverVersion: '570.124.06',
    runtimeVersion: '12.8',
    ...overrides,
  };
}

function times(n: number, device: LabelledCard): LabelledCard[] {
  return Array.from({ length: n }, () => device);
}

function expectValidLabels(labels: Record<string, string>): void {
  for (const [key, value] of Object.entries(labels)) {
    expect(isLabelKey(key), key).toBe(true);
    expect(isLabelValue(value), `${key}=${value}`).toBe(true);
  }
}

describe('constructDeviceLabels', () => {
  it.each<{ name: string; input: LabelledCard[]; want: Record<string, string> }>([
    {
      name: '8 × H100 gives the labels the modelled Go project writes',
      input: times(8, h100()),
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}nvidia`]: 'true',
        [`${A}nvidia.driver-version`]: '570.124.06',
        [`${A}nvidia.runtime-version`]: '12.8',
        [`${A}nvidia-h100-80gb-hbm3`]: 'true',
        [`${A}nvidia-h100-80gb-hbm3.product`]: 'NVIDIA-H100-80GB-HBM3',
        [`${A}nvidia-h100-80gb-hbm3.memory`]: '80Gi',
        [`${A}nvidia-h100-80gb-hbm3.cores`]: '16896',
        [`${A}nvidia-h100-80gb-hbm3.count`]: '8',
        [`${A}nvidia-h100-80gb-hbm3.family`]: 'Hopper',
        [`${A}nvidia-h100-80gb-hbm3.comcap`]: '9.0',
      },
    },
    {
      name: 'no devices gives acceleratable=false only',
      input: [],
      want: { 'feature.gpustack.ai/acceleratable': 'false' },
    },
    {
      name: 'an unknown manufacturer is ignored',
      input: [{ manufacturer: 'intel' as ManufacturerName, product: 'Intel Arc A770', memoryMiB: 16384 }],
      want: { 'feature.gpustack.ai/acceleratable': 'false' },
    },
    {
      name: '8 × Ascend 910B2 without family/comcap/versions omits them (as the modelled Go project does)',
      input: times(8, { manufacturer: 'ascend', product: 'Ascend910B2', memoryMiB: 65536 }),
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}ascend`]: 'true',
        [`${A}ascend-910b2`]: 'true',
        [`${A}ascend-910b2.product`]: 'Ascend910B2',
        [`${A}ascend-910b2.memory`]: '64Gi',
        [`${A}ascend-910b2.cores`]: '0',
        [`${A}ascend-910b2.count`]: '8',
      },
    },
    {
      name: 'same product with 40 and 80 GiB gets memory suffixes instead of overwriting',
      input: [
        ...times(2, { manufacturer: 'nvidia', product: 'NVIDIA A100', memoryMiB: 40960 }),
        ...times(3, { manufacturer: 'nvidia', product: 'NVIDIA A100', memoryMiB: 81920 }),
      ],
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}nvidia`]: 'true',
        [`${A}nvidia-a100-40g`]: 'true',
        [`${A}nvidia-a100-40g.product`]: 'NVIDIA-A100',
        [`${A}nvidia-a100-40g.memory`]: '40Gi',
        [`${A}nvidia-a100-40g.cores`]: '0',
        [`${A}nvidia-a100-40g.count`]: '2',
        [`${A}nvidia-a100-80g`]: 'true',
        [`${A}nvidia-a100-80g.product`]: 'NVIDIA-A100',
        [`${A}nvidia-a100-80g.memory`]: '80Gi',
        [`${A}nvidia-a100-80g.cores`]: '0',
        [`${A}nvidia-a100-80g.count`]: '3',
      },
    },
    {
      name: 'products that normalise to one key with the same memory are one model, counted together',
      input: [
        ...times(2, { manufacturer: 'nvidia', product: 'NVIDIA A100', memoryMiB: 81920 }),
        { manufacturer: 'nvidia', product: 'nvidia  a100', memoryMiB: 81559 },
      ],
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}nvidia`]: 'true',
        [`${A}nvidia-a100`]: 'true',
        [`${A}nvidia-a100.product`]: 'NVIDIA-A100',
        [`${A}nvidia-a100.memory`]: '80Gi',
        [`${A}nvidia-a100.cores`]: '0',
        [`${A}nvidia-a100.count`]: '3',
      },
    },
    {
      name: 'two long products cut to one key are counted together',
      input: [
        { manufacturer: 'nvidia', product: `NVIDIA ${'X'.repeat(40)}`, memoryMiB: 81920 },
        { manufacturer: 'nvidia', product: `NVIDIA ${'X'.repeat(41)}`, memoryMiB: 81559 },
      ],
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}nvidia`]: 'true',
        [`${A}nvidia-${'x'.repeat(31)}`]: 'true',
        [`${A}nvidia-${'x'.repeat(31)}.product`]: `NVIDIA-${'X'.repeat(40)}`,
        [`${A}nvidia-${'x'.repeat(31)}.memory`]: '80Gi',
        [`${A}nvidia-${'x'.repeat(31)}.cores`]: '0',
        [`${A}nvidia-${'x'.repeat(31)}.count`]: '2',
      },
    },
    {
      name: 'two manufacturers on one node each get their labels',
      input: [
        { manufacturer: 'nvidia', product: 'Tesla T4', memoryMiB: 15360, driverVersion: '535.1' },
        { manufacturer: 'hygon', product: 'K100_AI', memoryMiB: 65536, cores: 120 },
      ],
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}hygon`]: 'true',
        [`${A}hygon-k100_ai`]: 'true',
        [`${A}hygon-k100_ai.product`]: 'K100_AI',
        [`${A}hygon-k100_ai.memory`]: '64Gi',
        [`${A}hygon-k100_ai.cores`]: '120',
        [`${A}hygon-k100_ai.count`]: '1',
        [`${A}nvidia`]: 'true',
        [`${A}nvidia.driver-version`]: '535.1',
        [`${A}nvidia-tesla-t4`]: 'true',
        [`${A}nvidia-tesla-t4.product`]: 'Tesla-T4',
        [`${A}nvidia-tesla-t4.memory`]: '15Gi',
        [`${A}nvidia-tesla-t4.cores`]: '0',
        [`${A}nvidia-tesla-t4.count`]: '1',
      },
    },
    {
      name: 'a product that normalises to nothing gets model id "unknown" and no .product',
      input: [{ manufacturer: 'metax', product: '曦云', memoryMiB: 65536 }],
      want: {
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}metax`]: 'true',
        [`${A}metax-unknown`]: 'true',
        [`${A}metax-unknown.memory`]: '64Gi',
        [`${A}metax-unknown.cores`]: '0',
        [`${A}metax-unknown.count`]: '1',
      },
    },
  ])('$name', ({ input, want }) => {
    const got = constructDeviceLabels(input);
    expect(got).toEqual(want);
    expectValidLabels(got);
  });

  it.each([
    {
      name: 'in enumeration order',
      input: [h100({ cores: undefined, family: undefined, driverVersion: undefined }), h100()],
    },
    {
      name: 'in reverse order',
      input: [h100(), h100({ cores: undefined, family: undefined, driverVersion: undefined })],
    },
  ])('takes the details one card of a model fails to report from another card, $name', ({ input }) => {
    const got = constructDeviceLabels(input);
    expect(got[`${A}nvidia-h100-80gb-hbm3.cores`]).toBe('16896');
    expect(got[`${A}nvidia-h100-80gb-hbm3.family`]).toBe('Hopper');
    expect(got[`${A}nvidia.driver-version`]).toBe('570.124.06');
    expect(got[`${A}nvidia-h100-80gb-hbm3.count`]).toBe('2');
  });

  it.each<{ name: string; input: LabelledCard; check: (labels: Record<string, string>) => void }>([
    {
      name: 'a 200-character product keeps every key and value within 63',
      input: { manufacturer: 'cambricon', product: `Cambricon ${'MLU'.repeat(70)}`, memoryMiB: 49152 },
      check: (labels) => expect(labels[`${A}cambricon-${'mlu'.repeat(10).slice(0, 28)}.product`]).toHaveLength(63),
    },
    {
      name: '(R) and (TM) lose their brackets in keys and values',
      input: { manufacturer: 'nvidia', product: 'NVIDIA(R) Tesla(TM) V100', memoryMiB: 32768 },
      check: (labels) => expect(labels[`${A}nvidia-r-teslatm-v100.product`]).toBe('NVIDIAR-TeslaTM-V100'),
    },
    {
      name: 'non-ASCII versions, families and capabilities are sanitised or omitted',
      input: {
        manufacturer: 'mthreads',
        product: 'MTT S4000',
        memoryMiB: 49152,
        family: '春晓',
        computeCapability: 'v2.1 β',
        driverVersion: ' 2.7.0 (稳定) ',
        runtimeVersion: '★',
      },
      check: (labels) => {
        expect(labels[`${A}mthreads-mtt-s4000.family`]).toBeUndefined();
        expect(labels[`${A}mthreads-mtt-s4000.comcap`]).toBe('v2.1');
        expect(labels[`${A}mthreads.driver-version`]).toBe('2.7.0');
        expect(labels[`${A}mthreads.runtime-version`]).toBeUndefined();
      },
    },
    {
      name: 'negative and fractional cores are clamped to a whole number',
      input: { manufacturer: 'nvidia', product: 'A', memoryMiB: 1024, cores: -3.7 },
      check: (labels) => expect(labels[`${A}nvidia-a.cores`]).toBe('0'),
    },
    {
      name: 'zero memory is written as "0"',
      input: { manufacturer: 'nvidia', product: 'A', memoryMiB: 0 },
      check: (labels) => expect(labels[`${A}nvidia-a.memory`]).toBe('0'),
    },
  ])('$name', ({ input, check }) => {
    const got = constructDeviceLabels([input]);
    check(got);
    expectValidLabels(got);
  });
});
