import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  constructDeviceLabels,
  extractAcceleratorKeys,
  extractGeneralKeys,
  extractNodeFacts,
  MAX_COUNT,
  type NodeLabelsInput,
  parseCount,
  readCount,
  readCpuCores,
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
  memoryMiB: 81920,
  product: 'NVIDIA-H100-80GB-HBM3',
  cores: '16896',
  family: 'Hopper',
};

const { memory: _memory, memoryMiB: _memoryMiB, ...H100_FACTS_UNKNOWN_MEMORY } = H100_FACTS;

describe('parseCount', () => {
  it.each([
    { name: 'reads a count', input: '8', want: 8 },
    { name: 'reads six digits', input: '999999', want: 999999 },
    { name: 'reads ten million (a virtual node’s CPUs)', input: '10000000', want: 10_000_000 },
    { name: 'reads the int32 maximum', input: String(MAX_COUNT), want: MAX_COUNT },
    { name: 'rejects one more than the int32 maximum', input: String(MAX_COUNT + 1), want: undefined },
    { name: 'rejects a plus sign', input: '+8', want: undefined },
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

  it('reads a larger number when told to (a flavor’s .capacity is nodes × count)', () => {
    expect(parseCount('4294967294', Number.MAX_SAFE_INTEGER)).toBe(4_294_967_294);
    expect(parseCount('99999999999999999', Number.MAX_SAFE_INTEGER)).toBeUndefined();
  });
});

describe('readCount (forms other tools write; issue 14, item 3)', () => {
  const PIN = 'but a flavor selects its nodes by the exact value';
  it.each([
    { name: 'reads the form we write', input: '8', want: { ok: true, value: 8 } },
    {
      name: 'refuses a leading zero and says how it reads',
      input: '08',
      want: `reads as 8, ${PIN} "8", which this label does not have`,
    },
    {
      name: 'refuses a plus sign and says how it reads',
      input: '+8',
      want: `reads as 8, ${PIN} "8", which this label does not have`,
    },
    {
      name: 'refuses an exponent that reads whole',
      input: '1e1',
      want: `reads as 10, ${PIN} "10", which this label does not have`,
    },
    { name: 'refuses 8.0', input: '8.0', want: `reads as 8, ${PIN} "8", which this label does not have` },
    { name: 'refuses a fraction', input: '1.5', want: 'is not a whole number' },
    { name: 'refuses milli cards', input: '3500m', want: 'is not a whole number' },
    { name: 'refuses zero', input: '0', want: 'is not a positive whole number' },
    { name: 'refuses a negative', input: '-8', want: 'is not a positive whole number' },
    { name: 'refuses garbage', input: 'abc', want: 'is not a positive whole number' },
    { name: 'refuses absence', input: undefined, want: 'is not a positive whole number' },
    { name: 'refuses more than int32', input: '1e10', want: `is more than ${MAX_COUNT}` },
  ])('$name', ({ input, want }) => {
    const got = readCount(input);
    if (typeof want === 'string') expect(got).toEqual({ ok: false, why: want });
    else expect(got).toEqual(want);
  });
});

describe('readCpuCores', () => {
  it.each([
    { name: 'reads whole cores', input: '224', want: { ok: true, value: 224 } },
    { name: 'rounds milli-CPU up', input: '3500m', want: { ok: true, value: 4 } },
    { name: 'reads a number', input: 96, want: { ok: true, value: 96 } },
    { name: 'reads ten million CPUs (a virtual node)', input: '10000000', want: { ok: true, value: 10_000_000 } },
    { name: 'reads 10M', input: '10M', want: { ok: true, value: 10_000_000 } },
    { name: 'refuses more than int32 cores', input: '3G', want: { ok: false, why: `is more than ${MAX_COUNT} cores` } },
    { name: 'refuses zero', input: '0', want: { ok: false, why: 'is not a positive quantity' } },
    { name: 'refuses garbage', input: 'lots', want: { ok: false, why: 'is not a positive quantity' } },
    { name: 'refuses absence', input: undefined, want: { ok: false, why: 'is not set' } },
  ])('$name', ({ input, want }) => {
    expect(readCpuCores(input)).toEqual(want);
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
        warnings: [],
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
        warnings: [],
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
        warnings: [],
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
        warnings: [],
      },
    },
    {
      name: 'pools a model whose memory is garbage as cards of unknown memory, and warns naming the label',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS, [`${A}${H100}.memory`]: 'huge' } },
      want: {
        name: 'n',
        os: 'linux',
        arch: 'amd64',
        general: { key: 'generic', cores: 224 },
        accelerators: [H100_FACTS_UNKNOWN_MEMORY],
        acceleratable: true,
        problems: [],
        warnings: [
          {
            reason: 'InvalidDeviceMemory',
            message: `${A}${H100}.memory="huge" is not a Kubernetes quantity such as 80Gi; its cards are pooled with an unknown memory`,
          },
        ],
      },
    },
    {
      name: 'pools a model whose memory label is missing, and warns',
      input: {
        name: 'n',
        labels: { ...OS_ARCH, ...GENERIC_224, [`${A}nvidia-x`]: 'true', [`${A}nvidia-x.count`]: '1' },
      },
      want: expect.objectContaining({
        accelerators: [{ key: 'nvidia-x', manufacturer: 'nvidia', count: 1 }],
        problems: [],
        warnings: [
          expect.objectContaining({ reason: 'InvalidDeviceMemory', message: expect.stringContaining('is not set') }),
        ],
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
        warnings: [],
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
        warnings: [],
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
          message: `${G}generic.count="3500m" is not a whole number`,
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
        accelerators: [{ key: 'nvidia-x', manufacturer: 'nvidia', count: 2, memory: '16Gi', memoryMiB: 16384 }],
      }),
    },
    {
      name: 'pools a memory another tool wrote as 24G, echoing it in canonical form',
      input: {
        name: 'n',
        labels: {
          ...OS_ARCH,
          ...GENERIC_224,
          [`${A}nvidia-x`]: 'true',
          [`${A}nvidia-x.count`]: '2',
          [`${A}nvidia-x.memory`]: '24G',
        },
      },
      want: expect.objectContaining({
        accelerators: [{ key: 'nvidia-x', manufacturer: 'nvidia', count: 2, memory: '22888Mi', memoryMiB: 22888 }],
        problems: [],
      }),
    },
    {
      name: 'pools a model whose memory is 0 (unknown) without a memory',
      input: {
        name: 'n',
        labels: {
          ...OS_ARCH,
          ...GENERIC_224,
          [`${A}nvidia-x`]: 'true',
          [`${A}nvidia-x.count`]: '2',
          [`${A}nvidia-x.memory`]: '0',
        },
      },
      want: expect.objectContaining({
        accelerators: [{ key: 'nvidia-x', manufacturer: 'nvidia', count: 2 }],
        problems: [],
      }),
    },
    {
      name: 'skips a model whose .count reads as 8 but is written 08, naming the label',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS, [`${A}${H100}.count`]: '08' } },
      want: expect.objectContaining({
        accelerators: [],
        acceleratable: true,
        problems: [
          {
            reason: 'InvalidDeviceCount',
            message: `${A}${H100}.count="08" reads as 8, but a flavor selects its nodes by the exact value "8", which this label does not have`,
          },
        ],
      }),
    },
    {
      name: 'pools a model whose memory is negative as unknown memory, and warns naming the label',
      input: { name: 'n', labels: { ...OS_ARCH, ...GENERIC_224, ...H100_LABELS, [`${A}${H100}.memory`]: '-512m' } },
      want: expect.objectContaining({
        accelerators: [expect.objectContaining({ key: H100, count: 8 })],
        problems: [],
        warnings: [
          {
            reason: 'InvalidDeviceMemory',
            message: `${A}${H100}.memory="-512m" is negative; its cards are pooled with an unknown memory`,
          },
        ],
      }),
    },
    {
      name: 'says a missing CPU count comes from a CPU capacity beyond int32',
      input: { name: 'n', labels: { ...OS_ARCH, [`${G}generic`]: 'true' }, cpuCapacity: '3G' },
      want: expect.objectContaining({
        generalProblem: {
          reason: 'InvalidCpuCount',
          message: `status.capacity.cpu="3G" is more than ${MAX_COUNT} cores, so node-profile writes no ${G}<key>.count`,
        },
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
