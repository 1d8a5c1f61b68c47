import { describe, expect, it } from 'vitest';
import {
  SchedulingChainSyncRequestSchema,
  customizeSchedulingChain,
  syncSchedulingChain,
} from '../../../src/sync/index.js';
import type { DeviceClass } from '../../../src/dra/index.js';
import { makeInstanceType, makeSchedulingChain } from '../../builders/gpustack.js';
import { makeNode } from '../../builders/node.js';
import type { Node } from '../../../src/k8s/index.js';
import { chainRelated, chainRequest } from '../../builders/request.js';
import { listScenarios, readRequestFixture } from '../../support/fixtures.js';
import { NOW, runHook, runScenario } from '../../support/hooks.js';
import {
  admissionChecksOf,
  chainStatusOf,
  conditionOf,
  expectOk,
  expectRefusal,
  flavorsOf,
  instanceTypesOf,
  namesOfKind,
} from '../../support/responses.js';

const C = 'scheduling-chain';
const EARLIER = '2026-02-01T08:00:00Z';
const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const CPU_ONLY = 'feature.gpustack.ai/cpu-only';

const GENERIC = 'gpustack-generic-linux-amd64';
const A10G = 'gpustack-nvidia-a10g-linux-amd64';
const T4 = 'gpustack-nvidia-tesla-t4-linux-amd64';
const MANUFACTURER_CLASSES = [
  'amd',
  'ascend',
  'cambricon',
  'hygon',
  'iluvatar',
  'metax',
  'mthreads',
  'nvidia',
  'thead',
];
/** Every manufacturer's classes plus the reference cluster's two models (a10g, tesla-t4), sorted by name. */
const REFERENCE_CLASSES = [
  ...MANUFACTURER_CLASSES.flatMap((m) => [`gpustack-${m}`, `gpustack-${m}-shared`]),
  'gpustack-nvidia-a10g',
  'gpustack-nvidia-a10g-shared',
  'gpustack-nvidia-tesla-t4',
  'gpustack-nvidia-tesla-t4-shared',
].sort();
const REFERENCE_FLAVORS = [`${GENERIC}-16c`, `${GENERIC}-48c`, `${GENERIC}-4c`, `${A10G}-1d`, `${T4}-1d`, `${T4}-4d`];

/** The observed children of a fixture as `Kind/name`, to compare with what is re-sent. */
function observedChildren(scenario: string): Map<string, { spec?: unknown; metadata: { labels?: unknown } }> {
  const request = SchedulingChainSyncRequestSchema.parse(readRequestFixture(C, scenario));
  const out = new Map<string, { spec?: unknown; metadata: { labels?: unknown } }>();
  for (const byName of Object.values(request.children)) {
    for (const child of Object.values(byName ?? {})) out.set(`${child.kind}/${child.metadata.name}`, child);
  }
  return out;
}

describe('syncSchedulingChain reads NodeProfiles as it reads whole Nodes', () => {
  // Every scenario's Nodes come whole (no profile: the path of an upgrade); the same Nodes as the
  // NodeProfiles node-profile writes of them must give exactly the same answer.
  it.each(listScenarios(C).filter((s) => s !== 'refuses-while-the-related-nodes-are-missing'))('%s', (scenario) => {
    const raw = readRequestFixture(C, scenario) as { related: Record<string, Record<string, Node>> };
    const nodes = Object.values(raw.related['Node.v1'] ?? {});
    expect(nodes.length).toBeGreaterThan(0);
    const asProfiles = { ...raw, related: chainRelated(nodes, 'profiles') };
    expect(Object.keys(asProfiles.related['Node.v1'] ?? {})).toEqual([]);
    expect(runHook(C, asProfiles)).toEqual(runHook(C, raw));
  });
});

describe('syncSchedulingChain scenarios', () => {
  it('pools the reference cluster into flavors, instance types and the admission check', async () => {
    const response = expectOk(
      await runScenario(C, 'pools-the-reference-cluster-into-flavors-instance-types-and-the-admission-check'),
    );
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual(REFERENCE_FLAVORS);
    expect(namesOfKind(response, 'InstanceType')).toEqual([GENERIC, A10G, T4]);
    expect(namesOfKind(response, 'AdmissionCheck')).toEqual(['gpustack-node-devices']);
    // Both models of the cluster get their whole and shared classes beside the nine manufacturers'.
    expect(namesOfKind(response, 'DeviceClass')).toEqual(REFERENCE_CLASSES);
    const capacity = Object.fromEntries(
      flavorsOf(response).map((f) => {
        const labels = f.metadata.labels ?? {};
        const key = Object.keys(labels).find((k) => k.endsWith('.capacity')) as string;
        return [f.metadata.name, labels[key]];
      }),
    );
    expect(capacity).toEqual({
      [`${GENERIC}-16c`]: '16',
      [`${GENERIC}-48c`]: '48',
      [`${GENERIC}-4c`]: '8',
      [`${A10G}-1d`]: '1',
      [`${T4}-1d`]: '1',
      [`${T4}-4d`]: '4',
    });
    const status = chainStatusOf(response);
    expect(status.managedNodes).toBe(4);
    expect(status.pools.map((p) => [p.name, p.nodes])).toEqual([
      [GENERIC, 4],
      [A10G, 1],
      [T4, 2],
    ]);
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Synced', lastTransitionTime: NOW });
    expect(status.skippedNodes).toBeUndefined();
    expect(response.resyncAfterSeconds).toBeUndefined();
  });

  it('refuses while the related nodes are missing', async () => {
    const error = expectRefusal(await runScenario(C, 'refuses-while-the-related-nodes-are-missing'));
    expect(error).toMatchObject({ code: 'MissingRelated', retryAfterSeconds: 30 });
    expect(error.message).toContain('Node.v1');
  });

  it('keeps the last good children while the settings are invalid', async () => {
    const scenario = 'keeps-the-last-good-children-while-the-settings-are-invalid';
    const response = expectOk(await runScenario(C, scenario));
    const ready = conditionOf(chainStatusOf(response), 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSettings', lastTransitionTime: NOW });
    expect(ready.message).toContain('spec.generalKey');
    expect(response.resyncAfterSeconds).toBe(30);
    // Every observed child is re-sent with its observed labels and spec; none is dropped.
    const observed = observedChildren(scenario);
    expect(response.children).toHaveLength(observed.size);
    expect(observed.size).toBeGreaterThan(0);
    for (const child of response.children) {
      const seen = observed.get(`${child.kind}/${child.metadata.name}`);
      expect(seen, `${child.kind}/${child.metadata.name} was observed`).toBeDefined();
      expect(child['spec']).toEqual(seen?.spec);
      expect(child.metadata['labels']).toEqual(seen?.metadata.labels);
      expect(
        Object.keys(child.metadata['annotations'] ?? {}).filter((k) => k.startsWith('metacontroller.k8s.io/')),
      ).toEqual([]);
    }
  });

  it('ignores a chain that is not named default', async () => {
    const response = expectOk(await runScenario(C, 'ignores-a-chain-that-is-not-named-default'));
    expect(response.children).toEqual([]);
    expect(conditionOf(chainStatusOf(response), 'Ready')).toMatchObject({ status: 'False', reason: 'NotDefault' });
  });

  it('keeps an instance type whose pool lost its nodes, with the fields an admin edited', async () => {
    const response = expectOk(await runScenario(C, 'keeps-an-instance-type-whose-pool-lost-its-nodes'));
    expect(namesOfKind(response, 'ResourceFlavor')).not.toContain(`${A10G}-1d`);
    const types = Object.fromEntries(instanceTypesOf(response).map((t) => [t.metadata.name, t.spec]));
    expect(Object.keys(types)).toEqual([GENERIC, A10G, T4]);
    expect(types[A10G]).toMatchObject({
      displayName: 'A10G (retired pool)',
      description: 'g5 nodes were returned; keep the type for the quota history',
      inactive: true,
      acceleratable: true,
      acceleratorGroup: 'nvidia-a10g',
    });
    expect(types[T4]).toMatchObject({ displayName: 'T4 16GB (inference)', description: 'cheap inference cards' });
    expect(types[T4]?.inactive).toBeUndefined();
    const pools = chainStatusOf(response).pools;
    expect(pools.find((p) => p.name === A10G)).toEqual({ name: A10G, acceleratable: true, nodes: 0, flavors: [] });
    // The sticky pool keeps its model's classes: templates naming them stay valid.
    expect(namesOfKind(response, 'DeviceClass')).toEqual(REFERENCE_CLASSES);
  });

  it('derives no new instance types when derivation is off, but keeps the observed ones', async () => {
    const response = expectOk(await runScenario(C, 'derives-no-new-instance-types-when-derivation-is-off'));
    expect(namesOfKind(response, 'InstanceType')).toEqual([GENERIC]);
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual(REFERENCE_FLAVORS);
  });

  it('leaves out the admission check when it is disabled', async () => {
    const response = expectOk(await runScenario(C, 'leaves-out-the-admission-check-when-it-is-disabled'));
    expect(admissionChecksOf(response)).toEqual([]);
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([
      `${GENERIC}-224c`,
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
    ]);
  });

  it('keeps accelerated nodes out of CPU flavors when mixedOnNode is off', async () => {
    const response = expectOk(
      await runScenario(C, 'keeps-accelerated-nodes-out-of-cpu-flavors-when-mixed-on-node-is-off'),
    );
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([`${GENERIC}-16c`, `${A10G}-1d`, `${T4}-1d`, `${T4}-4d`]);
    const [cpu] = flavorsOf(response);
    expect(cpu?.spec.nodeLabels[CPU_ONLY]).toBe('true');
    for (const device of flavorsOf(response).slice(1)) expect(device.spec.nodeLabels[CPU_ONLY]).toBeUndefined();
    expect(chainStatusOf(response).pools.find((p) => p.name === GENERIC)?.nodes).toBe(1);
  });

  it('keys CPU flavors by CPU model', async () => {
    const response = expectOk(await runScenario(C, 'keys-cpu-flavors-by-cpu-model'));
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([
      'gpustack-amd-epyc-7763-linux-amd64-128c',
      'gpustack-amd-epyc-7763-linux-amd64-64c',
      'gpustack-intel-xeon-platinum-8480-linux-amd64-224c',
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
    ]);
    const epyc = flavorsOf(response)[0];
    expect(epyc?.metadata.annotations).toMatchObject({
      'note.gpustack.ai/manufacturer': 'amd',
      'note.gpustack.ai/product': 'AMD EPYC 7763 64-Core Processor',
    });
    expect(epyc?.spec.nodeLabels).toMatchObject({ [`${G}amd-epyc-7763`]: 'true', [`${G}amd-epyc-7763.count`]: '128' });
    expect(namesOfKind(response, 'InstanceType')).toEqual([
      'gpustack-amd-epyc-7763-linux-amd64',
      'gpustack-intel-xeon-platinum-8480-linux-amd64',
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
    ]);
  });

  it('skips nodes with garbage labels and reports them, ignoring unmanaged nodes', async () => {
    const response = expectOk(await runScenario(C, 'skips-nodes-with-garbage-labels-and-reports-them'));
    const status = chainStatusOf(response);
    expect(status.skippedNodes?.map((s) => [s.name, s.reason])).toEqual([
      ['cpu-no-arch', 'InvalidOsArch'],
      ['gpu-bad-count', 'InvalidDeviceCount'],
      ['gpu-no-general', 'MissingGeneralKey'],
    ]);
    for (const skipped of status.skippedNodes ?? []) expect(skipped.message).not.toBe('');
    // A memory that cannot be read does not keep the cards out: they pool with an unknown memory.
    expect(status.unreadableLabels).toEqual([
      {
        name: 'gpu-bad-memory',
        reason: 'InvalidDeviceMemory',
        message: `${A}nvidia-a10g.memory="huge" is not a Kubernetes quantity such as 80Gi; its cards are pooled with an unknown memory`,
      },
    ]);
    expect(conditionOf(status, 'NodesSkipped')).toMatchObject({ status: 'True', reason: 'InvalidNodeLabels' });
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'True' });
    // cpu-03 says managed=false: not counted, not pooled.
    expect(status.managedNodes).toBe(5);
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([
      `${GENERIC}-16c`,
      `${GENERIC}-4c`,
      `${GENERIC}-8c`,
      'gpustack-nvidia-a10g-linux-amd64-1d',
      `${T4}-1d`,
    ]);
    const a10g = flavorsOf(response).find((f) => f.metadata.name === 'gpustack-nvidia-a10g-linux-amd64-1d');
    expect(a10g?.metadata.annotations).not.toHaveProperty(['note.gpustack.ai/memory']);
    const t4 = flavorsOf(response).find((f) => f.metadata.name === `${T4}-1d`);
    expect(t4?.metadata.labels?.[`${A}nvidia-tesla-t4.capacity`]).toBe('1');
  });

  it('resyncs an unchanged cluster without moving condition times', async () => {
    const scenario = 'resyncs-an-unchanged-cluster-without-moving-condition-times';
    const response = expectOk(await runScenario(C, scenario));
    const status = chainStatusOf(response);
    for (const condition of status.conditions) expect(condition.lastTransitionTime, condition.type).toBe(EARLIER);
    // The desired children are exactly what the first sync asked for (its snapshot).
    const first = expectOk(
      runHook(
        C,
        readRequestFixture(C, 'pools-the-reference-cluster-into-flavors-instance-types-and-the-admission-check'),
      ),
    );
    expect(response.children).toEqual(first.children);
  });
});

describe('syncSchedulingChain with builders', () => {
  const chain = makeSchedulingChain();
  const sync = (raw: unknown) => expectOk(runHook(C, raw));

  it('pools nodes with the same key, os, arch and count into one flavor', () => {
    const response = sync(
      chainRequest({
        parent: chain.obj(),
        nodes: [
          makeNode('gpu-1').h100(8).cpu(224).profiled().obj(),
          makeNode('gpu-2').h100(8).cpu(224).profiled().obj(),
          makeNode('gpu-3').h100(4).cpu(224).profiled().obj(),
        ],
      }),
    );
    const flavors = flavorsOf(response);
    expect(
      flavors.map((f) => [
        f.metadata.name,
        f.metadata.labels?.[`${A}nvidia-h100-80gb-hbm3.capacity`] ?? f.metadata.labels?.[`${G}generic.capacity`],
      ]),
    ).toEqual([
      [`${GENERIC}-224c`, '672'],
      ['gpustack-nvidia-h100-80gb-hbm3-linux-amd64-4d', '4'],
      ['gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d', '16'],
    ]);
    expect(flavors[2]?.spec).toEqual({
      nodeLabels: {
        'gpustack.ai/managed': 'true',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        [`${A}nvidia-h100-80gb-hbm3`]: 'true',
        [`${A}nvidia-h100-80gb-hbm3.count`]: '8',
      },
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
    });
  });

  it('splits pools by os and arch', () => {
    const response = sync(
      chainRequest({
        parent: chain.obj(),
        nodes: [
          makeNode('npu-1').arch('arm64').ascend910b2(8).cpu(192).profiled().obj(),
          makeNode('cpu-1').cpu(192).profiled().obj(),
        ],
      }),
    );
    expect(namesOfKind(response, 'InstanceType')).toEqual([
      'gpustack-ascend-910b2-linux-arm64',
      `${GENERIC}`,
      'gpustack-generic-linux-arm64',
    ]);
    const ascend = instanceTypesOf(response)[0];
    expect(ascend?.spec).toMatchObject({
      acceleratorGroup: 'ascend-910b2',
      arch: 'arm64',
      unitResources: { cpu: '8', ram: '64Gi' },
    });
  });

  it.each([
    { name: 'label gpustack.ai/managed=false', node: makeNode('n').h100(8).profiled().managed('false').obj() },
    {
      name: 'no gpustack.ai/managed label',
      node: makeNode('n').h100(8).profiled().withoutLabel('gpustack.ai/managed').obj(),
    },
    {
      name: 'label gpustack.ai/managed=True (not exactly "true")',
      node: makeNode('n').h100(8).profiled().managed('True').obj(),
    },
  ])('ignores an unmanaged node: $name', ({ node }) => {
    const response = sync(chainRequest({ parent: chain.obj(), nodes: [node] }));
    expect(flavorsOf(response)).toEqual([]);
    expect(chainStatusOf(response)).toMatchObject({ managedNodes: 0, pools: [] });
  });

  it.each([
    {
      name: 'a device count that is not a number',
      node: makeNode('bad').t4(1).profiled().label(`${A}nvidia-tesla-t4.count`, 'abc'),
      reason: 'InvalidDeviceCount',
      flavors: [`${GENERIC}-16c`],
    },
    {
      name: 'a zero device count',
      node: makeNode('bad').t4(1).profiled().label(`${A}nvidia-tesla-t4.count`, '0'),
      reason: 'InvalidDeviceCount',
      flavors: [`${GENERIC}-16c`],
    },
    {
      name: 'a device count written 08',
      node: makeNode('bad').t4(1).profiled().label(`${A}nvidia-tesla-t4.count`, '08'),
      reason: 'InvalidDeviceCount',
      flavors: [`${GENERIC}-16c`],
    },
    {
      name: 'no arch label',
      node: makeNode('bad').arch(undefined).t4(1).profiled(),
      reason: 'InvalidOsArch',
      flavors: [],
    },
    {
      name: 'no general key',
      node: makeNode('bad').t4(1).profiled().withoutLabel(`${G}generic`),
      reason: 'MissingGeneralKey',
      flavors: [`${T4}-1d`],
    },
    {
      name: 'a CPU count that is not a number',
      node: makeNode('bad').profiled().label(`${G}generic.count`, 'lots'),
      reason: 'InvalidCpuCount',
      flavors: [],
    },
    {
      name: 'two general keys',
      node: makeNode('bad').profiled().label(`${G}amd-epyc-7763`, 'true').label(`${G}amd-epyc-7763.count`, '16'),
      reason: 'AmbiguousGeneralKey',
      flavors: [],
    },
  ])('skips what a node with $name cannot feed, and says why', ({ node, reason, flavors }) => {
    const response = sync(
      chainRequest({ parent: chain.obj(), nodes: [node.obj(), makeNode('good').cpu(32).profiled().obj()] }),
    );
    const status = chainStatusOf(response);
    expect(status.skippedNodes).toEqual([{ name: 'bad', reason, message: expect.any(String) }]);
    expect(conditionOf(status, 'NodesSkipped')).toMatchObject({ status: 'True' });
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([...flavors, `${GENERIC}-32c`].sort());
  });

  it.each([
    { name: 'is not a quantity', memory: 'huge' },
    { name: 'is negative', memory: '-512m' },
    { name: 'is a bare MiB figure (ambiguous)', memory: '23028' },
  ])('pools the cards of a node whose device memory $name, and names the label in status', ({ memory }) => {
    const bad = makeNode('bad').a10g(1).profiled().label(`${A}nvidia-a10g.memory`, memory).obj();
    const good = makeNode('good').a10g(1).profiled().obj();
    const response = sync(chainRequest({ parent: chain.obj(), nodes: [bad, good] }));
    const status = chainStatusOf(response);
    expect(status.skippedNodes).toBeUndefined();
    expect(status.unreadableLabels).toEqual([
      {
        name: 'bad',
        reason: 'InvalidDeviceMemory',
        message: expect.stringContaining(`nvidia-a10g.memory="${memory}"`),
      },
    ]);
    // Both nodes carry the key and .count the flavor pins, so both must be in its capacity.
    const a10g = flavorsOf(response).find((f) => f.metadata.name === 'gpustack-nvidia-a10g-linux-amd64-1d');
    expect(a10g?.metadata.labels?.[`${A}nvidia-a10g.capacity`]).toBe('2');
  });

  it('reports NodesSkipped=False when every node is pooled', () => {
    const status = chainStatusOf(sync(chainRequest({ parent: chain.obj(), nodes: [makeNode('a').profiled().obj()] })));
    expect(conditionOf(status, 'NodesSkipped')).toMatchObject({ status: 'False', reason: 'AllNodesPooled' });
  });

  it('keeps lastTransitionTime of unchanged conditions and moves it for changed ones', () => {
    const previous = [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Synced',
        message: '1 pools from 1 managed nodes',
        lastTransitionTime: EARLIER,
      },
      {
        type: 'NodesSkipped',
        status: 'True',
        reason: 'InvalidNodeLabels',
        message: '1 nodes are left out of some pools; see status.skippedNodes',
        lastTransitionTime: EARLIER,
      },
    ];
    const status = chainStatusOf(
      sync(chainRequest({ parent: chain.previousConditions(previous).obj(), nodes: [makeNode('a').profiled().obj()] })),
    );
    expect(conditionOf(status, 'Ready').lastTransitionTime).toBe(EARLIER);
    expect(conditionOf(status, 'NodesSkipped')).toMatchObject({ status: 'False', lastTransitionTime: NOW });
  });

  it('writes the resolved settings as the ChainSettings default, the same whatever the nodes', () => {
    const parent = makeSchedulingChain().spec({ generalKey: 'CPUModel', nodeManagement: 'Manual' }).obj();
    const settingsOf = (nodes: ReturnType<ReturnType<typeof makeNode>['obj']>[]) =>
      sync(chainRequest({ parent, nodes })).children.filter((c) => c.kind === 'ChainSettings');
    const one = settingsOf([makeNode('gpu-1').h100(8).cpu(224).profiled().obj()]);
    expect(one).toEqual([
      {
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'ChainSettings',
        metadata: { name: 'default', labels: { 'app.kubernetes.io/part-of': 'gpustack-operator' } },
        spec: {
          nodeManagement: 'Manual',
          generalKey: 'CPUModel',
          mixedOnNode: true,
          deriveInstanceTypes: true,
          admissionCheck: 'Enabled',
          systemNamespace: 'gpustack-system',
          deviceLabelSources: ['Agent', 'NVIDIAGFD', 'AMDNodeLabeller', 'AscendDevicePlugin'],
          nodeShards: 32,
        },
      },
    ]);
    // A Node's cards change the chain's status, never its ChainSettings: no Node re-syncs for it.
    expect(
      settingsOf([makeNode('gpu-1').h100(4).cpu(224).profiled().obj(), makeNode('cpu-1').profiled().obj()]),
    ).toEqual(one);
    expect(settingsOf([])).toEqual(one);
  });

  it('keeps the last good ChainSettings while the settings are invalid, so node-profile keeps working', () => {
    const good = sync(chainRequest({ parent: chain.obj(), nodes: [makeNode('a').profiled().obj()] }));
    const observed = good.children.find((c) => c.kind === 'ChainSettings');
    expect(observed).toBeDefined();
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain().spec({ mixedOnNode: 'yes' }).obj(),
        nodes: [makeNode('a').profiled().obj()],
        children: good.children,
      }),
    );
    expect(response.children.find((c) => c.kind === 'ChainSettings')).toEqual(observed);
  });

  it('answers with no children, not an error, for invalid settings when nothing is observed yet', () => {
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain().spec({ mixedOnNode: 'yes' }).obj(),
        nodes: [makeNode('a').profiled().obj()],
      }),
    );
    expect(response.children).toEqual([]);
    expect(conditionOf(chainStatusOf(response), 'Ready')).toMatchObject({
      reason: 'InvalidSettings',
      message: expect.stringContaining('spec.mixedOnNode'),
    });
    expect(chainStatusOf(response).managedNodes).toBe(1);
  });

  it('derives no InstanceType at all with deriveInstanceTypes off and nothing observed', () => {
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain().spec({ deriveInstanceTypes: false }).obj(),
        nodes: [makeNode('g').t4(1).profiled().obj()],
      }),
    );
    expect(instanceTypesOf(response)).toEqual([]);
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual([`${GENERIC}-16c`, `${T4}-1d`]);
  });

  it('re-emits a sticky InstanceType exactly as observed, without inventing fields', () => {
    const observed = makeInstanceType('gpustack-nvidia-h200-linux-amd64')
      .device('nvidia-h200')
      .displayName('H200')
      .obj();
    const response = sync(chainRequest({ parent: chain.obj(), nodes: [], children: [observed] }));
    expect(instanceTypesOf(response)).toEqual([
      {
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'InstanceType',
        metadata: {
          name: 'gpustack-nvidia-h200-linux-amd64',
          labels: {
            'schedule.gpustack.ai/derived-from-node': 'true',
            'schedule.gpustack.ai/queue-entrance': expect.stringMatching(/^gpustack-fnv64-[0-9a-f]{16}$/),
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            'feature.gpustack.ai/acceleratable': 'true',
            [`${A}nvidia-h200`]: 'true',
          },
        },
        spec: {
          displayName: 'H200',
          acceleratable: true,
          acceleratorGroup: 'nvidia-h200',
          generalGroup: 'generic',
          os: 'linux',
          arch: 'amd64',
        },
      },
    ]);
    expect(chainStatusOf(response).pools).toEqual([
      { name: 'gpustack-nvidia-h200-linux-amd64', acceleratable: true, nodes: 0, flavors: [] },
    ]);
  });

  it('writes no pool-key label for an observed accelerated InstanceType without acceleratorGroup', () => {
    const broken = makeInstanceType('gpustack-nvidia-x-linux-amd64').device('nvidia-x').obj();
    delete (broken.spec as Record<string, unknown>)['acceleratorGroup'];
    const response = sync(chainRequest({ parent: chain.obj(), nodes: [], children: [broken] }));
    const labels = instanceTypesOf(response)[0]?.metadata.labels ?? {};
    expect(Object.keys(labels).filter((k) => k.startsWith(A))).toEqual([]);
    expect(labels['feature.gpustack.ai/acceleratable']).toBe('true');
  });

  it("emits the DeviceClasses of every enabled manufacturer and every model in a pool, keeping sticky pools' classes", () => {
    const live = makeNode('gpu-1').h100(8).profiled().obj();
    const sticky = makeInstanceType('gpustack-nvidia-h200-linux-amd64').device('nvidia-h200').obj();
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'nvidia' }, { name: 'amd' }] })
          .obj(),
        nodes: [live],
        children: [sticky],
      }),
    );
    expect(namesOfKind(response, 'DeviceClass')).toEqual([
      'gpustack-amd',
      'gpustack-amd-shared',
      'gpustack-nvidia',
      'gpustack-nvidia-h100-80gb-hbm3',
      'gpustack-nvidia-h100-80gb-hbm3-shared',
      'gpustack-nvidia-h200',
      'gpustack-nvidia-h200-shared',
      'gpustack-nvidia-shared',
    ]);
    const classes = response.children.filter((c) => c.kind === 'DeviceClass') as DeviceClass[];
    const byName = new Map(classes.map((c) => [c.metadata.name, c]));
    expect(byName.get('gpustack-nvidia-h200')?.spec.selectors[0]?.cel.expression).toBe(
      'device.driver == "nvidia.gpustack.ai" && device.attributes["nvidia.gpustack.ai"].productKey == "nvidia-h200"' +
        ' && device.attributes["nvidia.gpustack.ai"].mode == "whole"',
    );
    // Only the manufacturer's classes map extended resources: <base> on the whole class (a plain
    // `nvidia.com/gpu: 1` gets a card through DRA where no device plugin serves it), <base>.shared on the shared one.
    expect(classes.filter((c) => c.spec.extendedResourceName !== undefined).map((c) => c.metadata.name)).toEqual([
      'gpustack-amd',
      'gpustack-amd-shared',
      'gpustack-nvidia',
      'gpustack-nvidia-shared',
    ]);
    expect(byName.get('gpustack-nvidia')?.spec.extendedResourceName).toBe('nvidia.com/gpu');
    expect(byName.get('gpustack-nvidia-shared')?.spec.extendedResourceName).toBe('nvidia.com/gpu.shared');

    // Once the admin deletes the sticky InstanceType, its model's classes go too.
    const after = sync(
      chainRequest({
        parent: makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'nvidia' }, { name: 'amd' }] })
          .obj(),
        nodes: [live],
      }),
    );
    expect(namesOfKind(after, 'DeviceClass')).not.toContain('gpustack-nvidia-h200');
    expect(namesOfKind(after, 'DeviceClass')).toContain('gpustack-nvidia-h100-80gb-hbm3');
  });

  it('leaves out devices of manufacturers that are not enabled', () => {
    const response = sync(
      chainRequest({
        parent: makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'ascend' }] })
          .obj(),
        nodes: [makeNode('gpu').h100(8).profiled().obj(), makeNode('npu').ascend910b2(8).profiled().obj()],
      }),
    );
    expect(namesOfKind(response, 'ResourceFlavor')).toEqual(['gpustack-ascend-910b2-linux-amd64-8d', `${GENERIC}-16c`]);
    expect(namesOfKind(response, 'DeviceClass')).toEqual([
      'gpustack-ascend',
      'gpustack-ascend-910b2',
      'gpustack-ascend-910b2-shared',
      'gpustack-ascend-shared',
    ]);
  });

  it('tolerates the overridden device resource, and uses flavorTolerations when given', () => {
    const overridden = sync(
      chainRequest({
        parent: makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'nvidia', resourceName: 'nvidia.com/gpu.shared' }] })
          .obj(),
        nodes: [makeNode('gpu').t4(1).profiled().obj()],
      }),
    );
    expect(flavorsOf(overridden).find((f) => f.metadata.name === `${T4}-1d`)?.spec.tolerations).toEqual([
      { key: 'nvidia.com/gpu.shared', operator: 'Exists' },
    ]);
    const custom = sync(
      chainRequest({
        parent: makeSchedulingChain()
          .spec({
            flavorTolerations: {
              cpu: [{ key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }],
              device: [],
            },
          })
          .obj(),
        nodes: [makeNode('gpu').t4(1).profiled().obj()],
      }),
    );
    const [cpu, device] = flavorsOf(custom);
    expect(cpu?.spec.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' },
    ]);
    expect(device?.spec.tolerations).toBeUndefined();
  });

  it('relates the NodeProfiles in no shard, and the managed Nodes without one (read whole), through customize', () => {
    expect(customizeSchedulingChain({ parent: chain.obj() })).toEqual({
      relatedResources: [
        {
          apiVersion: 'worker.gpustack.ai/v1alpha1',
          resource: 'nodeprofiles',
          labelSelector: {
            matchLabels: { 'app.kubernetes.io/part-of': 'gpustack-operator' },
            matchExpressions: [{ key: 'gpustack.ai/node-shard', operator: 'DoesNotExist' }],
          },
        },
        {
          apiVersion: 'v1',
          resource: 'nodes',
          labelSelector: {
            matchLabels: { 'gpustack.ai/managed': 'true' },
            matchExpressions: [{ key: 'gpustack.ai/profiled', operator: 'DoesNotExist' }],
          },
        },
      ],
    });
  });

  it('plans a managed Node without a NodeProfile from the Node itself, and prefers the profile when both exist', () => {
    const t4 = makeNode('t4').t4(4).profiled().obj();
    const a10g = makeNode('a10g').a10g(1).profiled().obj();
    const both = chainRequest({ parent: chain.obj(), nodes: [t4, a10g] }) as { related: Record<string, object> };
    const whole = chainRequest({ parent: chain.obj(), nodes: [t4, a10g], relatedAs: 'nodes' }) as typeof both;
    // `a10g` has a profile and no Node; `t4` has no profile yet and comes whole; a stale whole `a10g`
    // without cards (its profile is newer) must not win.
    const staleA10g = { ...makeNode('a10g').profiled().obj() };
    const related = {
      'NodeProfile.worker.gpustack.ai/v1alpha1': {
        a10g: (both.related['NodeProfile.worker.gpustack.ai/v1alpha1'] as Record<string, unknown>)['a10g'],
      },
      'Node.v1': { t4: (whole.related['Node.v1'] as Record<string, unknown>)['t4'], a10g: staleA10g },
    };
    const mixed = expectOk(runHook(C, { ...both, related }));
    expect(namesOfKind(mixed, 'ResourceFlavor')).toEqual(namesOfKind(expectOk(runHook(C, both)), 'ResourceFlavor'));
    expect(namesOfKind(mixed, 'ResourceFlavor')).toEqual(expect.arrayContaining([`${A10G}-1d`, `${T4}-4d`]));
    expect(chainStatusOf(mixed).managedNodes).toBe(2);
  });

  it('is a pure function of its request: twice the same answer', () => {
    const raw = chainRequest({ parent: chain.obj(), nodes: [makeNode('a').t4(4).profiled().obj()] });
    const request = SchedulingChainSyncRequestSchema.parse(raw);
    expect(syncSchedulingChain(request, { now: NOW })).toEqual(syncSchedulingChain(request, { now: NOW }));
  });
});
