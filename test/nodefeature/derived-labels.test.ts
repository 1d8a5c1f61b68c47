import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEVICE_LABEL_SOURCES, MANUFACTURER_NAMES, type ManufacturerName } from '../../src/k8s/index.js';
import {
  constructDeviceLabels,
  constructProfile,
  declaredByOthers,
  deriveDeviceLabels,
  type DerivationInput,
  type DerivationOptions,
  formatDerivedRecord,
  isDeviceLabelOf,
  type ProfileOptions,
  readDerivedRecord,
} from '../../src/nodefeature/index.js';

const A = 'acceleratable.feature.gpustack.ai/';
const RECORD = 'feature.gpustack.ai/derived-device-labels';
const AGENT = 'feature.gpustack.ai/agent-labels';
const NFD = 'nfd.node.kubernetes.io/feature-labels';
const H100 = 'nvidia-h100-80gb-hbm3';

const GFD = {
  'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
  'nvidia.com/gpu.count': '8',
  'nvidia.com/gpu.memory': '81559',
  'nvidia.com/gpu.family': 'hopper',
  'nvidia.com/cuda.driver.major': '570',
  'nvidia.com/cuda.driver.minor': '124',
  'nvidia.com/cuda.driver.rev': '06',
};

/** The device labels node-profile derives from GFD above. */
const DERIVED = {
  [`${A}nvidia`]: 'true',
  [`${A}nvidia.driver-version`]: '570.124.06',
  [`${A}${H100}`]: 'true',
  [`${A}${H100}.product`]: 'NVIDIA-H100-80GB-HBM3',
  [`${A}${H100}.memory`]: '80Gi',
  [`${A}${H100}.cores`]: '0',
  [`${A}${H100}.count`]: '8',
  [`${A}${H100}.family`]: 'hopper',
};

const OPTIONS: DerivationOptions = {
  sources: DEVICE_LABEL_SOURCES,
  manufacturers: new Set(MANUFACTURER_NAMES),
  managed: true,
};

/** A node as it is after a previous answer derived `labels`: labels set and recorded. */
function derivedBefore(labels: Record<string, string>, extra: Record<string, string> = {}): DerivationInput {
  return { labels: { ...GFD, ...labels, ...extra }, annotations: { [RECORD]: formatDerivedRecord(labels) } };
}

function nulls(labels: Record<string, string>): Record<string, null> {
  return Object.fromEntries(Object.keys(labels).map((k) => [k, null]));
}

describe('deriveDeviceLabels', () => {
  it.each<{
    name: string;
    input: DerivationInput;
    options?: Partial<DerivationOptions>;
    want: { labels: Record<string, string | null>; record: string | null | undefined };
  }>([
    {
      name: 'derives the device labels of a node that only GFD labelled, and records them',
      input: { labels: GFD },
      want: { labels: DERIVED, record: formatDerivedRecord(DERIVED) },
    },
    {
      name: 'is a fixed point: the same answer once applied',
      input: derivedBefore(DERIVED),
      want: { labels: DERIVED, record: formatDerivedRecord(DERIVED) },
    },
    {
      name: 'follows a change: 8 cards become 4',
      input: derivedBefore(DERIVED, { 'nvidia.com/gpu.count': '4' }),
      want: {
        labels: { ...DERIVED, [`${A}${H100}.count`]: '4' },
        record: formatDerivedRecord({ ...DERIVED, [`${A}${H100}.count`]: '4' }),
      },
    },
    {
      name: 'removes stale derived keys when the product changes, and records the new ones',
      input: derivedBefore(DERIVED, { 'nvidia.com/gpu.product': 'NVIDIA-H200', 'nvidia.com/gpu.memory': '143771' }),
      want: {
        labels: {
          [`${A}nvidia`]: 'true',
          [`${A}nvidia.driver-version`]: '570.124.06',
          [`${A}nvidia-h200`]: 'true',
          [`${A}nvidia-h200.product`]: 'NVIDIA-H200',
          [`${A}nvidia-h200.memory`]: '140Gi',
          [`${A}nvidia-h200.cores`]: '0',
          [`${A}nvidia-h200.count`]: '8',
          [`${A}nvidia-h200.family`]: 'hopper',
          [`${A}${H100}`]: null,
          [`${A}${H100}.product`]: null,
          [`${A}${H100}.memory`]: null,
          [`${A}${H100}.cores`]: null,
          [`${A}${H100}.count`]: null,
          [`${A}${H100}.family`]: null,
        },
        record: expect.stringContaining('nvidia-h200.count'),
      },
    },
    {
      name: 'removes every derived key and the record once GFD is gone',
      input: {
        labels: DERIVED,
        annotations: { [RECORD]: formatDerivedRecord(DERIVED) },
      },
      want: { labels: nulls(DERIVED), record: null },
    },
    {
      name: 'removes them when the source is turned off ([Agent])',
      input: derivedBefore(DERIVED),
      options: { sources: ['Agent'] },
      want: { labels: nulls(DERIVED), record: null },
    },
    {
      name: 'removes them when the manufacturer is disabled',
      input: derivedBefore(DERIVED),
      options: { manufacturers: new Set<ManufacturerName>(['amd']) },
      want: { labels: nulls(DERIVED), record: null },
    },
    {
      name: 'removes them from a node that is no longer managed',
      input: derivedBefore(DERIVED),
      options: { managed: false },
      want: { labels: nulls(DERIVED), record: null },
    },
    {
      name: 'derives nothing where our agent published labels for the manufacturer (no record: all theirs)',
      input: {
        labels: {
          ...GFD,
          ...constructDeviceLabels([{ manufacturer: 'nvidia', product: 'NVIDIA A100', memoryMiB: 81920 }]),
        },
      },
      want: { labels: {}, record: undefined },
    },
    {
      name: 'hands off when the agent starts publishing: keeps what it declares, removes only ours',
      input: {
        labels: {
          ...GFD,
          ...DERIVED,
          // the agent (node-labels mode) wrote these, declaring them; two have our recorded value
          [`${A}nvidia`]: 'true',
          [`${A}${H100}`]: 'true',
          [`${A}${H100}.cores`]: '16896',
        },
        annotations: {
          [RECORD]: formatDerivedRecord(DERIVED),
          [AGENT]: `${A}nvidia,${A}${H100},${A}${H100}.cores,feature.gpustack.ai/acceleratable`,
        },
      },
      want: {
        labels: {
          [`${A}nvidia.driver-version`]: null,
          [`${A}${H100}.product`]: null,
          [`${A}${H100}.memory`]: null,
          [`${A}${H100}.count`]: null,
          [`${A}${H100}.family`]: null,
        },
        record: null,
      },
    },
    {
      name: 'never removes a key NFD declares (the agent publishing through a NodeFeature)',
      input: {
        labels: { ...GFD, ...DERIVED },
        annotations: {
          [RECORD]: formatDerivedRecord(DERIVED),
          // NFD lists labels outside feature.node.kubernetes.io in full, its own without the prefix
          [NFD]: `cpu-model.vendor_id,${A}nvidia,${A}${H100},${A}${H100}.count`,
        },
      },
      want: {
        labels: {
          [`${A}nvidia.driver-version`]: null,
          [`${A}${H100}.product`]: null,
          [`${A}${H100}.memory`]: null,
          [`${A}${H100}.cores`]: null,
          [`${A}${H100}.family`]: null,
        },
        record: null,
      },
    },
    {
      name: 'treats a recorded key whose value someone changed as theirs: hands the manufacturer off',
      input: derivedBefore(DERIVED, { [`${A}${H100}.family`]: 'Hopper' }),
      want: {
        labels: nulls(Object.fromEntries(Object.entries(DERIVED).filter(([k]) => !k.endsWith('.family')))),
        record: null,
      },
    },
    {
      name: 'derives for one manufacturer while the agent publishes another',
      input: {
        labels: {
          ...GFD,
          ...constructDeviceLabels([{ manufacturer: 'amd', product: 'AMD Instinct MI300X OAM', memoryMiB: 196592 }]),
        },
      },
      want: { labels: DERIVED, record: formatDerivedRecord(DERIVED) },
    },
    {
      name: 'an unreadable record makes nothing ours: derived-looking labels are left alone, the record goes',
      input: { labels: { ...GFD, ...DERIVED }, annotations: { [RECORD]: 'not json' } },
      want: { labels: {}, record: null },
    },
    {
      name: 'a node no vendor labelled gets nothing, and no record',
      input: { labels: { 'kubernetes.io/os': 'linux' } },
      want: { labels: {}, record: undefined },
    },
  ])('$name', ({ input, options, want }) => {
    expect(deriveDeviceLabels(input, { ...OPTIONS, ...options })).toEqual(want);
  });
});

describe('ownership helpers', () => {
  it.each([
    { key: `${A}nvidia`, want: true },
    { key: `${A}nvidia.driver-version`, want: true },
    { key: `${A}${H100}.count`, want: true },
    { key: `${A}${H100}.sliced.units`, want: false },
    { key: `${A}${H100}.sliced.partitions`, want: false },
    { key: `${A}nvidiax`, want: false },
    { key: `${A}amd-mi300x`, want: false },
    { key: 'nvidia.com/gpu.count', want: false },
  ])('isDeviceLabelOf($key, nvidia) is $want', ({ key, want }) => {
    expect(isDeviceLabelOf(key, 'nvidia')).toBe(want);
  });

  it.each([
    { name: 'reads what formatDerivedRecord writes', input: formatDerivedRecord(DERIVED), want: DERIVED },
    { name: 'refuses a non-object', input: '["x"]', want: {} },
    { name: 'refuses keys outside the device prefix', input: '{"gpustack.ai/managed":"true"}', want: {} },
    { name: 'refuses non-string values', input: `{"${A}nvidia":true}`, want: {} },
    { name: 'refuses garbage', input: '{', want: {} },
    { name: 'reads absence as nothing', input: undefined, want: {} },
  ])('readDerivedRecord $name', ({ input, want }) => {
    expect(readDerivedRecord(input)).toEqual(want);
  });

  it('writes the record with sorted keys, so one set has one text', () => {
    expect(formatDerivedRecord({ b: '1', a: '2' })).toBe('{"a":"2","b":"1"}');
  });

  it('reads the keys our agent and NFD declare, adding NFD’s default prefix where it leaves it out', () => {
    expect(
      [...declaredByOthers({ [AGENT]: `${A}nvidia, ${A}${H100}`, [NFD]: `cpu-model.vendor_id,${A}amd` })].sort(),
    ).toEqual([`${A}amd`, `${A}nvidia`, `${A}${H100}`, 'feature.node.kubernetes.io/cpu-model.vendor_id']);
  });
});

describe('constructProfile with derived device labels', () => {
  const PROFILE: ProfileOptions = {
    nodeManagement: 'Automatic',
    generalKey: 'Generic',
    mixedOnNode: false,
    manufacturers: new Set(MANUFACTURER_NAMES),
    deviceLabelSources: DEVICE_LABEL_SOURCES,
  };

  it('derives the device labels, writes their per-card capacity and no cpu-only, and records them', () => {
    const profile = constructProfile(
      { labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...GFD }, cpuCapacity: '224' },
      PROFILE,
    );
    expect(profile.labels).toEqual({
      'gpustack.ai/managed': 'true',
      'general.feature.gpustack.ai/generic': 'true',
      'general.feature.gpustack.ai/generic.count': '224',
      ...DERIVED,
      [`${A}${H100}.sliced.units`]: '1600000',
      [`${A}${H100}.sliced.cores-percentage`]: '12800',
      [`${A}${H100}.sliced.memory-percentage`]: '100',
      [`${A}${H100}.sliced.memory-mib`]: '81920',
    });
    expect(profile.annotations).toEqual({ [RECORD]: formatDerivedRecord(DERIVED) });
  });

  it('removes the derived labels and their capacity labels together once GFD is gone', () => {
    const before = constructProfile({ labels: { 'kubernetes.io/os': 'linux', ...GFD }, cpuCapacity: '8' }, PROFILE);
    const applied: Record<string, string> = { 'kubernetes.io/os': 'linux' };
    for (const [k, v] of Object.entries(before.labels)) if (v !== null) applied[k] = v;
    const after = constructProfile(
      { labels: applied, annotations: { [RECORD]: before.annotations[RECORD] as string }, cpuCapacity: '8' },
      PROFILE,
    );
    expect(
      Object.entries(after.labels)
        .filter(([, v]) => v === null)
        .map(([k]) => k)
        .sort(),
    ).toEqual(
      [
        ...Object.keys(DERIVED),
        ...['units', 'cores-percentage', 'memory-percentage', 'memory-mib'].map((s) => `${A}${H100}.sliced.${s}`),
      ].sort(),
    );
    expect(after.labels['feature.gpustack.ai/cpu-only']).toBe('true');
    expect(after.annotations).toEqual({ [RECORD]: null });
  });

  it('mentions no annotation on a node without derived labels', () => {
    expect(constructProfile({ labels: { 'kubernetes.io/os': 'linux' } }, PROFILE).annotations).toEqual({});
  });
});

describe('the ownership rule (property)', () => {
  const device = fc.record({
    manufacturer: fc.constantFrom('nvidia', 'amd', 'ascend'),
    product: fc.constantFrom(
      'NVIDIA H100 80GB HBM3',
      'NVIDIA-H100-80GB-HBM3',
      'Tesla T4',
      'AMD Instinct MI300X OAM',
      '910B3',
    ),
    memoryMiB: fc.constantFrom(0, 15360, 81559, 196592),
  });
  const vendor = fc.record(
    {
      'nvidia.com/gpu.product': fc.constantFrom('NVIDIA-H100-80GB-HBM3', 'Tesla-T4', 'NVIDIA-H200'),
      'nvidia.com/gpu.count': fc.constantFrom('1', '8', '08', 'x'),
      'nvidia.com/gpu.memory': fc.constantFrom('81559', '15360'),
      'amd.com/gpu.product-name': fc.constant('AMD_Instinct_MI300X_OAM'),
      'beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM': fc.constantFrom('4', '8'),
      'huawei.com/npu.chip.name': fc.constant('910B3'),
    },
    { requiredKeys: [] },
  );
  const node = fc
    .tuple(
      fc.array(device, { maxLength: 4 }),
      vendor,
      fc.dictionary(fc.constantFrom(...Object.keys(DERIVED)), fc.constantFrom('true', '8', '4', '80Gi', 'x')),
      fc.subarray(Object.keys(DERIVED)),
      fc.boolean(),
    )
    .map(([devices, vendorLabels, record, declared, agentLabels]) => {
      const labels: Record<string, string> = {
        ...vendorLabels,
        ...(agentLabels ? constructDeviceLabels(devices) : {}),
        ...record,
      };
      return {
        labels,
        annotations: { [RECORD]: formatDerivedRecord(record), [AGENT]: declared.join(',') },
        capacity: { 'huawei.com/npu': '8' },
      };
    });

  it('never sets or removes a device label that is not ours (recorded with its value, undeclared)', () => {
    fc.assert(
      fc.property(node, fc.boolean(), (input, managed) => {
        const out = deriveDeviceLabels(input, { ...OPTIONS, managed });
        const recorded = readDerivedRecord(input.annotations[RECORD]);
        const declared = declaredByOthers(input.annotations);
        for (const key of Object.keys(out.labels)) {
          const present = input.labels[key] !== undefined;
          const ours = recorded[key] === input.labels[key] && !declared.has(key);
          if (present) expect(ours, `${key} is touched but not ours`).toBe(true);
        }
      }),
      { numRuns: 400, seed: 14 },
    );
  });
});
