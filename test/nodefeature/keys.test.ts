import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { isLabelKey, isLabelValue, MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  ACCELERATOR_KEY_MAX,
  acceleratorKeyManufacturer,
  constructAcceleratorKey,
  constructGeneralKey,
  coresPercentagePerCard,
  type CpuIdentity,
  creditsResource,
  GENERAL_KEY_MAX,
  generalKeyManufacturer,
  UNKNOWN_MODEL,
} from '../../src/nodefeature/index.js';
import { isManufacturer, MANUFACTURERS } from '../../src/contracts/index.js';

describe('key budgets', () => {
  it('leaves an aKey 63 − 25 = 38 characters, room for ".sliced.memory-percentage"', () => {
    expect(ACCELERATOR_KEY_MAX).toBe(38);
    expect(ACCELERATOR_KEY_MAX + '.sliced.memory-percentage'.length).toBe(63);
  });

  it('leaves a gKey 63 − 9 = 54 characters, room for the flavors\' ".capacity" (stricter than ".count")', () => {
    expect(GENERAL_KEY_MAX).toBe(54);
    expect(GENERAL_KEY_MAX + '.capacity'.length).toBe(63);
  });
});

describe('constructAcceleratorKey', () => {
  interface Case {
    readonly name: string;
    readonly input: { readonly mfr: ManufacturerName; readonly product: string; readonly memory?: string };
    readonly want: string;
  }
  const cases: Case[] = [
    // the modelled Go project's key examples
    {
      name: 'AMD Instinct MI300X',
      input: { mfr: 'amd', product: 'AMD Instinct MI300X OAM' },
      want: 'amd-instinct-mi300x-oam',
    },
    {
      name: 'Ascend 910B2 without a space after the brand',
      input: { mfr: 'ascend', product: 'Ascend910B2' },
      want: 'ascend-910b2',
    },
    { name: 'Ascend 310P3 without a brand', input: { mfr: 'ascend', product: '310P3' }, want: 'ascend-310p3' },
    { name: 'Cambricon MLU370-X8', input: { mfr: 'cambricon', product: 'MLU370-X8' }, want: 'cambricon-mlu370-x8' },
    { name: 'Hygon K100_AI keeps its underscore', input: { mfr: 'hygon', product: 'K100_AI' }, want: 'hygon-k100_ai' },
    { name: 'MetaX MXC500', input: { mfr: 'metax', product: 'MXC500' }, want: 'metax-mxc500' },
    {
      name: 'NVIDIA H100 80GB HBM3',
      input: { mfr: 'nvidia', product: 'NVIDIA H100 80GB HBM3' },
      want: 'nvidia-h100-80gb-hbm3',
    },
    { name: 'NVIDIA A10G', input: { mfr: 'nvidia', product: 'NVIDIA A10G' }, want: 'nvidia-a10g' },
    { name: 'Tesla T4 keeps its brand', input: { mfr: 'nvidia', product: 'Tesla T4' }, want: 'nvidia-tesla-t4' },
    {
      name: 'multi-word brand "Moore Threads" is not trimmed',
      input: { mfr: 'mthreads', product: 'Moore Threads MTT S4000' },
      want: 'mthreads-moore-threads-mtt-s4000',
    },
    // hostile
    {
      name: 'bare manufacturer word becomes model "unknown"',
      input: { mfr: 'nvidia', product: 'NVIDIA' },
      want: `nvidia-${UNKNOWN_MODEL}`,
    },
    { name: 'empty product becomes model "unknown"', input: { mfr: 'thead', product: '' }, want: 'thead-unknown' },
    {
      name: 'non-ASCII-only product becomes model "unknown"',
      input: { mfr: 'iluvatar', product: '天数智芯' },
      want: 'iluvatar-unknown',
    },
    {
      name: 'drops (R)/(TM) punctuation but keeps the letters',
      input: { mfr: 'nvidia', product: 'NVIDIA(R) Tesla(TM) V100' },
      want: 'nvidia-r-teslatm-v100',
    },
    {
      name: '200-character product is cut to 38 characters',
      input: { mfr: 'nvidia', product: `NVIDIA ${'X'.repeat(200)}` },
      want: `nvidia-${'x'.repeat(31)}`,
    },
    {
      name: 'long product of the longest manufacturer is cut to 38',
      input: { mfr: 'cambricon', product: 'y'.repeat(200) },
      want: `cambricon-${'y'.repeat(28)}`,
    },
    {
      name: 'cut never leaves a trailing separator',
      input: { mfr: 'nvidia', product: `${'a'.repeat(30)} bcd` },
      want: `nvidia-${'a'.repeat(30)}`,
    },
    {
      name: 'memory suffix tells apart groups of one product',
      input: { mfr: 'nvidia', product: 'NVIDIA A100', memory: '80g' },
      want: 'nvidia-a100-80g',
    },
    {
      name: 'memory suffix is kept whole on a 200-character product',
      input: { mfr: 'nvidia', product: 'Q'.repeat(200), memory: '80g' },
      want: `nvidia-${'q'.repeat(27)}-80g`,
    },
    {
      name: 'memory suffix follows "unknown"',
      input: { mfr: 'nvidia', product: 'NVIDIA', memory: '40g' },
      want: 'nvidia-unknown-40g',
    },
  ];

  it.each(cases)('$name', ({ input, want }) => {
    const got = constructAcceleratorKey(input.mfr, input.product, input.memory);
    expect(got).toBe(want);
    expect(got.length).toBeLessThanOrEqual(ACCELERATOR_KEY_MAX);
    expect(isLabelKey(`acceleratable.feature.gpustack.ai/${got}.sliced.memory-percentage`)).toBe(true);
  });
});

describe('constructGeneralKey', () => {
  const cases: { name: string; input: CpuIdentity; want: string }[] = [
    // the modelled Go project's examples
    {
      name: 'AMD EPYC 7763 drops the core count and Processor',
      input: { vendor: 'AMD', cpuName: 'AMD EPYC 7763 64-Core Processor' },
      want: 'amd-epyc-7763',
    },
    {
      name: 'Intel Xeon drops (R), CPU and the clock',
      input: { vendor: 'Intel', cpuName: 'Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz' },
      want: 'intel-xeon-platinum-8259cl',
    },
    { name: 'AMD EPYC 7R13', input: { vendor: 'AMD', cpuName: 'AMD EPYC 7R13 Processor' }, want: 'amd-epyc-7r13' },
    {
      name: 'falls back to family and model without the annotation',
      input: { vendor: 'AMD', family: '25', model: '1' },
      want: 'amd-25-1',
    },
    { name: 'is generic without any NFD label', input: {}, want: 'generic' },
    // §11
    {
      name: 'Xeon 8480+ drops the plus',
      input: { vendor: 'Intel', cpuName: 'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz' },
      want: 'intel-xeon-platinum-8480',
    },
    {
      name: 'HiSilicon Kunpeng keeps its dash',
      input: { vendor: 'HiSilicon', cpuName: 'Kunpeng-920' },
      want: 'hisilicon-kunpeng-920',
    },
    // a vendor that cannot be named is the word "generic"; the CPU model still splits pools
    // (issue 14, item 2; docs/architecture.md#modelled-system)
    {
      name: 'VendorUnknown (arm64 Kunpeng) keys off generic and keeps the model (the modelled system’s vector)',
      input: { vendor: 'VendorUnknown', cpuName: 'Kunpeng 920' },
      want: 'generic-kunpeng-920',
    },
    {
      name: 'VendorUnknown without a CPU name falls back to family and model',
      input: { vendor: 'VendorUnknown', family: '31', model: '53264' },
      want: 'generic-31-53264',
    },
    { name: 'VendorUnknown with nothing else is generic', input: { vendor: 'VendorUnknown' }, want: 'generic' },
    {
      name: 'a present but empty vendor is unknown too, not a reason to skip the node (as the modelled system)',
      input: { vendor: '', cpuName: 'AMD EPYC 7763' },
      want: 'generic-amd-epyc-7763',
    },
    {
      name: 'a literal Unknown vendor is the same unknown (the modelled system writes unknown-<model>)',
      input: { vendor: 'Unknown', cpuName: 'Kunpeng-920' },
      want: 'generic-kunpeng-920',
    },
    {
      name: 'an absent vendor label with a CPU name keys off generic and the model',
      input: { cpuName: 'Kunpeng-920' },
      want: 'generic-kunpeng-920',
    },
    {
      name: 'a vendor of symbols only is unknown',
      input: { vendor: '(®)', family: '25', model: '1' },
      want: 'generic-25-1',
    },
    { name: 'a vendor of non-ASCII only is unknown', input: { vendor: '海光' }, want: 'generic' },
    // fallbacks
    {
      name: 'an unresolved "@" template annotation is absent',
      input: { vendor: 'AMD', cpuName: '@cpu.model.name', family: '25', model: '1' },
      want: 'amd-25-1',
    },
    {
      name: 'only the vendor without a name or both family and model',
      input: { vendor: 'AMD', family: '25' },
      want: 'amd',
    },
    {
      name: 'an empty annotation falls back to family and model',
      input: { vendor: 'AMD', cpuName: '', family: '25', model: '1' },
      want: 'amd-25-1',
    },
    {
      name: 'a name that is only the vendor word leaves the vendor',
      input: { vendor: 'Intel', cpuName: 'Intel(R) CPU @ 1.00GHz' },
      want: 'intel',
    },
    {
      name: 'separators in the vendor are removed',
      input: { vendor: 'Hygon_Genuine', cpuName: 'C86 7285' },
      want: 'hygongenuine-c86-7285',
    },
    {
      name: 'unknown vendor keeps its own name',
      input: { vendor: 'Zhaoxin', cpuName: 'ZHAOXIN KaiXian KX-U6780A' },
      want: 'zhaoxin-kaixian-kx-u6780a',
    },
    {
      name: 'non-ASCII in the CPU name is dropped',
      input: { vendor: 'Phytium', cpuName: 'Phytium 飞腾 FT-2000+/64' },
      want: 'phytium-ft-200064',
    },
    {
      name: '200-character CPU name is cut to 54',
      input: { vendor: 'AMD', cpuName: 'EPYC ' + '9'.repeat(200) },
      want: `amd-epyc-${'9'.repeat(45)}`,
    },
    {
      name: '200-character vendor is cut to 54 and takes no model',
      input: { vendor: 'V'.repeat(200), cpuName: 'Anything' },
      want: 'v'.repeat(54),
    },
  ];

  it.each(cases)('$name', ({ input, want }) => {
    const got = constructGeneralKey(input);
    expect(got).toBe(want);
    expect(got.length).toBeLessThanOrEqual(GENERAL_KEY_MAX);
    expect(isLabelKey(`general.feature.gpustack.ai/${got}.capacity`)).toBe(true);
    expect(isLabelValue(got)).toBe(true);
  });
});

describe('key manufacturers', () => {
  it.each([
    { name: 'reads nvidia from an aKey', input: 'nvidia-h100-80gb-hbm3', want: 'nvidia' },
    { name: 'reads hygon from an aKey with an underscore', input: 'hygon-k100_ai', want: 'hygon' },
    { name: 'rejects the bare manufacturer label name', input: 'nvidia', want: undefined },
    { name: 'rejects a manufacturer-level suffix', input: 'nvidia.driver-version', want: undefined },
    { name: 'rejects an unknown manufacturer', input: 'intel-arc-a770', want: undefined },
    { name: 'rejects a leading dash', input: '-nvidia', want: undefined },
    { name: 'is case-sensitive', input: 'NVIDIA-h100', want: undefined },
  ])('acceleratorKeyManufacturer $name', ({ input, want }) => {
    expect(acceleratorKeyManufacturer(input)).toBe(want);
  });

  it.each([
    { name: 'cuts at the first dash', input: 'amd-epyc-7763', want: 'amd' },
    { name: 'keeps a key without a dash', input: 'generic', want: 'generic' },
  ])('generalKeyManufacturer $name', ({ input, want }) => {
    expect(generalKeyManufacturer(input)).toBe(want);
  });
});

describe('manufacturer registry', () => {
  it.each([
    { name: 'nvidia overcommits 128 slices', input: 'nvidia' as const, want: 12800 },
    { name: 'ascend overcommits 63 slices', input: 'ascend' as const, want: 6300 },
    ...MANUFACTURER_NAMES.filter((m) => m !== 'nvidia' && m !== 'ascend').map((m) => ({
      name: `${m} gets 100`,
      input: m,
      want: 100,
    })),
  ])('coresPercentagePerCard: $name', ({ input, want }) => {
    expect(coresPercentagePerCard(input)).toBe(want);
  });

  it.each([
    { name: 'amd', want: ['1002', 'amd.com/gpu'] },
    { name: 'ascend', want: ['19e5', 'huawei.com/npu'] },
    { name: 'cambricon', want: ['cabc', 'cambricon.com/mlu'] },
    { name: 'hygon', want: ['1d94', 'hygon.com/dcu'] },
    { name: 'iluvatar', want: ['1e3e', 'iluvatar.com/gpu'] },
    { name: 'metax', want: ['9999', 'metax-tech.com/gpu'] },
    { name: 'mthreads', want: ['1ed5', 'mthreads.com/gpu'] },
    { name: 'nvidia', want: ['10de', 'nvidia.com/gpu'] },
    { name: 'thead', want: ['1ded', 'alibabacloud.com/ppu'] },
  ])('$name has the PCI vendor and device resource of docs/architecture.md#manufacturers', ({ name, want }) => {
    const m = MANUFACTURERS[name as ManufacturerName];
    expect([m.pciVendor, m.deviceResource]).toEqual(want);
    expect(creditsResource(m.key)).toBe(`credits.gpustack.ai/${name}`);
    expect(isManufacturer(name)).toBe(true);
  });

  it.each(['intel', 'NVIDIA', '', 'nvidia '])('isManufacturer rejects %j', (name) => {
    expect(isManufacturer(name)).toBe(false);
  });
});
