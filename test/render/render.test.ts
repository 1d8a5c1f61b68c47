import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  ClusterQueueSchema,
  ResourceFlavorSchema,
  SchedulingChainSchema,
  type ClusterQueue,
  type Node,
  type SchedulingChain,
} from '../../src/k8s/index.js';
import { renderChain, type RenderResult } from '../../src/render/index.js';
import { AGENT_CLIQUE_LABEL, TOPOLOGY_PROFILE_LABEL, topologyProfileOf } from '../../src/nodefeature/index.js';
import { makeSchedulingChain } from '../builders/gpustack.js';
import { renderSnapshotPath, repoPath } from '../support/fixtures.js';
import { NOW } from '../support/hooks.js';
import { listClusterFiles, loadClusterNodes } from '../support/nodes.js';
import { parseChild } from '../support/responses.js';
import { toYaml } from '../support/snapshot.js';

const NAMESPACES = ['default', 'gpustack-system', 'kube-system', 'team-a'];
const GENERIC_AMD64 = 'gpustack-generic-linux-amd64';
const HOST_PROFILE = 'fnv64-87bf574bea2a4f23';
const BLOCK_PROFILE = topologyProfileOf([
  'cloud.google.com/gce-topology-block',
  'cloud.google.com/gce-topology-subblock',
  'nvidia.com/gpu.clique',
  'cloud.google.com/gce-topology-host',
  'kubernetes.io/hostname',
]);

type Rendered = Extract<RenderResult, { ok: true }>;

function render(file: string, chain?: Parameters<typeof renderChain>[0]['chain']): Rendered {
  const result = renderChain(
    { nodes: loadClusterNodes(file), namespaces: NAMESPACES, ...(chain ? { chain } : {}) },
    { now: NOW },
  );
  if (!result.ok) throw new Error(`${file}: ${result.error.code}: ${result.error.message}`);
  for (const object of result.objects) parseChild(object);
  return result;
}

function names(result: Rendered, kind: string): string[] {
  return result.objects.filter((o) => o.kind === kind).map((o) => o.metadata.name);
}

/** `{ queue: [[flavor, quota], …] }` for every ClusterQueue. */
function queueQuotas(result: Rendered): Record<string, [string, string][]> {
  const queues = result.objects
    .filter((o) => o.kind === 'ClusterQueue')
    .map((o) => ClusterQueueSchema.parse(o) as ClusterQueue);
  return Object.fromEntries(
    queues.map((q) => [
      q.metadata.name,
      (q.spec.resourceGroups?.[0]?.flavors ?? []).map((f): [string, string] => [
        f.name,
        f.resources[0]?.nominalQuota ?? '',
      ]),
    ]),
  );
}

interface Expectation {
  readonly flavors: readonly string[];
  readonly queues: readonly string[];
  /** A SchedulingChain under examples/chains/ the README renders this file with; absent = defaults. */
  readonly chain?: string;
}

/** A SchedulingChain from examples/chains/, the file the README passes to `render --chain`. */
function exampleChain(file: string): SchedulingChain {
  return SchedulingChainSchema.parse(parse(readFileSync(repoPath(`examples/chains/${file}`), 'utf8')));
}

/** What examples/clusters/README.md says `render` prints for each file (default settings). */
const EXPECTED: Readonly<Record<string, Expectation>> = {
  'reference-4-node.yaml': {
    flavors: [
      `${GENERIC_AMD64}-16c`,
      `${GENERIC_AMD64}-48c`,
      `${GENERIC_AMD64}-4c`,
      'gpustack-nvidia-a10g-linux-amd64-1d',
      'gpustack-nvidia-tesla-t4-linux-amd64-1d',
      'gpustack-nvidia-tesla-t4-linux-amd64-4d',
    ],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-a10g-linux-amd64', 'gpustack-nvidia-tesla-t4-linux-amd64'],
  },
  'h100-8x.yaml': {
    flavors: [`${GENERIC_AMD64}-224c`, 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d'],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64'],
  },
  'ascend-910b2-arm64.yaml': {
    flavors: ['gpustack-ascend-910b2-linux-arm64-8d', 'gpustack-generic-linux-arm64-192c'],
    queues: ['gpustack-ascend-910b2-linux-arm64', 'gpustack-generic-linux-arm64'],
  },
  'kunpeng-vendorunknown-arm64.yaml': {
    chain: 'cpu-model.yaml',
    flavors: ['gpustack-ascend-910b3-linux-arm64-8d', 'gpustack-generic-kunpeng-920-linux-arm64-192c'],
    queues: ['gpustack-ascend-910b3-linux-arm64', 'gpustack-generic-kunpeng-920-linux-arm64'],
  },
  'mixed.json': {
    flavors: [
      'gpustack-amd-instinct-mi300x-oam-linux-amd64-8d',
      'gpustack-ascend-910b2-linux-arm64-8d',
      `${GENERIC_AMD64}-112c`,
      `${GENERIC_AMD64}-128c`,
      `${GENERIC_AMD64}-224c`,
      `${GENERIC_AMD64}-384c`,
      'gpustack-generic-linux-arm64-192c',
      'gpustack-hygon-k100-ai-linux-amd64-8d',
      'gpustack-metax-mxc500-linux-amd64-8d',
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
    ],
    queues: [
      'gpustack-amd-instinct-mi300x-oam-linux-amd64',
      'gpustack-ascend-910b2-linux-arm64',
      GENERIC_AMD64,
      'gpustack-generic-linux-arm64',
      'gpustack-hygon-k100-ai-linux-amd64',
      'gpustack-metax-mxc500-linux-amd64',
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
    ],
  },
  'cpu-only.yaml': { flavors: [`${GENERIC_AMD64}-16c`, `${GENERIC_AMD64}-64c`], queues: [GENERIC_AMD64] },
  'plain-array.yaml': {
    flavors: [`${GENERIC_AMD64}-192c`, `${GENERIC_AMD64}-32c`, 'gpustack-nvidia-h200-linux-amd64-8d'],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-h200-linux-amd64'],
  },
  'gpu-feature-discovery.yaml': {
    flavors: [
      `${GENERIC_AMD64}-128c`,
      `${GENERIC_AMD64}-64c`,
      'gpustack-nvidia-a100-sxm4-80gb-linux-amd64-4d',
      'gpustack-nvidia-l40s-linux-amd64-2d',
    ],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-a100-sxm4-80gb-linux-amd64', 'gpustack-nvidia-l40s-linux-amd64'],
  },
  'amd-gpu-operator.yaml': {
    flavors: ['gpustack-amd-instinct-mi300x-oam-linux-amd64-8d', `${GENERIC_AMD64}-384c`],
    queues: ['gpustack-amd-instinct-mi300x-oam-linux-amd64', GENERIC_AMD64],
  },
  'ascend-device-plugin-arm64.yaml': {
    flavors: ['gpustack-ascend-910b3-linux-arm64-8d', 'gpustack-generic-linux-arm64-192c'],
    queues: ['gpustack-ascend-910b3-linux-arm64', 'gpustack-generic-linux-arm64'],
  },
  'foreign-label-forms.yaml': {
    flavors: [
      `${GENERIC_AMD64}-10000000c`,
      `${GENERIC_AMD64}-32c`,
      `${GENERIC_AMD64}-48c`,
      `${GENERIC_AMD64}-4c`,
      `${GENERIC_AMD64}-64c`,
      `${GENERIC_AMD64}-8c`,
      'gpustack-nvidia-a10g-linux-amd64-1d',
      'gpustack-nvidia-l4-linux-amd64-2d',
      'gpustack-nvidia-l40s-linux-amd64-4d',
      'gpustack-nvidia-tesla-t4-linux-amd64-1d',
    ],
    queues: [
      GENERIC_AMD64,
      'gpustack-nvidia-a10g-linux-amd64',
      'gpustack-nvidia-l4-linux-amd64',
      'gpustack-nvidia-l40s-linux-amd64',
      'gpustack-nvidia-tesla-t4-linux-amd64',
    ],
  },
  'topology-3-block.yaml': {
    chain: 'topology.yaml',
    // Six H100 Nodes in three blocks share one profile (the level keys, not their values); the CPU
    // node without level labels has the hostname-only one.
    flavors: [
      `${GENERIC_AMD64}-128c-${HOST_PROFILE}`,
      `${GENERIC_AMD64}-224c-${BLOCK_PROFILE}`,
      `gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d-${BLOCK_PROFILE}`,
    ],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64'],
  },
  'garbage-labels.yaml': {
    flavors: [
      `${GENERIC_AMD64}-16c`,
      `${GENERIC_AMD64}-4c`,
      `${GENERIC_AMD64}-8c`,
      'gpustack-nvidia-a10g-linux-amd64-1d',
    ],
    queues: [GENERIC_AMD64, 'gpustack-nvidia-a10g-linux-amd64'],
  },
};

const MANUFACTURERS = ['amd', 'ascend', 'cambricon', 'hygon', 'iluvatar', 'metax', 'mthreads', 'nvidia', 'thead'];

/**
 * The DeviceClasses docs/architecture.md#device-classes predicts from a file's expected queues: whole and shared classes of
 * every manufacturer (all nine are enabled by default) and of every device model that has a queue.
 */
function predictedClasses(queues: readonly string[]): string[] {
  const models = queues
    .map((q) => /^gpustack-(.+)-linux-(?:amd64|arm64)$/.exec(q)?.[1] ?? '')
    .filter((key) => MANUFACTURERS.some((m) => key.startsWith(`${m}-`)));
  return [...MANUFACTURERS, ...new Set(models)].flatMap((key) => [`gpustack-${key}`, `gpustack-${key}-shared`]).sort();
}

/** Each class selects our driver and the card mode its name says, and a model class its productKey. */
function expectClassSelectors(result: Rendered): void {
  for (const object of result.objects.filter((o) => o.kind === 'DeviceClass')) {
    const { name } = object.metadata;
    const expression = (object['spec'] as { selectors: { cel: { expression: string } }[] }).selectors[0]?.cel
      .expression;
    const key = name.replace(/^gpustack-/, '').replace(/-shared$/, '');
    const mfr = MANUFACTURERS.find((m) => key === m || key.startsWith(`${m}-`)) as string;
    expect(expression, name).toContain(`device.driver == "${mfr}.gpustack.ai"`);
    expect(expression, name).toContain(
      `device.attributes["${mfr}.gpustack.ai"].mode == "${name.endsWith('-shared') ? 'shared' : 'whole'}"`,
    );
    // Object names spell an aKey's `_` as `-` (hygon-k100_ai → gpustack-hygon-k100-ai); the selector keeps the aKey.
    const prefix = `device.attributes["${mfr}.gpustack.ai"].productKey == "`;
    const at = expression?.indexOf(prefix) ?? -1;
    const productKey = at < 0 ? undefined : expression?.slice(at + prefix.length).split('"')[0];
    expect(productKey?.replaceAll('_', '-'), name).toBe(key === mfr ? undefined : key);
  }
}

describe('renderChain over examples/clusters', () => {
  it('has an expectation for every example file', () => {
    expect(listClusterFiles()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(listClusterFiles())('renders %s', async (file) => {
    const want = EXPECTED[file] as Expectation;
    const result = render(file, want.chain ? exampleChain(want.chain) : undefined);
    await expect(toYaml(result)).toMatchFileSnapshot(renderSnapshotPath(file));
    expect(names(result, 'ResourceFlavor')).toEqual(want.flavors);
    expect(names(result, 'ClusterQueue')).toEqual(want.queues);
    expect(names(result, 'InstanceType')).toEqual(want.queues);
    expect(names(result, 'AdmissionCheck')).toEqual(['gpustack-node-devices']);
    expect(names(result, 'DeviceClass')).toEqual(predictedClasses(want.queues));
    expectClassSelectors(result);
    // One LocalQueue per queue in each eligible namespace (not kube-system, not gpustack-system).
    const locals = result.objects.filter((o) => o.kind === 'LocalQueue');
    expect(new Set(locals.map((o) => o.metadata.namespace))).toEqual(new Set(['default', 'team-a']));
    expect(locals).toHaveLength(want.queues.length * 2);
  });

  it('renders the reference cluster with the quotas of the walkthrough', () => {
    const quotas = queueQuotas(render('reference-4-node.yaml'));
    expect(quotas).toEqual({
      [GENERIC_AMD64]: [
        [`${GENERIC_AMD64}-4c`, '8'],
        [`${GENERIC_AMD64}-16c`, '16'],
        [`${GENERIC_AMD64}-48c`, '48'],
      ],
      'gpustack-nvidia-a10g-linux-amd64': [['gpustack-nvidia-a10g-linux-amd64-1d', '1600k']],
      'gpustack-nvidia-tesla-t4-linux-amd64': [
        ['gpustack-nvidia-tesla-t4-linux-amd64-1d', '1600k'],
        ['gpustack-nvidia-tesla-t4-linux-amd64-4d', '6400k'],
      ],
    });
    const cores = (quotas[GENERIC_AMD64] ?? []).reduce((sum, [, q]) => sum + Number(q), 0);
    expect(cores).toBe(72);
  });

  it('sizes every derived InstanceType of the mixed cluster from the preset table', () => {
    const units = Object.fromEntries(
      render('mixed.json')
        .objects.filter((o) => o.kind === 'InstanceType')
        .map((o) => [o.metadata.name, (o['spec'] as { unitResources?: unknown }).unitResources]),
    );
    expect(units).toEqual({
      'gpustack-amd-instinct-mi300x-oam-linux-amd64': { cpu: '12', ram: '192Gi' },
      'gpustack-ascend-910b2-linux-arm64': { cpu: '8', ram: '64Gi' },
      [GENERIC_AMD64]: { cpu: '1', ram: '2Gi' },
      'gpustack-generic-linux-arm64': { cpu: '1', ram: '2Gi' },
      'gpustack-hygon-k100-ai-linux-amd64': { cpu: '12', ram: '128Gi' },
      'gpustack-metax-mxc500-linux-amd64': { cpu: '8', ram: '64Gi' },
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64': { cpu: '12', ram: '192Gi' },
    });
  });

  it('keys the arm64 Kunpeng host whose NFD vendor is VendorUnknown by its CPU model under CPUModel', () => {
    const result = render('kunpeng-vendorunknown-arm64.yaml', exampleChain('cpu-model.yaml'));
    const labels = result.nodes.find((n) => n.name === 'npu-kp-01')?.labels ?? {};
    expect(labels).toMatchObject({
      'general.feature.gpustack.ai/generic': 'true',
      'general.feature.gpustack.ai/generic-kunpeng-920': 'true',
      'general.feature.gpustack.ai/generic-kunpeng-920.count': '192',
    });
    expect(result.skipped).toEqual([]);
    const cpuType = result.objects.find(
      (o) => o.kind === 'InstanceType' && o.metadata.name === 'gpustack-generic-kunpeng-920-linux-arm64',
    );
    expect(cpuType?.['spec']).toMatchObject({ generalGroup: 'generic-kunpeng-920', displayName: 'Kunpeng-920' });
  });

  it('lists the admission check on device queues only, since render marks the check Active', () => {
    const result = render('reference-4-node.yaml');
    const queues = result.objects.filter((o) => o.kind === 'ClusterQueue').map((o) => ClusterQueueSchema.parse(o));
    expect(
      Object.fromEntries(queues.map((q) => [q.metadata.name, q.spec.admissionChecksStrategy !== undefined])),
    ).toEqual({
      [GENERIC_AMD64]: false,
      'gpustack-nvidia-a10g-linux-amd64': true,
      'gpustack-nvidia-tesla-t4-linux-amd64': true,
    });
    for (const queue of queues) expect(queue.spec.stopPolicy).toBe('None');
  });

  it('labels the garbage nodes it can: no flavor from a bad count, cards of unknown memory from a bad memory', () => {
    const result = render('garbage-labels.yaml');
    const labels = Object.fromEntries(result.nodes.map((n) => [n.name, n.labels]));
    expect(Object.keys(labels['gpu-bad-count'] ?? {}).filter((k) => k.includes('.sliced.'))).toEqual([]);
    expect(labels['gpu-bad-memory']).not.toHaveProperty([
      'acceleratable.feature.gpustack.ai/nvidia-a10g.sliced.memory-mib',
    ]);
    expect(result.objects.filter((o) => o.kind === 'ResourceFlavor' && o.metadata.name.endsWith('d'))).toEqual([
      expect.objectContaining({ metadata: expect.objectContaining({ name: 'gpustack-nvidia-a10g-linux-amd64-1d' }) }),
    ]);
    expect(result.unreadable).toEqual([
      { name: 'gpu-bad-memory', reason: 'InvalidDeviceMemory', message: expect.stringContaining('"huge"') },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual(['InvalidOsArch', 'InvalidDeviceCount']);
  });

  it('reads label forms other tools write where they are unambiguous, and names the label where not', () => {
    const result = render('foreign-label-forms.yaml');
    const A = 'acceleratable.feature.gpustack.ai/';
    const labels = Object.fromEntries(result.nodes.map((n) => [n.name, n.labels]));
    expect(labels['gpu-a10g-24g']?.[`${A}nvidia-a10g.sliced.memory-mib`]).toBe('22888');
    expect(labels['gpu-l40s-bytes']?.[`${A}nvidia-l40s.sliced.memory-mib`]).toBe('46080');
    expect(labels['gpu-l4-plus']?.[`${A}nvidia-l4.sliced.memory-mib`]).toBe('22528');
    expect(labels['gpu-t4-zero']).toHaveProperty([`${A}nvidia-tesla-t4.sliced.units`], '1600000');
    expect(labels['gpu-t4-zero']).not.toHaveProperty([`${A}nvidia-tesla-t4.sliced.memory-mib`]);
    expect(Object.keys(labels['gpu-t4-count-08'] ?? {}).filter((k) => k.includes('.sliced.'))).toEqual([]);
    expect(labels['virtual-kubelet-01']?.['general.feature.gpustack.ai/generic.count']).toBe('10000000');
    expect(result.skipped).toEqual([
      {
        name: 'gpu-t4-count-08',
        reason: 'InvalidDeviceCount',
        message: `${A}nvidia-tesla-t4.count="08" reads as 8, but a flavor selects its nodes by the exact value "8", which this label does not have`,
      },
    ]);
    // A memory we cannot read keeps no card out (the flavor pins only key and count): named, pooled.
    expect(result.unreadable).toEqual([
      {
        name: 'gpu-a10g-bare-mib',
        reason: 'InvalidDeviceMemory',
        message: expect.stringMatching(/nvidia-a10g\.memory="23028" is below 1Mi.*pooled with an unknown memory$/),
      },
      {
        name: 'gpu-a10g-negative',
        reason: 'InvalidDeviceMemory',
        message: `${A}nvidia-a10g.memory="-512m" is negative; its cards are pooled with an unknown memory`,
      },
    ]);
    const notes = Object.fromEntries(
      result.objects
        .filter((o) => o.kind === 'ResourceFlavor')
        .map((o) => [o.metadata.name, ResourceFlavorSchema.parse(o).metadata.annotations?.['note.gpustack.ai/memory']]),
    );
    expect(notes).toMatchObject({
      'gpustack-nvidia-a10g-linux-amd64-1d': '22888Mi',
      'gpustack-nvidia-l40s-linux-amd64-4d': '45Gi',
      'gpustack-nvidia-l4-linux-amd64-2d': '22Gi',
      'gpustack-nvidia-tesla-t4-linux-amd64-1d': undefined,
    });
  });

  it.each([
    {
      file: 'gpu-feature-discovery.yaml',
      node: 'gpu-a100-01',
      aKey: 'nvidia-a100-sxm4-80gb',
      want: { count: '4', memory: '80Gi', product: 'NVIDIA-A100-SXM4-80GB', unit: { cpu: '12', ram: '128Gi' } },
    },
    {
      file: 'gpu-feature-discovery.yaml',
      node: 'gpu-l40s-shared-01',
      aKey: 'nvidia-l40s',
      want: { count: '2', memory: '45Gi', product: 'NVIDIA-L40S', unit: { cpu: '12', ram: '128Gi' } },
    },
    {
      file: 'amd-gpu-operator.yaml',
      node: 'gpu-mi300x-01',
      aKey: 'amd-instinct-mi300x-oam',
      want: { count: '8', memory: '192Gi', product: 'AMD-Instinct-MI300X-OAM', unit: { cpu: '12', ram: '192Gi' } },
    },
    {
      file: 'ascend-device-plugin-arm64.yaml',
      node: 'npu-910b3-01',
      aKey: 'ascend-910b3',
      want: { count: '8', memory: '64Gi', product: '910B3', unit: { cpu: '8', ram: '64Gi' } },
    },
  ])('derives $aKey on $node from the vendor labels of $file: a queue with no agent', ({ file, node, aKey, want }) => {
    const result = render(file);
    const A = `acceleratable.feature.gpustack.ai/${aKey}`;
    const rendered = result.nodes.find((n) => n.name === node);
    expect(rendered?.labels).toMatchObject({
      [A]: 'true',
      [`${A}.count`]: want.count,
      [`${A}.memory`]: want.memory,
      [`${A}.product`]: want.product,
      [`${A}.sliced.units`]: '1600000',
    });
    // node-profile records what it derived, so it can remove exactly that later
    const record = JSON.parse(rendered?.annotations?.['feature.gpustack.ai/derived-device-labels'] ?? '{}');
    expect(record).toMatchObject({ [A]: 'true', [`${A}.count`]: want.count });
    expect(Object.keys(record).every((k) => rendered?.labels[k] === record[k])).toBe(true);
    const type = result.objects.find((o) => o.kind === 'InstanceType' && o.metadata.name.includes(aKey));
    expect(type?.['spec']).toMatchObject({ acceleratorGroup: aKey, unitResources: want.unit });
    expect(result.skipped).toEqual([]);
  });

  it('derives nothing from vendor labels with deviceLabelSources [Agent]', () => {
    const result = render(
      'gpu-feature-discovery.yaml',
      makeSchedulingChain()
        .spec({ deviceLabelSources: ['Agent'] })
        .obj(),
    );
    expect(names(result, 'ResourceFlavor')).toEqual([`${GENERIC_AMD64}-128c`, `${GENERIC_AMD64}-64c`]);
    expect(result.nodes.every((n) => n.annotations === undefined)).toBe(true);
  });

  it('keys CPU flavors by model with generalKey CPUModel', () => {
    const result = render('reference-4-node.yaml', makeSchedulingChain().spec({ generalKey: 'CPUModel' }).obj());
    expect(names(result, 'ResourceFlavor').filter((n) => n.endsWith('c'))).toEqual([
      'gpustack-amd-epyc-7r13-linux-amd64-16c',
      'gpustack-amd-epyc-7r32-linux-amd64-4c',
      'gpustack-intel-xeon-platinum-8259cl-linux-amd64-48c',
      'gpustack-intel-xeon-platinum-8259cl-linux-amd64-4c',
    ]);
  });

  const SETTINGS = [
    {},
    { mixedOnNode: false },
    { generalKey: 'CPUModel' },
    { generalKey: 'CPUModel', mixedOnNode: false },
  ];
  it.each(
    listClusterFiles().flatMap((file) => SETTINGS.map((spec): [string, Record<string, unknown>] => [file, spec])),
  )('every flavor of %s with %j pins exactly the nodes its capacity counts', (file, spec) => {
    const nodes = loadClusterNodes(file);
    const result = render(file, makeSchedulingChain().spec(spec).obj());
    const after = nodes.map((node) => {
      const labels: Record<string, string> = { ...node.metadata.labels };
      for (const [key, value] of Object.entries(
        result.nodes.find((n) => n.name === node.metadata.name)?.labels ?? {},
      )) {
        if (value === null) delete labels[key];
        else labels[key] = value;
      }
      return labels;
    });
    const flavors = result.objects.filter((o) => o.kind === 'ResourceFlavor').map((o) => ResourceFlavorSchema.parse(o));
    expect(flavors.length).toBeGreaterThan(0);
    for (const flavor of flavors) {
      const labels = flavor.metadata.labels ?? {};
      const capacityKey = Object.keys(labels).find((k) => k.endsWith('.capacity')) as string;
      const count = Number(labels[capacityKey.replace(/\.capacity$/, '.count')]);
      const pinned = after.filter((node) => Object.entries(flavor.spec.nodeLabels).every(([k, v]) => node[k] === v));
      expect(pinned.length * count, flavor.metadata.name).toBe(Number(labels[capacityKey]));
    }
  });

  it('stops at the first refusal: invalid settings', () => {
    const result = renderChain(
      {
        nodes: loadClusterNodes('h100-8x.yaml'),
        namespaces: NAMESPACES,
        chain: makeSchedulingChain().spec({ mixedOnNode: 'no' }).obj(),
      },
      { now: NOW },
    );
    expect(result).toMatchObject({ ok: false, error: { code: 'InvalidSettings' } });
  });
});

describe('renderChain with topology (docs/architecture.md#topology)', () => {
  it('renders every example cluster exactly as before while topology is off or absent', () => {
    for (const file of listClusterFiles()) {
      const chain = EXPECTED[file]?.chain;
      const spec = chain === undefined ? {} : (exampleChain(chain).spec as Record<string, unknown>);
      if ('topology' in spec) continue;
      const absent = toYaml(render(file, chain === undefined ? undefined : exampleChain(chain)));
      const disabled = makeSchedulingChain()
        .spec({ ...spec, topology: { mode: 'Disabled' } })
        .obj() as SchedulingChain;
      // The ChainSettings repeats the spec; every other object must be the same bytes.
      const withoutSettings = (text: string) => text.replace(/\n\s+topology:\n\s+mode: Disabled(?=\n)/g, '');
      expect(withoutSettings(toYaml(render(file, disabled))), file).toBe(absent);
      expect(absent, file).not.toContain('kind: Topology');
      expect(absent, file).not.toContain(TOPOLOGY_PROFILE_LABEL);
    }
  });

  it('renders the 3-block cluster without topology as any cluster: no profile, no Topology', () => {
    const result = render('topology-3-block.yaml');
    expect(names(result, 'Topology')).toEqual([]);
    expect(names(result, 'ResourceFlavor')).toEqual([
      `${GENERIC_AMD64}-128c`,
      `${GENERIC_AMD64}-224c`,
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
    ]);
  });

  it('renders the 3-block cluster with one Topology per profile, levels coarse to fine', () => {
    const result = render('topology-3-block.yaml', exampleChain('topology.yaml'));
    const topologies = result.objects.filter((o) => o.kind === 'Topology');
    expect(
      topologies.map((t) => [
        t.metadata.name,
        (t['spec'] as { levels: { nodeLabel: string }[] }).levels.map((l) => l.nodeLabel),
      ]),
    ).toEqual([
      [
        `gpustack-${BLOCK_PROFILE}`,
        [
          'cloud.google.com/gce-topology-block',
          'cloud.google.com/gce-topology-subblock',
          'nvidia.com/gpu.clique',
          'cloud.google.com/gce-topology-host',
          'kubernetes.io/hostname',
        ],
      ],
      [`gpustack-${HOST_PROFILE}`, ['kubernetes.io/hostname']],
    ]);
    const device = ResourceFlavorSchema.parse(
      result.objects.find((o) => o.metadata.name === `gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d-${BLOCK_PROFILE}`),
    );
    expect(device.spec.topologyName).toBe(`gpustack-${BLOCK_PROFILE}`);
    expect(device.spec.nodeLabels[TOPOLOGY_PROFILE_LABEL]).toBe(BLOCK_PROFILE);
    expect(device.metadata.labels?.['acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.capacity']).toBe('48');
    // Every Node carries its profile as a label; names and values stay within 63 characters.
    for (const node of result.nodes) {
      const profile = node.labels[TOPOLOGY_PROFILE_LABEL];
      expect(profile, node.name).toBe(node.name === 'cpu-01' ? HOST_PROFILE : BLOCK_PROFILE);
      expect(profile?.length).toBeLessThanOrEqual(63);
    }
    // One ClusterQueue per pool, listing its topology-qualified flavors (all TAS: Kueue then
    // places every workload of the queue by topology).
    expect(queueQuotas(result)['gpustack-nvidia-h100-80gb-hbm3-linux-amd64']).toEqual([
      [`gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d-${BLOCK_PROFILE}`, '76800k'],
    ]);
  });

  describe("the NVLink domain as a level: GPU Feature Discovery's clique or our agent's, one per profile", () => {
    const GFD_CLIQUE = 'nvidia.com/gpu.clique';
    /** The 3-block cluster, each GPU Node's clique labels changed by `relabel`. */
    function renderRelabelled(relabel: (labels: Record<string, string>) => void): Rendered {
      const nodes = loadClusterNodes('topology-3-block.yaml').map((node): Node => {
        const labels = { ...node.metadata.labels };
        if (labels[GFD_CLIQUE] !== undefined) relabel(labels);
        return { ...node, metadata: { ...node.metadata, labels } };
      });
      const result = renderChain({ nodes, namespaces: NAMESPACES, chain: exampleChain('topology.yaml') }, { now: NOW });
      if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
      return result;
    }
    const levelsOf = (result: Rendered): string[][] =>
      result.objects
        .filter((o) => o.kind === 'Topology')
        .map((t) => (t['spec'] as { levels: { nodeLabel: string }[] }).levels.map((l) => l.nodeLabel));

    it("takes GFD's clique where both are on a Node: the profile and the Topology do not change when our agent publishes its own", () => {
      const result = renderRelabelled((labels) => {
        labels[AGENT_CLIQUE_LABEL] = labels[GFD_CLIQUE] ?? '';
      });
      expect(names(result, 'Topology')).toEqual([`gpustack-${BLOCK_PROFILE}`, `gpustack-${HOST_PROFILE}`]);
      expect(levelsOf(result)[0]).toContain(GFD_CLIQUE);
      expect(levelsOf(result)[0]).not.toContain(AGENT_CLIQUE_LABEL);
    });

    it("takes our agent's clique where GFD does not run, at the same place among the levels", () => {
      const result = renderRelabelled((labels) => {
        labels[AGENT_CLIQUE_LABEL] = labels[GFD_CLIQUE] ?? '';
        delete labels[GFD_CLIQUE];
      });
      const levels = [
        'cloud.google.com/gce-topology-block',
        'cloud.google.com/gce-topology-subblock',
        AGENT_CLIQUE_LABEL,
        'cloud.google.com/gce-topology-host',
        'kubernetes.io/hostname',
      ];
      const profile = topologyProfileOf(levels);
      expect(profile).not.toBe(BLOCK_PROFILE);
      expect(levelsOf(result)).toEqual([levels, ['kubernetes.io/hostname']]);
      expect(names(result, 'ResourceFlavor')).toContain(`gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d-${profile}`);
      for (const node of result.nodes.filter((n) => n.name !== 'cpu-01'))
        expect(node.labels[TOPOLOGY_PROFILE_LABEL], node.name).toBe(profile);
    });
  });
});
