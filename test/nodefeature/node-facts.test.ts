import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  constructDeviceLabels,
  extractAcceleratorKeys,
  extractGeneralKeys,
  extractNodeFacts,
  type NodeLabelsInput,
  parseCount,
} from '../../src/nodefeature/index.js';

const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const H100 = 'nvidia-h100-80gb-hbm3';
const ALL = new Set<ManufacturerName>(MANUFACTURER_NAMES);
const OS_ARCH = { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' };
const GENERIC_224 = { [`${G}generic`]: 'true', [`${G}generic.count`]: '224' };
const H100_LABELS = constructDeviceLabels(
  Array.from({ length: 8 }, () => ({
    manufacturer: 'nvidia',
    product: 'NVIDIA H100 80GB HBM3',
    memoryMiB: 81559,
    cores: 16896,
    family: 'Hopper',
    computeCapability: '9.0',
  })),
);
const H100_FACTS = {
  key: H100,
  manufacturer: 'nvidia',
  count: 8,
  memory: '80Gi',
  product: 'NVIDIA-H100-80GB-HBM3',
  cores: '16896',
  family: 'Hopper',
};

describe('parseCount', () => {
  it.each([
    { name: 'reads a count', input: '8', want: 8 },
    { name: 'reads six digits', input: '999999', want: 999999 },
    { name: 'rejects seven digits', input: '1000000', want: undefined },
    { name: 'rejects letters', input: 'abc', want: undefined },
    { name: 'rejects zero', input: '0', want: undefined },
    { name: 'rejects a leading zero', input: '08', want: undefined },
    { name: 'rejects negatives', input: '-1', want: undefined },
    { name: 'rejects exponents', input: '1e3', want: undefined },
    { name: 'rejects fractions', input: '1.5', want: undefined },
    { name: 'rejects spaces', input: ' 8', want: undefined },
    { name: 'rejects the empty string', input: '', want: undefined },
    { name: 'rejects absence', input: undefined, want: undefined },
  ])('$name', ({ input, want }) => {
    expect(parseCount(input)).toBe(want);
  });
});

describe('extractAcceleratorKeys', () => {
  it.each<{ name: string; input: { labels: Record<string, string>; enabled?: ManufacturerName[] }; want: string[] }>([
    { name: 'finds the model of an H100 node', input: { labels: H100_LABELS }, want: [H100] },
    {
      name: 'ignores the manufacturer label and its versions',
      input: { labels: { [`${A}nvidia`]: 'true', [`${A}nvidia.driver-version`]: '1' } },
      want: [],
    },
    {
      name: 'ignores values other than exactly "true"',
      input: { labels: { [`${A}nvidia-a`]: 'True', [`${A}nvidia-b`]: 'false', [`${A}nvidia-c`]: '' } },
      want: [],
    },
    { name: 'ignores unknown manufacturers', input: { labels: { [`${A}intel-arc`]: 'true' } }, want: [] },
    {
      name: 'ignores disabled manufacturers',
      input: { labels: { [`${A}amd-mi300x`]: 'true', [`${A}nvidia-a`]: 'true' }, enabled: ['nvidia'] },
      want: ['nvidia-a'],
    },
    {
      name: 'ignores other prefixes',
      input: { labels: { 'feature.gpustack.ai/nvidia-a': 'true', [`x.${A}nvidia-b`]: 'true' } },
      want: [],
    },
    {
      name: 'returns keys sorted',
      input: { labels: { [`${A}nvidia-b`]: 'true', [`${A}amd-z`]: 'true', [`${A}nvidia-a`]: 'true' } },
      want: ['amd-z', 'nvidia-a', 'nvidia-b'],
    },
    {
      name: 'picks up an admin label of the form <mfr>-x=true (as upstream does)',
      input: { labels: { [`${A}nvidia-x`]: 'true' } },
      want: ['nvidia-x'],
    },
  ])('$name', ({ input, want }) => {
    expect(extractAcceleratorKeys(input.labels, new Set(input.enabled ?? MANUFACTURER_NAMES))).toEqual(want);
  });
});

describe('extractGeneralKeys', () => {
  it.each<{ name: string; input: Record<string, string>; want: string[] }>([
    { name: 'finds the generic key', input: GENERIC_224, want: ['generic'] },
    {
      name: 'ignores the CPU manufacturer label (no .count beside it)',
      input: { [`${G}intel`]: 'true', [`${G}intel-xeon`]: 'true', [`${G}intel-xeon.count`]: '8' },
      want: ['intel-xeon'],
    },
    { name: 'ignores a key without a count', input: { [`${G}generic`]: 'true' }, want: [] },
    {
      name: 'ignores a key whose value is not true',
      input: { [`${G}generic`]: 'false', [`${G}generic.count`]: '8' },
      want: [],
    },
    {
      name: 'returns several keys sorted',
      input: { [`${G}b`]: 'true', [`${G}b.count`]: '1', [`${G}a`]: 'true', [`${G}a.count`]: '1' },
      want: ['a', 'b'],
    },
  ])('$name', ({ input, want }) => {
    expect(extractGeneralKeys(input)).toEqual(want);
  });
});

describe('extractNodeFacts', () => {
  it.each<{ name: string; input: NodeLabelsInput; enabled?: ManufacturerName[]; want: unknown }>([
    {
      name: 'reads a healthy 8 × H100 node',
      input: { name: 'gpu-h100-01', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS } },
      want: {
        name: 'gpu-h100-01',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'generic', cores: 224 },
        accelerators: [H100_FACTS],
        acceleratable: true,
        problems: [],
      },
    },
    {
      name: 'reads a CPU-only node and its CPU name',
      input: {
        name: 'cpu-01',
        labels: {
          ...OS_ARCH,
          [`${G}amd`]: 'true',
          [`${G}amd-epyc-7763`]: 'true',
          [`${G}amd-epyc-7763.count`]: '128',
          'feature.gpustack.ai/acceleratable': 'false',
        },
        annotations: { 'feature.gpustack.ai/cpu-name': 'AMD EPYC 7763 64-Core Processor' },
      },
      want: {
        name: 'cpu-01',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'amd-epyc-7763', cores: 128, cpuName: 'AMD EPYC 7763 64-Core Processor' },
        accelerators: [],
        acceleratable: false,
        problems: [],
      },
    },
    {
      name: 'treats an unresolved "@" CPU-name template as absent',
      input: {
        name: 'n',
        labels: { ...OS_ARCH, ...GENERIC_224 },
        annotations: { 'feature.gpustack.ai/cpu-name': '@cpu.model.name' },
      },
      want: {
        name: 'n',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'generic', cores: 224 },
        accelerators: [],
        acceleratable: false,
        problems: [],
      },
    },
    {
      name: 'reports a garbage device count and keeps the node acceleratable',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS, [`${A}${H100}.count`]: 'abc' } },
      want: {
        name: 'n',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'generic', cores: 224 },
        accelerators: [],
        acceleratable: true,
        problems: [{ reason: 'InvalidDeviceCount', message: `${A}${H100}.count="abc" is not a positive whole number` }],
      },
    },
    {
      name: 'reports a garbage device memory',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS, [`${A}${H100}.memory`]: 'huge' } },
      want: {
        name: 'n',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'generic', cores: 224 },
        accelerators: [],
        acceleratable: true,
        problems: [
          { reason: 'InvalidDeviceMemory', message: `${A}${H100}.memory="huge" is not a memory quantity such as 80Gi` },
        ],
      },
    },
    {
      name: 'reports a missing device memory',
      input: {
        name: 'n',
        labels: { ...OS_ARCH, ...GENERIC_224, [`${A}nvidia-x`]: 'true', [`${A}nvidia-x.count`]: '1' },
      },
      want: expect.objectContaining({
        accelerators: [],
        problems: [expect.objectContaining({ reason: 'InvalidDeviceMemory' })],
      }),
    },
    {
      name: 'keeps the good model when another one is broken',
      input: {
        name: 'n',
        labels: {
          ...OS_ARCH,
          ...GENERIC_224,
          ...H100_LABELS,
          [`${A}amd-x`]: 'true',
          [`${A}amd-x.count`]: '0',
          [`${A}amd-x.memory`]: '8Gi',
        },
      },
      want: expect.objectContaining({
        accelerators: [H100_FACTS],
        problems: [expect.objectContaining({ reason: 'InvalidDeviceCount' })],
      }),
    },
    {
      name: 'reports missing os/arch first and drops the accelerators',
      input: { name: 'n', labels: { ...GENERIC_224, ...H100_LABELS, [`${A}amd-x`]: 'true' } },
      want: {
        name: 'n',
        general: { key: 'generic', cores: 224 },
        accelerators: [],
        acceleratable: true,
        problems: [
          {
            reason: 'InvalidOsArch',
            message: 'kubernetes.io/os=(unset) and kubernetes.io/arch=(unset) must both be set to lower-case names',
          },
          expect.objectContaining({ reason: 'InvalidDeviceCount' }),
        ],
      },
    },
    {
      name: 'reports an upper-case os',
      input: { name: 'n', labels: { ...GENERIC_224, 'kubernetes.io/os': 'Linux', 'kubernetes.io/arch': 'amd64' } },
      want: expect.objectContaining({ problems: [expect.objectContaining({ reason: 'InvalidOsArch' })] }),
    },
    {
      name: 'reports an arch with a separator an object name cannot carry',
      input: { name: 'n', labels: { ...GENERIC_224, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd_64' } },
      want: expect.objectContaining({ problems: [expect.objectContaining({ reason: 'InvalidOsArch' })] }),
    },
    {
      name: 'reports a missing general key as the general problem',
      input: { name: 'n', labels: { ...OS_ARCH } },
      want: {
        name: 'n',
        os: 'linux',
        arch: 'amd64',
        accelerators: [],
        acceleratable: false,
        problems: [],
        generalProblem: expect.objectContaining({ reason: 'MissingGeneralKey' }),
      },
    },
    {
      name: 'reports two general keys as ambiguous',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, [`${G}amd`]: 'true', [`${G}amd.count`]: '8' } },
      want: expect.objectContaining({
        generalProblem: { reason: 'AmbiguousGeneralKey', message: 'several general keys: amd, generic' },
      }),
    },
    {
      name: 'reports a garbage CPU count',
      input: { name: 'n', labels: { ...OS_ARCH, [`${G}generic`]: 'true', [`${G}generic.count`]: '3500m' } },
      want: expect.objectContaining({
        generalProblem: {
          reason: 'InvalidCpuCount',
          message: `${G}generic.count="3500m" is not a positive whole number`,
        },
      }),
    },
    {
      name: 'counts acceleratable=true without model labels as acceleratable',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, 'feature.gpustack.ai/acceleratable': 'true' } },
      want: expect.objectContaining({ accelerators: [], acceleratable: true, problems: [] }),
    },
    {
      name: 'ignores a model of a disabled manufacturer',
      input: {
        name: 'n',
        labels: {
          ...OS_ARCH,
          ...GENERIC_224,
          [`${A}hygon-k100_ai`]: 'true',
          [`${A}hygon-k100_ai.count`]: '1',
          [`${A}hygon-k100_ai.memory`]: '64Gi',
        },
      },
      enabled: ['nvidia'],
      want: expect.objectContaining({ accelerators: [], acceleratable: false, problems: [] }),
    },
    {
      name: 'omits empty optional labels',
      input: {
        name: 'n',
        labels: {
          ...OS_ARCH,
          ...GENERIC_224,
          [`${A}nvidia-x`]: 'true',
          [`${A}nvidia-x.count`]: '2',
          [`${A}nvidia-x.memory`]: '16Gi',
          [`${A}nvidia-x.product`]: '',
        },
      },
      want: expect.objectContaining({
        accelerators: [{ key: 'nvidia-x', manufacturer: 'nvidia', count: 2, memory: '16Gi' }],
      }),
    },
    {
      name: 'reads a node without labels',
      input: { name: 'bare' },
      want: expect.objectContaining({
        accelerators: [],
        acceleratable: false,
        problems: [expect.objectContaining({ reason: 'InvalidOsArch' })],
        generalProblem: expect.objectContaining({ reason: 'MissingGeneralKey' }),
      }),
    },
  ])('$name', ({ input, enabled, want }) => {
    expect(extractNodeFacts(input, enabled ? new Set(enabled) : ALL)).toEqual(want);
  });
});

describe('keys longer than the label budget (written by someone else)', () => {
  it('skips a 39-character aKey and a 55-character gKey with reason KeyTooLong', () => {
    const aKey = `nvidia-${'x'.repeat(32)}`;
    const gKey = `intel-${'y'.repeat(49)}`;
    const facts = extractNodeFacts(
      {
        name: 'n',
        labels: {
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          [`acceleratable.feature.gpustack.ai/${aKey}`]: 'true',
          [`acceleratable.feature.gpustack.ai/${aKey}.count`]: '8',
          [`acceleratable.feature.gpustack.ai/${aKey}.memory`]: '80Gi',
          [`general.feature.gpustack.ai/${gKey}`]: 'true',
          [`general.feature.gpustack.ai/${gKey}.count`]: '16',
        },
      },
      new Set(['nvidia'] as const),
    );
    expect(aKey).toHaveLength(39);
    expect(gKey).toHaveLength(55);
    expect(facts.accelerators).toEqual([]);
    expect(facts.problems.map((p) => p.reason)).toEqual(['KeyTooLong']);
    expect(facts.general).toBeUndefined();
    expect(facts.generalProblem?.reason).toBe('KeyTooLong');
  });
});
