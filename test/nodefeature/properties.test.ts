import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import {
  DEVICE_LABEL_SOURCES,
  isDnsLabel,
  isDnsSubdomain,
  isLabelKey,
  isLabelValue,
  MANUFACTURER_NAMES,
} from '../../src/k8s/index.js';
import {
  ACCELERATOR_KEY_MAX,
  clusterQueueName,
  constructAcceleratorKey,
  constructDeviceLabels,
  constructGeneralKey,
  constructProfileLabels,
  cpuFlavorName,
  type LabelledCard,
  deviceFlavorName,
  extractAcceleratorKeys,
  formatMemoryMiB,
  GENERAL_KEY_MAX,
  localQueueName,
  normalizeName,
  parseCount,
  readMemoryLabel,
  type ProfileOptions,
  sanitizeLabelValue,
} from '../../src/nodefeature/index.js';

const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const ALL = new Set<ManufacturerName>(MANUFACTURER_NAMES);
// Deterministic: a failure reproduces on every run and every machine.
const RUNS = { numRuns: 300, seed: 20240601 } as const;

// ---- arbitraries -------------------------------------------------------------------------------

const ASCIIISH = [
  ...'ABCDEFGHIKLMNOPRSTVXabcdefgiklmnorstvx0123456789',
  ' ',
  ' ',
  '-',
  '_',
  '.',
  '(',
  ')',
  '[',
  ']',
  '/',
  '+',
  '@',
  '®',
  '™',
  'é',
  '算',
];
// fast-check keeps strings short by default; size 'max' reaches the 200-character products too.
const asciiish = fc.oneof(
  fc.string({ unit: fc.constantFrom(...ASCIIISH) }),
  fc.string({ unit: fc.constantFrom(...ASCIIISH), maxLength: 220, size: 'max' }),
);
const unicode = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary', maxLength: 220, size: 'max' }));
const KNOWN_PRODUCTS = [
  'NVIDIA H100 80GB HBM3',
  'NVIDIA A100',
  'nvidia a100',
  'NVIDIA  A100',
  'NVIDIA A100 80G',
  'NVIDIA',
  '',
  '???',
  'Tesla T4',
  'AMD Instinct MI300X OAM',
  'Ascend910B2',
  '310P3',
  'K100_AI',
  'MXC500',
  'Navi 32 [Radeon RX 7700 XT / 7800 XT]',
  `NVIDIA ${'X'.repeat(200)}`,
  'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz',
];
const product = fc.oneof(
  { arbitrary: fc.constantFrom(...KNOWN_PRODUCTS), weight: 2 },
  { arbitrary: asciiish, weight: 2 },
  { arbitrary: unicode, weight: 1 },
  {
    arbitrary: fc.tuple(fc.constantFrom('NVIDIA ', 'AMD ', 'Ascend', 'Hygon ', ''), asciiish).map(([a, b]) => a + b),
    weight: 1,
  },
);
const anyText = fc.oneof(asciiish, unicode);
const manufacturer = fc.oneof(
  { arbitrary: fc.constantFrom(...MANUFACTURER_NAMES), weight: 5 },
  // Not one of ours, as a vendor library might still answer.
  { arbitrary: fc.constantFrom('intel', '', 'NVIDIA').map((m) => m as ManufacturerName), weight: 1 },
);
const memoryMiB = fc.oneof(
  fc.constantFrom(0, 1023, 15360, 24576, 40960, 81559, 81920, 143771),
  fc.integer({ min: 0, max: 16 * 1024 * 1024 }),
);

const device: fc.Arbitrary<LabelledCard> = fc.record(
  {
    manufacturer,
    product,
    memoryMiB,
    cores: fc.option(fc.integer({ min: -10, max: 200_000 }), { nil: undefined }),
    family: fc.option(anyText, { nil: undefined }),
    computeCapability: fc.option(anyText, { nil: undefined }),
    driverVersion: fc.option(anyText, { nil: undefined }),
    runtimeVersion: fc.option(anyText, { nil: undefined }),
  },
  { requiredKeys: ['manufacturer', 'product', 'memoryMiB'] },
);

/** Cards of one node: a few models, each repeated like real hardware. */
const nodeDevices = fc
  .array(fc.tuple(device, fc.integer({ min: 1, max: 8 })), { maxLength: 5 })
  .map((groups) => groups.flatMap(([d, n]) => Array.from({ length: n }, () => d)));

const cpu = fc.record(
  {
    vendor: fc.option(fc.oneof(fc.constantFrom('Intel', 'AMD', 'VendorUnknown', 'HiSilicon', ''), anyText), {
      nil: undefined,
    }),
    cpuName: fc.option(fc.oneof(fc.constantFrom('AMD EPYC 7763 64-Core Processor', '@cpu.model.name'), anyText), {
      nil: undefined,
    }),
    family: fc.option(fc.oneof(fc.constantFrom('25', '6'), anyText), { nil: undefined }),
    model: fc.option(fc.oneof(fc.constantFrom('1', '143'), anyText), { nil: undefined }),
  },
  { requiredKeys: [] },
);

const profileOptions: fc.Arbitrary<ProfileOptions> = fc.record({
  nodeManagement: fc.constantFrom('Automatic' as const, 'Manual' as const),
  generalKey: fc.constantFrom('Generic' as const, 'CPUModel' as const),
  mixedOnNode: fc.boolean(),
  manufacturers: fc.subarray([...MANUFACTURER_NAMES]).map((m) => new Set<ManufacturerName>(m)),
  deviceLabelSources: fc.constantFrom([...DEVICE_LABEL_SOURCES], ['Agent' as const]),
});

// ---- helpers -----------------------------------------------------------------------------------

function expectValidLabels(labels: Record<string, string | null>): void {
  for (const [key, value] of Object.entries(labels)) {
    expect(isLabelKey(key), key).toBe(true);
    if (value !== null) expect(isLabelValue(value), `${key}=${value}`).toBe(true);
  }
}

function modelKeys(labels: Record<string, string>): string[] {
  return extractAcceleratorKeys(labels, ALL);
}

function knownCards(devices: readonly LabelledCard[]): number {
  return devices.filter((d) => (MANUFACTURER_NAMES as readonly string[]).includes(d.manufacturer)).length;
}

// ---- properties --------------------------------------------------------------------------------

describe('properties of names', () => {
  it('normalizeName yields only [a-z0-9._-] with no leading, trailing or doubled separator, within maxLen', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.constantFrom('', 'nvidia', 'amd', 'intel', 'ascend'),
        fc.integer({ min: -1, max: 64 }),
        fc.boolean(),
        (text, prefix, maxLen, strip) => {
          const out = normalizeName(text, { prefix, maxLength: maxLen, stripCpuCruft: strip });
          expect(out).toMatch(/^([a-z0-9]+([._-][a-z0-9]+)*)?$/);
          if (maxLen > 0) expect(out.length).toBeLessThanOrEqual(maxLen);
          if (prefix !== '') expect(out.startsWith(prefix)).toBe(false);
        },
      ),
      RUNS,
    );
  });

  it('normalizeName is idempotent', () => {
    fc.assert(
      fc.property(
        anyText,
        fc.constantFrom('', 'nvidia', 'amd', 'intel'),
        fc.integer({ min: 0, max: 64 }),
        fc.boolean(),
        (text, prefix, maxLen, strip) => {
          const once = normalizeName(text, { prefix, maxLength: maxLen, stripCpuCruft: strip });
          expect(normalizeName(once, { prefix, maxLength: maxLen, stripCpuCruft: strip })).toBe(once);
        },
      ),
      RUNS,
    );
  });

  it('sanitizeLabelValue always yields a valid label value', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(isLabelValue(sanitizeLabelValue(text))).toBe(true);
      }),
      RUNS,
    );
  });

  it('a memory label (up to 16 EiB, a uint64 of bytes) is a valid label value that parses back to its own rounding', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 1, max: 2 ** 21 }), fc.integer({ min: 1, max: 2 ** 44 })), (mib) => {
        const label = formatMemoryMiB(mib);
        expect(isLabelValue(label)).toBe(true);
        const reading = readMemoryLabel(label);
        expect(reading.ok).toBe(true);
        const back = reading.ok ? reading.mib : Number.NaN;
        // not always the same text: 1024Gi reads back as 1048576 MiB, which renders as 1Ti
        expect(readMemoryLabel(formatMemoryMiB(back))).toEqual({ ok: true, mib: back });
        // rounding half-up at the largest unit is off by less than half a unit (≤ 1/2 of a unit ≤ 1/2 of the value)
        expect(Math.abs(back - mib)).toBeLessThanOrEqual(mib / 2);
      }),
      RUNS,
    );
  });

  it('every count and memory we write reads back in the one form we write (issue 14: never write other forms)', () => {
    fc.assert(
      fc.property(nodeDevices, fc.integer({ min: 1, max: 4096 }), (devices, cores) => {
        const written = constructDeviceLabels(devices);
        const profiled = constructProfileLabels(
          { labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...written }, cpuCapacity: cores },
          {
            nodeManagement: 'Automatic',
            generalKey: 'Generic',
            mixedOnNode: true,
            manufacturers: ALL,
            deviceLabelSources: DEVICE_LABEL_SOURCES,
          },
        );
        for (const [key, value] of Object.entries({ ...written, ...profiled })) {
          if (value === null) continue;
          if (key.endsWith('.count') || key.includes('.sliced.'))
            expect(parseCount(value), `${key}=${value}`).toBeDefined();
          if (key.endsWith('.memory')) {
            const reading = readMemoryLabel(value);
            expect(reading.ok, `${key}=${value}`).toBe(true);
            expect(reading.ok && formatMemoryMiB(reading.mib), `${key}=${value}`).toBe(value);
          }
        }
      }),
      RUNS,
    );
  });

  it('localQueueName is always a 31-character DNS label', () => {
    fc.assert(
      fc.property(fc.oneof(anyText, fc.string({ maxLength: 253, size: 'max' })), (cq) => {
        const lq = localQueueName(cq);
        expect(lq).toHaveLength(31);
        expect(isDnsLabel(lq)).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('properties of keys and object names', () => {
  it('every aKey fits its budget, its longest suffixed label key and every object name', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MANUFACTURER_NAMES),
        product,
        fc.option(fc.constantFrom('80g', '40g', '1024g', '0'), { nil: undefined }),
        fc.integer({ min: 1, max: 512 }),
        (mfr, text, memory, count) => {
          const aKey = constructAcceleratorKey(mfr, text, memory);
          expect(aKey.length).toBeLessThanOrEqual(ACCELERATOR_KEY_MAX);
          expect(isLabelValue(aKey)).toBe(true);
          expect(isLabelKey(`${A}${aKey}.sliced.memory-percentage`)).toBe(true);
          expect(isDnsSubdomain(deviceFlavorName(aKey, 'linux', 'amd64', count))).toBe(true);
          expect(isDnsSubdomain(clusterQueueName(aKey, 'linux', 'amd64'))).toBe(true);
        },
      ),
      RUNS,
    );
  });

  it('every gKey fits its budget, ".capacity" behind it and every object name', () => {
    fc.assert(
      fc.property(cpu, fc.integer({ min: 1, max: 4096 }), (identity, cores) => {
        const gKey = constructGeneralKey(identity);
        if (gKey === undefined) return;
        expect(gKey.length).toBeLessThanOrEqual(GENERAL_KEY_MAX);
        expect(isLabelValue(gKey)).toBe(true);
        expect(isLabelKey(`${G}${gKey}.capacity`)).toBe(true);
        expect(isLabelKey(`${G}${gKey}.count`)).toBe(true);
        expect(isDnsSubdomain(cpuFlavorName(gKey, 'linux', 'amd64', cores))).toBe(true);
        expect(isDnsSubdomain(clusterQueueName(gKey, 'linux', 'amd64'))).toBe(true);
      }),
      RUNS,
    );
  });
});

describe('properties of constructDeviceLabels', () => {
  it('writes only valid label keys and values, and every model key fits ".sliced.memory-percentage"', () => {
    fc.assert(
      fc.property(nodeDevices, (devices) => {
        const labels = constructDeviceLabels(devices);
        expectValidLabels(labels);
        for (const aKey of modelKeys(labels)) {
          expect(aKey.length).toBeLessThanOrEqual(ACCELERATOR_KEY_MAX);
          expect(isLabelKey(`${A}${aKey}.sliced.memory-percentage`)).toBe(true);
          expect(isDnsSubdomain(deviceFlavorName(aKey, 'linux', 'amd64', 8))).toBe(true);
          expect(isDnsSubdomain(clusterQueueName(aKey, 'linux', 'amd64'))).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('does not depend on the order of the cards', () => {
    const withPermutation = nodeDevices.chain((devices) =>
      fc.tuple(
        fc.constant(devices),
        fc.shuffledSubarray(devices, { minLength: devices.length, maxLength: devices.length }),
      ),
    );
    fc.assert(
      fc.property(withPermutation, ([devices, shuffled]) => {
        expect(constructDeviceLabels(shuffled)).toEqual(constructDeviceLabels(devices));
      }),
      RUNS,
    );
  });

  // Few products and memories, varying details: cards of one model often differ in what they report.
  const crowded: fc.Arbitrary<LabelledCard[]> = fc.array(
    fc.record(
      {
        manufacturer: fc.constantFrom('nvidia', 'thead'),
        product: fc.constantFrom(
          'NVIDIA A100',
          'nvidia a100',
          'NVIDIA  A100',
          'NVIDIA A100 80G',
          'NVIDIA',
          '',
          '???',
          `NVIDIA ${'X'.repeat(40)}`,
          `NVIDIA ${'X'.repeat(41)}`,
        ),
        memoryMiB: fc.constantFrom(40960, 81559, 81920),
        cores: fc.option(fc.constantFrom(0, 6912), { nil: undefined }),
        family: fc.option(fc.constantFrom('Ampere', 'Hopper'), { nil: undefined }),
        computeCapability: fc.option(fc.constantFrom('8.0', '9.0'), { nil: undefined }),
        driverVersion: fc.option(fc.constantFrom('535.1', '570.2'), { nil: undefined }),
        runtimeVersion: fc.option(fc.constantFrom('12.2', '12.8'), { nil: undefined }),
      },
      { requiredKeys: ['manufacturer', 'product', 'memoryMiB'] },
    ),
    { maxLength: 12 },
  );

  it('does not depend on the order of the cards, even when cards of one model report different details', () => {
    const withPermutation = crowded.chain((devices) =>
      fc.tuple(
        fc.constant(devices),
        fc.shuffledSubarray(devices, { minLength: devices.length, maxLength: devices.length }),
      ),
    );
    fc.assert(
      fc.property(withPermutation, ([devices, shuffled]) => {
        expect(constructDeviceLabels(shuffled)).toEqual(constructDeviceLabels(devices));
      }),
      RUNS,
    );
  });

  it('counts every card exactly once when products normalise to the same key', () => {
    fc.assert(
      fc.property(crowded, (devices) => {
        const labels = constructDeviceLabels(devices);
        expectValidLabels(labels);
        const counted = modelKeys(labels).reduce((sum, k) => sum + Number(labels[`${A}${k}.count`]), 0);
        expect(counted).toBe(devices.length);
      }),
      RUNS,
    );
  });

  it('counts every card of a known manufacturer exactly once', () => {
    fc.assert(
      fc.property(nodeDevices, (devices) => {
        const labels = constructDeviceLabels(devices);
        const counted = modelKeys(labels).reduce((sum, k) => sum + Number(labels[`${A}${k}.count`]), 0);
        expect(counted).toBe(knownCards(devices));
        expect(labels['feature.gpustack.ai/acceleratable']).toBe(counted > 0 ? 'true' : 'false');
      }),
      RUNS,
    );
  });
});

describe('properties of constructProfileLabels', () => {
  const node = fc.record({
    devices: nodeDevices,
    cpu,
    cpuCapacity: fc.option(
      fc.oneof(
        fc.constantFrom('224', '3500m', '0', 'lots', '1e3', '64'),
        fc.integer({ min: 0, max: 100_000 }),
        anyText,
      ),
      { nil: undefined },
    ),
    managed: fc.option(fc.constantFrom('true', 'false', ''), { nil: undefined }),
  });

  it('writes only valid label keys and values for arbitrary devices and CPU identities', () => {
    fc.assert(
      fc.property(node, profileOptions, ({ devices, cpu: identity, cpuCapacity, managed }, opts) => {
        const labels: Record<string, string> = {
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          ...constructDeviceLabels(devices),
        };
        if (managed !== undefined) labels['gpustack.ai/managed'] = managed;
        if (identity.vendor !== undefined) labels['feature.node.kubernetes.io/cpu-model.vendor_id'] = identity.vendor;
        if (identity.family !== undefined) labels['feature.node.kubernetes.io/cpu-model.family'] = identity.family;
        if (identity.model !== undefined) labels['feature.node.kubernetes.io/cpu-model.id'] = identity.model;
        const annotations =
          identity.cpuName !== undefined ? { 'feature.gpustack.ai/cpu-name': identity.cpuName } : undefined;
        const out = constructProfileLabels(
          { labels, ...(annotations ? { annotations } : {}), ...(cpuCapacity !== undefined ? { cpuCapacity } : {}) },
          opts,
        );
        expectValidLabels(out);
        for (const key of Object.keys(out)) {
          if (!key.startsWith(G) || !key.endsWith('.count')) continue;
          const gKey = key.slice(G.length, -'.count'.length);
          expect(isLabelKey(`${G}${gKey}.capacity`)).toBe(true);
          expect(isDnsSubdomain(cpuFlavorName(gKey, 'linux', 'amd64', 64))).toBe(true);
          expect(isDnsSubdomain(clusterQueueName(gKey, 'linux', 'amd64'))).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('writes only valid label keys and values for any valid node labels it is handed', () => {
    // An older agent budgeted aKeys to 63 characters: a node may carry a model key far longer
    // than ours, with a valid .count and .memory beside it.
    const longModel = fc
      .tuple(
        fc.constantFrom(...MANUFACTURER_NAMES),
        fc
          .string({ unit: fc.constantFrom(...'abcxyz0123-'), minLength: 1, maxLength: 56, size: 'max' })
          .filter((id) => /^[a-z0-9](.*[a-z0-9])?$/.test(id)),
      )
      .map(([mfr, id]) => `${mfr}-${id}`)
      .filter((aKey) => aKey.length + '.memory'.length <= 63);
    fc.assert(
      fc.property(fc.array(longModel, { maxLength: 3 }), profileOptions, (aKeys, opts) => {
        const labels: Record<string, string> = {
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'gpustack.ai/managed': 'true',
        };
        for (const aKey of aKeys)
          Object.assign(labels, {
            [`${A}${aKey}`]: 'true',
            [`${A}${aKey}.count`]: '8',
            [`${A}${aKey}.memory`]: '80Gi',
          });
        for (const key of Object.keys(labels)) expect(isLabelKey(key)).toBe(true);
        expectValidLabels(constructProfileLabels({ labels, cpuCapacity: '8' }, opts));
      }),
      RUNS,
    );
  });

  it('never mentions a key it does not own, except managed', () => {
    fc.assert(
      fc.property(nodeDevices, profileOptions, (devices, opts) => {
        const labels = {
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          team: 'a',
          ...constructDeviceLabels(devices),
        };
        const out = constructProfileLabels({ labels, cpuCapacity: '8' }, opts);
        for (const key of Object.keys(labels)) {
          if (key in out) expect(out[key], key).toBeNull();
        }
      }),
      RUNS,
    );
  });
});
