import { describe, expect, it } from 'vitest';
import type { Device } from '../../native/index.js';
import { isAgentLabel, labelsFromDetection, sameLabels, screenDetection, type Labels } from '../../src/agent/index.js';
import { isLabelKey, isLabelValue } from '../../src/k8s/index.js';
import { A, ACCELERATABLE, H100_LABELS, detection, h100, mi300x, times } from './support.js';

const MI300X_LABELS: Labels = {
  [`${A}amd`]: 'true',
  [`${A}amd.driver-version`]: '6.10.5',
  [`${A}amd.runtime-version`]: '6.3',
  [`${A}amd-instinct-mi300x`]: 'true',
  [`${A}amd-instinct-mi300x.product`]: 'AMD-Instinct-MI300X',
  [`${A}amd-instinct-mi300x.memory`]: '192Gi',
  [`${A}amd-instinct-mi300x.cores`]: '304',
  [`${A}amd-instinct-mi300x.count`]: '8',
  [`${A}amd-instinct-mi300x.family`]: 'CDNA3',
  [`${A}amd-instinct-mi300x.comcap`]: 'gfx942',
};

function expectValidLabels(labels: Labels): void {
  for (const [key, value] of Object.entries(labels)) {
    expect(isLabelKey(key), `key ${JSON.stringify(key)}`).toBe(true);
    expect(isLabelValue(value), `${key}=${JSON.stringify(value)}`).toBe(true);
  }
}

describe('labelsFromDetection', () => {
  it('8 × H100 gives the labels the modelled Go project writes', () => {
    const labels = labelsFromDetection(detection(times(8, h100)), undefined);
    expect(labels).toEqual(H100_LABELS);
  });

  it('a CPU node (every library missing) publishes acceleratable=false only', () => {
    const result = detection([]);
    expect(result.errors).toHaveLength(9);
    expect(labelsFromDetection(result, undefined)).toEqual({ [ACCELERATABLE]: 'false' });
    // LibraryNotFound is not a failure: nothing is carried over from a previous publish either.
    expect(labelsFromDetection(result, { ...H100_LABELS })).toEqual({ [ACCELERATABLE]: 'false' });
  });

  it('8 × H100 plus 8 × MI300X gives both groups', () => {
    const labels = labelsFromDetection(detection([...times(8, h100), ...times(8, mi300x)]), undefined);
    expect(labels).toEqual({ ...H100_LABELS, ...MI300X_LABELS });
  });

  it.each(['InvalidLibrary', 'DriverMismatch', 'InitFailed', 'SymbolNotFound', 'CallFailed'] as const)(
    'a vendor failing with %s and no devices keeps its previous labels only',
    (code) => {
      const previous = { ...H100_LABELS, ...MI300X_LABELS };
      // nvidia fails outright; amd's library is gone now: its stale labels are dropped.
      const labels = labelsFromDetection(detection([], { nvidia: code }), previous);
      expect(labels).toEqual(H100_LABELS);
    },
  );

  it('carry-over keeps the failed vendor next to the vendors found now', () => {
    const previous = { ...H100_LABELS };
    const labels = labelsFromDetection(detection(times(8, mi300x), { nvidia: 'DriverMismatch' }), previous);
    expect(labels).toEqual({ ...H100_LABELS, ...MI300X_LABELS });
  });

  it('a failed vendor with nothing published before gives acceleratable=false', () => {
    expect(labelsFromDetection(detection([], { nvidia: 'InitFailed' }), undefined)).toEqual({
      [ACCELERATABLE]: 'false',
    });
    expect(labelsFromDetection(detection([], { nvidia: 'InitFailed' }), { [ACCELERATABLE]: 'false' })).toEqual({
      [ACCELERATABLE]: 'false',
    });
  });

  it('a vendor that reports an error but also devices is not carried over (the new devices win)', () => {
    const previous = { ...H100_LABELS };
    const labels = labelsFromDetection(detection(times(4, h100), { nvidia: 'CallFailed' }), previous);
    expect(labels[`${A}nvidia-h100-80gb-hbm3.count`]).toBe('4');
  });

  it('a model that disappeared while its vendor works is dropped, not carried over', () => {
    const previous = { ...H100_LABELS };
    const h200 = (i: number) => h100(i, { product: 'NVIDIA H200', memoryMiB: 143771 });
    const labels = labelsFromDetection(detection(times(8, h200)), previous);
    expect(Object.keys(labels).filter((k) => k.includes('h100'))).toEqual([]);
    expect(labels[`${A}nvidia-h200.memory`]).toBe('140Gi');
  });
});

describe('the NVLink clique label (topology.gpustack.ai/nvlink-clique)', () => {
  const CLIQUE = 'topology.gpustack.ai/nvlink-clique';
  const CLUSTER = '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11';
  const OTHER = '00000000-0000-4000-8000-00000000beef';
  const inClique =
    (cliqueId: number, clusterUuid = CLUSTER) =>
    (i: number) =>
      h100(i, { fabric: { clusterUuid, cliqueId } });

  it('is `<cluster UUID>.<clique id>` when every NVIDIA card reports the same fabric', () => {
    const labels = labelsFromDetection(detection(times(4, inClique(7))), undefined);
    expect(labels[CLIQUE]).toBe(`${CLUSTER}.7`);
    // The device labels are those of the same cards without a fabric: the clique adds one key.
    expect(labels).toEqual({ ...H100_LABELS, [`${A}nvidia-h100-80gb-hbm3.count`]: '4', [CLIQUE]: `${CLUSTER}.7` });
    expectValidLabels(labels);
  });

  it('stays a label value of at most 63 characters at the largest clique id', () => {
    const value = labelsFromDetection(detection(times(2, inClique(0xffff_ffff))), undefined)[CLIQUE];
    expect(value).toBe(`${CLUSTER}.4294967295`);
    expect(value?.length).toBeLessThanOrEqual(63);
    expect(isLabelValue(value ?? '')).toBe(true);
  });

  it.each<[string, Device[]]>([
    ['two cliques', [...times(2, inClique(7)), h100(2, { fabric: { clusterUuid: CLUSTER, cliqueId: 8 } })]],
    ['two clusters', [...times(2, inClique(7)), h100(2, { fabric: { clusterUuid: OTHER, cliqueId: 7 } })]],
    ['one card without fabric info', [...times(3, inClique(7)), h100(3)]],
    ['no card with fabric info', times(8, h100)],
  ])('is absent, and removed when published before, with %s', (_what, cards) => {
    const previous = { ...H100_LABELS, [CLIQUE]: `${CLUSTER}.7` };
    expect(labelsFromDetection(detection(cards), previous)).not.toHaveProperty([CLIQUE]);
    expect(labelsFromDetection(detection(cards), undefined)).not.toHaveProperty([CLIQUE]);
  });

  it('is absent on a node without NVIDIA cards, whatever was published before', () => {
    const labels = labelsFromDetection(detection(times(8, mi300x)), { [CLIQUE]: `${CLUSTER}.7` });
    expect(labels).not.toHaveProperty([CLIQUE]);
  });

  it.each<[string, unknown]>([
    ['an upper-case UUID', { clusterUuid: CLUSTER.toUpperCase(), cliqueId: 7 }],
    ['a UUID with a NUL', { clusterUuid: `${CLUSTER}\u0000x`, cliqueId: 7 }],
    ['a negative clique', { clusterUuid: CLUSTER, cliqueId: -1 }],
    ['a fractional clique', { clusterUuid: CLUSTER, cliqueId: 1.5 }],
    ['a clique beyond 32 bits', { clusterUuid: CLUSTER, cliqueId: 2 ** 32 }],
    ['no UUID', { cliqueId: 7 }],
  ])('counts %s as no fabric info', (_what, fabric) => {
    const cards = [...times(3, inClique(7)), h100(3, { fabric: fabric as Device['fabric'] })];
    expect(labelsFromDetection(detection(cards), undefined)).not.toHaveProperty([CLIQUE]);
  });

  it.each(['InvalidLibrary', 'DriverMismatch', 'InitFailed', 'SymbolNotFound', 'CallFailed'] as const)(
    'keeps its last value while NVIDIA detection fails with %s',
    (code) => {
      const previous = { ...H100_LABELS, [CLIQUE]: `${CLUSTER}.7` };
      expect(labelsFromDetection(detection([], { nvidia: code }), previous)[CLIQUE]).toBe(`${CLUSTER}.7`);
      // Nothing published before: nothing to keep.
      expect(labelsFromDetection(detection([], { nvidia: code }), undefined)).not.toHaveProperty([CLIQUE]);
    },
  );

  it('keeps its last value, present or absent, while one card cannot be read (no flapping)', () => {
    // Three cards read, one failed: the failed one might sit in another clique.
    const partial = detection(times(3, inClique(9)), { nvidia: 'CallFailed' });
    expect(labelsFromDetection(partial, { [CLIQUE]: `${CLUSTER}.7` })[CLIQUE]).toBe(`${CLUSTER}.7`);
    expect(labelsFromDetection(partial, { ...H100_LABELS })).not.toHaveProperty([CLIQUE]);
    // Once every card reads again, the detection decides.
    expect(labelsFromDetection(detection(times(4, inClique(9))), { [CLIQUE]: `${CLUSTER}.7` })[CLIQUE]).toBe(
      `${CLUSTER}.9`,
    );
  });
});

describe('isAgentLabel', () => {
  it.each<[string, boolean]>([
    [ACCELERATABLE, true],
    [`${A}nvidia`, true],
    [`${A}nvidia.driver-version`, true],
    [`${A}nvidia-h100-80gb-hbm3`, true],
    [`${A}nvidia-h100-80gb-hbm3.count`, true],
    [`${A}nvidia-h100-80gb-hbm3.memory`, true],
    [`${A}nvidia-h100-80gb-hbm3.sliced.units`, false],
    [`${A}nvidia-h100-80gb-hbm3.sliced.cores-percentage`, false],
    [`${A}nvidia-h100-80gb-hbm3.sliced.memory-percentage`, false],
    [`${A}nvidia-h100-80gb-hbm3.sliced.memory-mib`, false],
    ['feature.gpustack.ai/cpu-only', false],
    ['gpustack.ai/managed', false],
    ['general.feature.gpustack.ai/generic', false],
    ['kubernetes.io/hostname', false],
    ['feature.node.kubernetes.io/pci-10de.present', false],
    ['sliced-max-free-units.fit.gpustack.ai/nvidia-h100-80gb-hbm3', false],
    ['topology.gpustack.ai/nvlink-clique', true],
    // node-profile's: the agent owns one key of the topology domain, not the domain.
    ['topology.gpustack.ai/profile', false],
    ['nvidia.com/gpu.clique', false],
  ])('%s → %s', (key, owned) => {
    expect(isAgentLabel(key)).toBe(owned);
  });

  it('owns every label labelsFromDetection builds', () => {
    const labels = labelsFromDetection(detection([...times(8, h100), ...times(2, mi300x)]), undefined);
    for (const key of Object.keys(labels)) expect(isAgentLabel(key), key).toBe(true);
  });
});

describe('sameLabels', () => {
  it('ignores order, not values or keys', () => {
    expect(sameLabels({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
    expect(sameLabels({ a: '1' }, { a: '2' })).toBe(false);
    expect(sameLabels({ a: '1' }, { a: '1', b: '2' })).toBe(false);
    expect(sameLabels({ a: '1', c: '3' }, { a: '1', b: '2' })).toBe(false);
    expect(sameLabels(undefined, undefined)).toBe(true);
    expect(sameLabels({}, undefined)).toBe(false);
  });
});

describe('hostile detector answers', () => {
  const hostile: { name: string; device: Partial<Device> }[] = [
    { name: 'negative cores', device: { cores: -5 } },
    { name: 'NaN cores', device: { cores: Number.NaN } },
    { name: 'infinite cores', device: { cores: Number.POSITIVE_INFINITY } },
    { name: 'absurd cores', device: { cores: 1e30 } },
    { name: 'fractional cores', device: { cores: 12.5 } },
    { name: 'huge memory (1e12 MiB)', device: { memoryMiB: 1e12 } },
    { name: 'absurd memory (1e40 MiB)', device: { memoryMiB: 1e40 } },
    { name: 'NaN memory', device: { memoryMiB: Number.NaN } },
    { name: 'infinite memory', device: { memoryMiB: Number.POSITIVE_INFINITY } },
    { name: 'negative memory', device: { memoryMiB: -81559 } },
    {
      name: 'control characters in the product',
      device: { product: 'NVIDIA\u0001 H100\u0007\u001b[31m 80GB\r\n HBM3\u0000\u0000\u00ff\ufffd' },
    },
    {
      name: 'an unterminated product buffer',
      device: { product: `NVIDIA H100\u0000${'\u00ff\u00fe#garbage'.repeat(40)}` },
    },
    { name: 'a 500-character product', device: { product: 'X'.repeat(500) } },
    { name: 'a 500-character product with separators', device: { product: 'A-._ '.repeat(100) } },
    { name: 'a product of control characters only', device: { product: '\u0001\u0002\u0003' } },
    { name: 'an empty product', device: { product: '' } },
    {
      name: 'a hostile family, comcap, driver and runtime',
      device: {
        family: '\u0000'.repeat(300),
        computeCapability: '9.0\u0000junk',
        driverVersion: 'v'.repeat(500),
        runtimeVersion: '-.-',
      },
    },
  ];

  it.each(hostile)('$name: no throw, every label valid', ({ device }) => {
    const devices = [h100(0, device), h100(1), h100(2, device)];
    let labels: Labels = {};
    expect(() => {
      labels = labelsFromDetection(detection(devices), undefined);
    }).not.toThrow();
    expectValidLabels(labels);
    expect(labels[ACCELERATABLE]).toBe('true');
    // The well-behaved card is still published.
    const counts = Object.entries(labels)
      .filter(([k]) => k.endsWith('.count'))
      .map(([, v]) => Number(v));
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
  });

  it.each(hostile)(
    '$name: numbers in the labels are plain non-negative integers or memory quantities',
    ({ device }) => {
      const labels = labelsFromDetection(detection([h100(0, device)]), undefined);
      for (const [key, value] of Object.entries(labels)) {
        if (key.endsWith('.cores') || key.endsWith('.count')) expect(value, key).toMatch(/^\d{1,10}$/);
        if (key.endsWith('.memory')) expect(value, key).toMatch(/^(0|\d{1,12}(Mi|Gi|Ti|Pi|Ei))$/);
      }
    },
  );

  it('non-finite or absurd memory drops the card with an error entry', () => {
    for (const memoryMiB of [Number.NaN, Number.POSITIVE_INFINITY, -1, 1e12, 1e40]) {
      const result = detection([h100(0, { memoryMiB })]);
      const labels = labelsFromDetection(result, undefined);
      expect(labels, String(memoryMiB)).toEqual({ [ACCELERATABLE]: 'false' });
    }
  });

  it('screenDetection reports every dropped card and every implausible core count as an error entry', () => {
    const result = screenDetection(
      detection([
        h100(0, { memoryMiB: 1e12 }),
        h100(1, { cores: Number.NaN }),
        h100(2),
        h100(3, { memoryMiB: Number.NaN }),
      ]),
    );
    expect(result.devices.map((d) => [d.index, d.cores])).toEqual([
      [1, 0],
      [2, 16896],
    ]);
    const added = result.errors.filter((e) => e.manufacturer === 'nvidia');
    expect(added.map((e) => e.code)).toEqual(['CallFailed', 'CallFailed', 'CallFailed']);
    expect(added.map((e) => e.message)).toEqual([
      'device 0: implausible memory 1000000000000 MiB; card skipped',
      'device 1: implausible cores NaN; reported as 0',
      'device 3: implausible memory NaN MiB; card skipped',
    ]);
    // Idempotent: screening twice adds nothing.
    expect(screenDetection(result)).toEqual(result);
  });

  it('16 TiB is still a card; memory 0 is kept as unknown', () => {
    expect(screenDetection(detection([h100(0, { memoryMiB: 16 * 1024 * 1024 })])).devices).toHaveLength(1);
    const labels = labelsFromDetection(detection([h100(0, { memoryMiB: 0 })]), undefined);
    expect(labels[`${A}nvidia-h100-80gb-hbm3.memory`]).toBe('0');
  });

  it('a vendor whose every card is garbage keeps its previous labels (like a failed vendor)', () => {
    const labels = labelsFromDetection(detection(times(8, (i) => h100(i, { memoryMiB: Number.POSITIVE_INFINITY }))), {
      ...H100_LABELS,
    });
    expect(labels).toEqual(H100_LABELS);
  });

  it('an unterminated product name is cut at the first NUL', () => {
    const labels = labelsFromDetection(
      detection([h100(0, { product: 'NVIDIA H100 80GB HBM3\u0000\u00ffgarbage' })]),
      undefined,
    );
    expect(labels[`${A}nvidia-h100-80gb-hbm3.product`]).toBe('NVIDIA-H100-80GB-HBM3');
  });

  it('a random mix of hostile cards never throws and yields valid labels', () => {
    // Deterministic pseudo-random mixing of the hostile fields above.
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 200; round++) {
      const devices = Array.from({ length: 1 + (next() % 6) }, (_, i) =>
        h100(i, hostile[next() % hostile.length]?.device),
      );
      const labels = labelsFromDetection(detection(devices), undefined);
      expectValidLabels(labels);
    }
  });
});
