import { describe, expect, it } from 'vitest';
import { DEVICES_ANNOTATION } from '../../../src/dra/index.js';
import { customizeInstanceType } from '../../../src/sync/index.js';
import { makeInstanceType, makeSchedulingChain } from '../../builders/gpustack.js';
import {
  makeAdmissionCheck,
  makeClusterQueue,
  makeLocalQueue,
  makeNamespace,
  makeResourceFlavor,
  type Observed,
} from '../../builders/kueue.js';
import { KEYS, instanceTypeRequest, type InstanceTypeRequestInput } from '../../builders/request.js';
import { NOW, runHook, runScenario } from '../../support/hooks.js';
import {
  clusterQueuesOf,
  conditionOf,
  expectOk,
  expectRefusal,
  instanceTypeStatusOf,
  localQueuesOf,
} from '../../support/responses.js';

const C = 'instance-type';
const EARLIER = '2026-02-01T08:00:00Z';
const T4 = 'gpustack-nvidia-tesla-t4-linux-amd64';
const T4_ENTRANCE = 'gpustack-fnv64-199cb01104a7efc8';
const GENERIC = 'gpustack-generic-linux-amd64';
const CREDITS = 'credits.gpustack.ai/nvidia';
const CARDS = 'cards.gpustack.ai/nvidia';

/** The single resource group of a ClusterQueue as `[flavor, resource, quota]` rows; whole DRA cards only when asked. */
function quotas(response: Parameters<typeof clusterQueuesOf>[0], withCards = false): [string, string, string][] {
  const [queue] = clusterQueuesOf(response);
  return (queue?.spec.resourceGroups?.[0]?.flavors ?? []).flatMap((f) =>
    f.resources
      .filter((r) => withCards || !r.name.startsWith('cards.'))
      .map((r): [string, string, string] => [f.name, r.name, r.nominalQuota]),
  );
}

describe('syncInstanceType scenarios', () => {
  it('builds the tesla-t4 queue with credit quotas and the admission check', async () => {
    const response = expectOk(
      await runScenario(C, 'builds-the-tesla-t4-queue-with-credit-quotas-and-the-admission-check'),
    );
    const [queue] = clusterQueuesOf(response);
    expect(queue?.metadata.name).toBe(T4);
    // Credits for everything Kueue folds into credits; whole DRA cards for Kueue 0.17 (docs/architecture.md#kueue-objects).
    expect(queue?.spec.resourceGroups?.[0]?.coveredResources).toEqual([CREDITS, CARDS]);
    expect(quotas(response, true)).toEqual([
      [`${T4}-1d`, CREDITS, '1600k'],
      [`${T4}-1d`, CARDS, '1'],
      [`${T4}-4d`, CREDITS, '6400k'],
      [`${T4}-4d`, CARDS, '4'],
    ]);
    expect(queue?.spec.stopPolicy).toBe('None');
    expect(queue?.spec.admissionChecksStrategy).toEqual({ admissionChecks: [{ name: 'gpustack-node-devices' }] });
    expect(queue?.spec).not.toHaveProperty('cohort');
    const locals = localQueuesOf(response);
    expect(locals.map((q) => q.metadata.namespace)).toEqual(['default', 'kube-public', 'team-a', 'team-b']);
    for (const local of locals) {
      expect(local.metadata.name).toBe(T4_ENTRANCE);
      expect(local.spec.clusterQueue).toBe(T4);
      expect(local.metadata.annotations).toEqual({ 'schedule.gpustack.ai/cluster-queue': T4 });
    }
    const status = instanceTypeStatusOf(response);
    expect(status).toMatchObject({
      phase: 'Active',
      entrance: T4_ENTRANCE,
      flavors: [`${T4}-1d`, `${T4}-4d`],
      capacity: '5',
    });
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Synced' });
    expect(conditionOf(status, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('builds the CPU queue with core quotas and no admission check', async () => {
    const response = expectOk(await runScenario(C, 'builds-the-cpu-queue-with-core-quotas-and-no-admission-check'));
    expect(quotas(response)).toEqual([
      [`${GENERIC}-4c`, 'cpu', '8'],
      [`${GENERIC}-16c`, 'cpu', '16'],
      [`${GENERIC}-48c`, 'cpu', '48'],
    ]);
    expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toBeUndefined();
    expect(instanceTypeStatusOf(response)).toMatchObject({ phase: 'Pending', capacity: '72' });
  });

  it('holds the queue of an inactive instance type', async () => {
    const response = expectOk(await runScenario(C, 'holds-the-queue-of-an-inactive-instance-type'));
    expect(clusterQueuesOf(response)[0]?.spec.stopPolicy).toBe('Hold');
    expect(quotas(response)).toHaveLength(2);
    expect(quotas(response, true)).toHaveLength(4);
    expect(instanceTypeStatusOf(response).phase).toBe('Inactive');
  });

  it('holds the queue when no flavor matches', async () => {
    const response = expectOk(await runScenario(C, 'holds-the-queue-when-no-flavor-matches'));
    const [queue] = clusterQueuesOf(response);
    expect(queue?.spec.stopPolicy).toBe('Hold');
    expect(queue?.spec.resourceGroups).toBeUndefined();
    const status = instanceTypeStatusOf(response);
    expect(status).toMatchObject({ phase: 'Pending', flavors: [], capacity: '0' });
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'False', reason: 'NoFlavors' });
    expect(localQueuesOf(response)).toHaveLength(4);
  });

  it('lists no admission check until the check is active', async () => {
    const response = expectOk(await runScenario(C, 'lists-no-admission-check-until-the-check-is-active'));
    expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toBeUndefined();
    expect(clusterQueuesOf(response)[0]?.spec.stopPolicy).toBe('None');
  });

  it('ignores terminating flavors', async () => {
    const response = expectOk(await runScenario(C, 'ignores-terminating-flavors'));
    expect(quotas(response).map(([flavor]) => flavor)).toEqual([`${T4}-1d`, `${T4}-4d`]);
    expect(instanceTypeStatusOf(response).capacity).toBe('5');
  });

  it('puts local queues only in namespaces the selector matches', async () => {
    const response = expectOk(await runScenario(C, 'puts-local-queues-only-in-namespaces-the-selector-matches'));
    expect(localQueuesOf(response).map((q) => q.metadata.namespace)).toEqual(['team-a']);
  });

  it('refuses while the related flavors are missing', async () => {
    const error = expectRefusal(await runScenario(C, 'refuses-while-the-related-flavors-are-missing'));
    expect(error).toMatchObject({ code: 'MissingRelated', retryAfterSeconds: 30 });
    expect(error.message).toContain(KEYS.flavor);
  });

  it('refuses while the settings are invalid', async () => {
    const error = expectRefusal(await runScenario(C, 'refuses-while-the-settings-are-invalid'));
    expect(error).toMatchObject({ code: 'InvalidSettings', retryAfterSeconds: 30 });
    expect(error.message).toMatch(/^ChainSettings default: spec\.admissionCheck: /);
  });

  it('keeps the last good queues while the spec is invalid', async () => {
    const response = expectOk(await runScenario(C, 'keeps-the-last-good-queues-while-the-spec-is-invalid'));
    expect(response.children.map((c) => `${c.kind}/${c.metadata.namespace ?? ''}/${c.metadata.name}`)).toEqual([
      `ClusterQueue//${T4}`,
      `LocalQueue/default/${T4_ENTRANCE}`,
      `LocalQueue/kube-public/${T4_ENTRANCE}`,
      `LocalQueue/team-a/${T4_ENTRANCE}`,
      `LocalQueue/team-b/${T4_ENTRANCE}`,
    ]);
    expect(JSON.stringify(response.children)).not.toContain('linux/amd64');
    const status = instanceTypeStatusOf(response);
    expect(status).toMatchObject({ phase: 'Active', flavors: [`${T4}-1d`, `${T4}-4d`], capacity: '5' });
    expect(conditionOf(status, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InvalidSpec',
      message: expect.stringMatching(/^spec\.os: must be letters/),
      lastTransitionTime: NOW,
    });
  });

  it('finalize removes the queues and waits until they are gone', async () => {
    const response = expectOk(await runScenario(C, 'finalize-removes-the-queues-and-waits-until-they-are-gone'));
    expect(response).toMatchObject({ children: [], finalized: false, resyncAfterSeconds: 5 });
    const status = instanceTypeStatusOf(response);
    expect(status).toMatchObject({ phase: 'Terminating', flavors: [], capacity: '0' });
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'False', reason: 'Terminating' });
  });

  it('finalize releases the instance type once its queues are gone', async () => {
    const response = expectOk(await runScenario(C, 'finalize-releases-the-instance-type-once-its-queues-are-gone'));
    expect(response.children).toEqual([]);
    expect(response.finalized).toBe(true);
    expect(response.resyncAfterSeconds).toBeUndefined();
  });
});

describe('syncInstanceType with builders', () => {
  const t4 = () => makeInstanceType(T4).device('nvidia-tesla-t4');
  const t4Flavors = [
    makeResourceFlavor().device('nvidia-tesla-t4', 4).obj(),
    makeResourceFlavor().device('nvidia-tesla-t4', 1).nodes(3).obj(),
  ];
  const activeCheck = makeAdmissionCheck().active().obj();
  const defaults: Omit<InstanceTypeRequestInput, 'parent'> = {
    chain: makeSchedulingChain().obj(),
    flavors: t4Flavors,
    namespaces: [makeNamespace('default').obj()],
    checks: [activeCheck],
  };
  const sync = (input: Partial<InstanceTypeRequestInput> & Pick<InstanceTypeRequestInput, 'parent'>) =>
    runHook(C, instanceTypeRequest({ ...defaults, ...input }));

  it('sorts flavors by per-node count, then name', () => {
    const flavors = [
      makeResourceFlavor().device('nvidia-tesla-t4', 8).obj(),
      makeResourceFlavor().device('nvidia-tesla-t4', 2).nodes(4).obj(),
      makeResourceFlavor().device('nvidia-tesla-t4', 1).nodes(2).obj(),
      makeResourceFlavor().device('nvidia-tesla-t4', 2).arch('arm64').obj(),
    ];
    const response = expectOk(sync({ parent: t4().obj(), flavors }));
    expect(quotas(response)).toEqual([
      [`${T4}-1d`, CREDITS, '3200k'],
      [`${T4}-2d`, CREDITS, '12800k'],
      [`${T4}-8d`, CREDITS, '12800k'],
    ]);
  });

  it.each([
    { capacity: 1, quota: '1600k' },
    { capacity: 5, quota: '8M' },
    { capacity: 8, quota: '12800k' },
    { capacity: 10, quota: '16M' },
    { capacity: 625, quota: '1G' },
    { capacity: 999, quota: '1598400k' },
  ])('writes $capacity cards as the canonical credit quantity $quota', ({ capacity, quota }) => {
    const response = expectOk(
      sync({ parent: t4().obj(), flavors: [makeResourceFlavor().device('nvidia-tesla-t4', 1).nodes(capacity).obj()] }),
    );
    expect(quotas(response, true)).toEqual([
      [`${T4}-1d`, CREDITS, quota],
      [`${T4}-1d`, CARDS, String(capacity)],
    ]);
  });

  it.each([
    { cores: 224, nodes: 1, quota: '224' },
    { cores: 4, nodes: 250, quota: '1k' },
    { cores: 96, nodes: 3, quota: '288' },
  ])('writes $nodes × $cores cores as the canonical quantity $quota', ({ cores, nodes, quota }) => {
    const response = expectOk(
      sync({
        parent: makeInstanceType(GENERIC).obj(),
        flavors: [makeResourceFlavor().cpu('generic', cores).nodes(nodes).obj()],
      }),
    );
    expect(quotas(response)).toEqual([[`${GENERIC}-${cores}c`, 'cpu', quota]]);
  });

  it('keeps the 64 largest flavors by capacity and reports the rest as TooManyFlavors', () => {
    const flavors = Array.from({ length: 70 }, (_, i) =>
      makeResourceFlavor()
        .device('nvidia-tesla-t4', i + 1)
        .obj(),
    );
    const response = expectOk(sync({ parent: t4().obj(), flavors }));
    const kept = quotas(response).map(([name]) => name);
    expect(kept).toHaveLength(64);
    expect(kept[0]).toBe(`${T4}-7d`);
    expect(kept.at(-1)).toBe(`${T4}-70d`);
    const status = instanceTypeStatusOf(response);
    expect(status.flavors).toEqual(kept);
    expect(status.capacity).toBe(String(((7 + 70) * 64) / 2));
    const degraded = conditionOf(status, 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'TooManyFlavors' });
    expect(degraded.message).toContain('left out 6');
    expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'True' });
  });

  it('reports flavors with unreadable count or capacity labels and leaves them out', () => {
    const flavors = [
      ...t4Flavors,
      makeResourceFlavor('gpustack-nvidia-tesla-t4-linux-amd64-x').device('nvidia-tesla-t4', 2).capacity('many').obj(),
    ];
    const response = expectOk(sync({ parent: t4().obj(), flavors }));
    expect(quotas(response).map(([name]) => name)).toEqual([`${T4}-1d`, `${T4}-4d`]);
    expect(conditionOf(instanceTypeStatusOf(response), 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InvalidFlavorLabels',
    });
  });

  it.each([
    {
      name: 'the settings disable it',
      input: { chain: makeSchedulingChain().spec({ admissionCheck: 'Disabled' }).obj() },
    },
    { name: 'no AdmissionCheck is related', input: { checks: [] } },
    { name: 'the check is terminating', input: { checks: [makeAdmissionCheck().active().deleting().obj()] } },
    {
      name: 'the check is Active=False',
      input: {
        checks: [
          makeAdmissionCheck()
            .conditionsAs([{ type: 'Active', status: 'False', reason: 'Unknown', message: '' }])
            .obj(),
        ],
      },
    },
    { name: 'an Active check has another name', input: { checks: [makeAdmissionCheck('other-check').active().obj()] } },
  ])('lists no admission check when $name', ({ input }) => {
    const response = expectOk(sync({ parent: t4().obj(), ...input }));
    expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toBeUndefined();
  });

  it('never lists the admission check on a CPU queue', () => {
    const response = expectOk(
      sync({ parent: makeInstanceType(GENERIC).obj(), flavors: [makeResourceFlavor().cpu('generic', 16).obj()] }),
    );
    expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toBeUndefined();
  });

  it('skips kube-system, the system namespace and terminating namespaces by default', () => {
    const namespaces = [
      makeNamespace('default').obj(),
      makeNamespace('kube-system').obj(),
      makeNamespace('gpustack-system').obj(),
      makeNamespace('ops').obj(),
      makeNamespace('leaving').terminating().obj(),
      { ...makeNamespace('phase-only').obj(), status: { phase: 'Terminating' } },
    ];
    const response = expectOk(sync({ parent: t4().obj(), namespaces }));
    expect(localQueuesOf(response).map((q) => q.metadata.namespace)).toEqual(['default', 'ops']);
    const custom = expectOk(
      sync({ parent: t4().obj(), namespaces, chain: makeSchedulingChain().spec({ systemNamespace: 'ops' }).obj() }),
    );
    expect(localQueuesOf(custom).map((q) => q.metadata.namespace)).toEqual(['default', 'gpustack-system']);
  });

  it('lets the localQueueNamespaces selector decide alone (kube-system included when it matches)', () => {
    const namespaces = [
      makeNamespace('kube-system').label('queues', 'on').obj(),
      makeNamespace('team-a').label('queues', 'on').obj(),
      makeNamespace('team-b').obj(),
    ];
    const chain = makeSchedulingChain()
      .spec({ localQueueNamespaces: { matchExpressions: [{ key: 'queues', operator: 'In', values: ['on'] }] } })
      .obj();
    const response = expectOk(sync({ parent: t4().obj(), namespaces, chain }));
    expect(localQueuesOf(response).map((q) => q.metadata.namespace)).toEqual(['kube-system', 'team-a']);
  });

  it.each([
    {
      name: 'an acceleratable type without acceleratorGroup',
      parent: makeInstanceType('x').device('nvidia-tesla-t4').obj(),
      drop: true,
      reason: 'InvalidSpec',
    },
    {
      name: 'an acceleratorGroup of no known manufacturer',
      parent: makeInstanceType('x').device('acme-x1').obj(),
      drop: false,
      reason: 'UnknownManufacturer',
    },
  ])('holds the queue of $name', ({ parent, drop, reason }) => {
    const spec = { ...(parent.spec as Record<string, unknown>) };
    if (drop) delete spec['acceleratorGroup'];
    const response = expectOk(sync({ parent: { ...parent, spec } }));
    expect(clusterQueuesOf(response)[0]?.spec).toMatchObject({ stopPolicy: 'Hold' });
    expect(conditionOf(instanceTypeStatusOf(response), 'Ready')).toMatchObject({ status: 'False', reason });
  });

  describe('a spec that breaks the CRD rules (stored before the CRD had them)', () => {
    // The last good answer, observed as the API server stores it.
    const lastGood = () => expectOk(sync({ parent: t4().obj() })).children;
    const observed = (): Observed[] =>
      lastGood().map((child) => ({ ...child, metadata: { ...child.metadata, uid: `uid-${child.metadata.name}` } }));

    it.each([
      { name: 'an os with a non-ASCII letter', parent: t4().os('linuxé'), field: 'spec.os' },
      { name: 'an os with a slash', parent: t4().os('linux/amd64'), field: 'spec.os' },
      { name: 'an empty os', parent: t4().os(''), field: 'spec.os' },
      { name: 'an os of 65,536 characters', parent: t4().os('l'.repeat(65_536)), field: 'spec.os' },
      { name: 'an arch ending in "!"', parent: t4().arch('x86_64!'), field: 'spec.arch' },
      {
        name: 'an acceleratorGroup with a space',
        parent: t4().device('nvidia-tesla t4'),
        field: 'spec.acceleratorGroup',
      },
      {
        name: 'an acceleratorGroup past the key budget',
        parent: t4().device(`nvidia-${'x'.repeat(32)}`),
        field: 'spec.acceleratorGroup',
      },
      {
        name: 'a generalGroup with a colon',
        parent: makeInstanceType(GENERIC).cpu('amd:epyc'),
        field: 'spec.generalGroup',
      },
      { name: 'a displayName of 65 characters', parent: t4().displayName('d'.repeat(65)), field: 'spec.displayName' },
    ])(
      '$name: keeps the observed queues, emits no label from it, Ready=False InvalidSpec naming $field',
      ({ parent, field }) => {
        const response = expectOk(sync({ parent: parent.obj(), children: observed() }));

        expect(response.children).toEqual(lastGood());
        expect(response.children.map((c) => c.kind)).toEqual(['ClusterQueue', 'LocalQueue']);
        const ready = conditionOf(instanceTypeStatusOf(response), 'Ready');
        expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
        expect(ready.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}: `));
        expect(ready.message.length).toBeLessThan(1024);
      },
    );

    it('sends back nothing when nothing is observed yet (there is nothing to keep, and no invalid queue is built)', () => {
      const response = expectOk(sync({ parent: t4().os('linux/amd64').obj(), children: [] }));

      expect(response.children).toEqual([]);
      expect(conditionOf(instanceTypeStatusOf(response), 'Ready')).toMatchObject({ reason: 'InvalidSpec' });
    });

    it.each([
      { name: 'an os of 63 characters', parent: t4().os('l'.repeat(63)) },
      { name: 'an arch with "_" inside', parent: t4().arch('x86_64') },
      { name: 'an acceleratorGroup at the key budget', parent: t4().device(`nvidia-${'x'.repeat(31)}`) },
    ])('$name is valid', ({ parent }) => {
      const response = expectOk(sync({ parent: parent.obj(), children: observed() }));

      expect(conditionOf(instanceTypeStatusOf(response), 'Ready').reason).not.toBe('InvalidSpec');
    });
  });

  it('holds the queue of a manufacturer that the settings disable', () => {
    const response = expectOk(
      sync({
        parent: t4().obj(),
        chain: makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'amd' }] })
          .obj(),
      }),
    );
    expect(clusterQueuesOf(response)[0]?.spec).toMatchObject({ stopPolicy: 'Hold' });
    expect(conditionOf(instanceTypeStatusOf(response), 'Ready')).toMatchObject({ reason: 'UnknownManufacturer' });
  });

  describe('no ChainSettings yet (no SchedulingChain, or before its first sync)', () => {
    const namespaces = [
      makeNamespace('default').obj(),
      makeNamespace('kube-system').obj(),
      makeNamespace('gpustack-system').obj(),
      makeNamespace('team-a').label('queues', 'on').obj(),
      makeNamespace('leaving').terminating().obj(),
    ];
    const selective = makeSchedulingChain()
      .spec({ localQueueNamespaces: { matchExpressions: [{ key: 'queues', operator: 'In', values: ['on'] }] } })
      .obj();
    const namespacesOf = (response: Parameters<typeof localQueuesOf>[0]) =>
      localQueuesOf(response).map((q) => q.metadata.namespace);

    it('builds the queues by the defaults', () => {
      const response = expectOk(sync({ parent: t4().obj(), chain: null, namespaces }));
      expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toEqual({
        admissionChecks: [{ name: 'gpustack-node-devices' }],
      });
      expect(quotas(response)).toHaveLength(2);
      expect(namespacesOf(response)).toEqual(['default', 'team-a']);
    });

    it('keeps every observed LocalQueue the defaults would drop (kube-system, the system namespace)', () => {
      const settled = expectOk(sync({ parent: t4().obj(), chain: selective, namespaces }));
      expect(namespacesOf(settled)).toEqual(['team-a']);
      const everywhere = [
        makeLocalQueue(T4_ENTRANCE, 'kube-system', T4),
        makeLocalQueue(T4_ENTRANCE, 'gpustack-system', T4),
        makeLocalQueue(T4_ENTRANCE, 'team-a', T4),
      ];
      const response = expectOk(sync({ parent: t4().obj(), chain: null, namespaces, children: everywhere }));
      expect(namespacesOf(response)).toEqual(['default', 'gpustack-system', 'kube-system', 'team-a']);
      // Once written, the chain's selector decides alone again.
      const written = expectOk(sync({ parent: t4().obj(), chain: selective, namespaces, children: everywhere }));
      expect(namespacesOf(written)).toEqual(['team-a']);
    });

    it('drops no observed LocalQueue of a namespace that is terminating', () => {
      const children = [makeLocalQueue(T4_ENTRANCE, 'leaving', T4)];
      const response = expectOk(sync({ parent: t4().obj(), chain: null, namespaces, children }));
      expect(namespacesOf(response)).toEqual(['default', 'team-a']);
    });
  });

  it('goes on with the settings the ChainSettings holds, whatever the chain says now', () => {
    // The chain writes only valid settings: its invalid spec leaves the last good ChainSettings.
    const response = expectOk(
      sync({ parent: t4().obj(), chain: makeSchedulingChain().spec({ admissionCheck: 'Disabled' }).obj() }),
    );
    expect(clusterQueuesOf(response)[0]?.spec.admissionChecksStrategy).toBeUndefined();
  });

  it.each([KEYS.flavor, KEYS.namespace])('refuses with MissingRelated while %s is not related', (key) => {
    const error = expectRefusal(sync({ parent: t4().obj(), omitRelated: [key] }));
    expect(error).toMatchObject({ code: 'MissingRelated', retryAfterSeconds: 30 });
  });

  it('refuses with InvalidSettings for a ChainSettings spec with an unknown field (edited by hand)', () => {
    const error = expectRefusal(
      sync({ parent: t4().obj(), chain: makeSchedulingChain().spec({ queueEverything: true }).obj() }),
    );
    expect(error.code).toBe('InvalidSettings');
    expect(error.message).toMatch(/^ChainSettings default: /);
  });

  it('finalizes on a deletionTimestamp even when the request does not say finalizing', () => {
    const children: Observed[] = [makeClusterQueue(T4).active().obj(), makeLocalQueue(T4_ENTRANCE, 'default', T4)];
    const response = expectOk(sync({ parent: t4().deleting().obj(), children }));
    expect(response).toMatchObject({ children: [], finalized: false, resyncAfterSeconds: 5 });
    const onlyLocal = expectOk(
      sync({ parent: t4().deleting().obj(), children: [makeLocalQueue(T4_ENTRANCE, 'default', T4)], finalizing: true }),
    );
    expect(onlyLocal.finalized).toBe(false);
    const done = expectOk(sync({ parent: t4().deleting().obj(), children: [], finalizing: true }));
    expect(done.finalized).toBe(true);
  });

  it('finalizes without waiting for related objects (the chain may be gone already)', () => {
    const response = expectOk(
      sync({
        parent: makeInstanceType(T4).device('nvidia-tesla-t4').obj(),
        finalizing: true,
        omitRelated: [KEYS.flavor, KEYS.namespace, KEYS.chainSettings],
      }),
    );
    expect(response).toMatchObject({ children: [], finalized: true });
  });

  it.each([
    { name: 'Active=True', queue: makeClusterQueue(T4).active().obj(), phase: 'Active' },
    { name: 'Active=False', queue: makeClusterQueue(T4).inactive().obj(), phase: 'Pending' },
    { name: 'not observed yet', queue: undefined, phase: 'Pending' },
  ])('reports phase $phase when the observed ClusterQueue is $name', ({ queue, phase }) => {
    const response = expectOk(sync({ parent: t4().obj(), children: queue ? [queue] : [] }));
    expect(instanceTypeStatusOf(response).phase).toBe(phase);
  });

  it('keeps lastTransitionTime of unchanged conditions', () => {
    const parent = makeInstanceType(T4)
      .device('nvidia-tesla-t4')
      .previousConditions([
        {
          type: 'Ready',
          status: 'True',
          reason: 'Synced',
          message: '2 flavors, capacity 7 cards',
          lastTransitionTime: EARLIER,
        },
        { type: 'Degraded', status: 'True', reason: 'TooManyFlavors', message: 'old', lastTransitionTime: EARLIER },
      ])
      .obj();
    const status = instanceTypeStatusOf(expectOk(sync({ parent })));
    expect(conditionOf(status, 'Ready')).toMatchObject({
      message: '2 flavors, capacity 7 cards',
      lastTransitionTime: EARLIER,
    });
    expect(conditionOf(status, 'Degraded')).toMatchObject({ status: 'False', lastTransitionTime: NOW });
  });

  it('relates the ChainSettings (not the chain), node flavors, namespaces, our check and Topologies through customize', () => {
    const related = customizeInstanceType({ parent: t4().obj() }).relatedResources;
    expect(related[0]).toEqual({
      apiVersion: 'worker.gpustack.ai/v1alpha1',
      resource: 'chainsettings',
      names: ['default'],
    });
    expect(related.map((r) => r.resource)).toEqual([
      'chainsettings',
      'resourceflavors',
      'namespaces',
      'admissionchecks',
      'topologies',
    ]);
    expect(related[4]).toMatchObject({ labelSelector: { matchLabels: { 'resource.gpustack.ai/type': 'topology' } } });
  });
});

describe("syncInstanceType: a cordoned card leaves its flavor's quota", () => {
  it("takes a cordoned card off its flavor's quota", async () => {
    const response = expectOk(await runScenario(C, 'takes-a-cordoned-card-off-its-flavors-quota'));
    // One card of the 4d flavor cordoned: 3 cards and 3 × 1600k credits; the 1d flavor untouched.
    expect(quotas(response, true)).toEqual([
      [`${T4}-1d`, CREDITS, '1600k'],
      [`${T4}-1d`, CARDS, '1'],
      [`${T4}-4d`, CREDITS, '4800k'],
      [`${T4}-4d`, CARDS, '3'],
    ]);
    const status = instanceTypeStatusOf(response);
    expect(status.capacity).toBe('4');
    // The per-flavor part stays in the annotation; status.devices has the counts.
    expect(status.devices).toEqual({ published: 5, allocated: 1, shared: 0, free: 3, cordoned: 1, unhealthy: 0 });
  });
});

describe('syncInstanceType: the ledger count the admission checker annotated', () => {
  const defaults: Omit<InstanceTypeRequestInput, 'parent'> = {
    chain: makeSchedulingChain().obj(),
    flavors: [makeResourceFlavor().device('nvidia-tesla-t4', 4).obj()],
    namespaces: [makeNamespace('default').obj()],
    checks: [makeAdmissionCheck().active().obj()],
  };
  const annotated = (parent: Observed, text: string): Observed => ({
    ...parent,
    metadata: { ...parent.metadata, annotations: { [DEVICES_ANNOTATION]: text } },
  });
  const statusWith = (parent: Observed) =>
    instanceTypeStatusOf(expectOk(runHook(C, instanceTypeRequest({ ...defaults, parent }))));

  it('copies the count into status.devices', () => {
    const parent = annotated(
      makeInstanceType(T4).device('nvidia-tesla-t4').obj(),
      '{"published":4,"allocated":1,"shared":1,"free":2}',
    );
    expect(statusWith(parent).devices).toEqual({ published: 4, allocated: 1, shared: 1, free: 2 });
  });

  it('leaves status.devices out without the annotation, for one that does not read, and for a CPU pool', () => {
    expect(statusWith(makeInstanceType(T4).device('nvidia-tesla-t4').obj())).not.toHaveProperty('devices');
    for (const text of ['{"published":-1,"allocated":0,"shared":0,"free":0}', 'not json', '{"published":4}'])
      expect(statusWith(annotated(makeInstanceType(T4).device('nvidia-tesla-t4').obj(), text))).not.toHaveProperty(
        'devices',
      );
    const cpu = annotated(makeInstanceType(GENERIC).obj(), '{"published":4,"allocated":1,"shared":1,"free":2}');
    expect(statusWith(cpu)).not.toHaveProperty('devices');
  });
});
