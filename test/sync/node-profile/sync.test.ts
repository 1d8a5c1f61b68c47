import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DecoratorSyncResponse, NodeProfileOutput } from '../../../src/k8s/index.js';
import { extractNodeFacts } from '../../../src/nodefeature/index.js';
import { customizeNodeProfile } from '../../../src/sync/index.js';
import { makeSchedulingChain } from '../../builders/gpustack.js';
import { makeNode } from '../../builders/node.js';
import { nodeProfileRequest, objectMap } from '../../builders/request.js';
import { runHook, runScenario } from '../../support/hooks.js';
import { expectOk, expectRefusal } from '../../support/responses.js';

const C = 'node-profile';
const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
const MANAGED = 'gpustack.ai/managed';
const CPU_ONLY = 'feature.gpustack.ai/cpu-only';
const H100 = `${A}nvidia-h100-80gb-hbm3`;
const PROFILED = 'gpustack.ai/profiled';

/** The keys the decorator owns (and so may set or remove): docs/architecture.md#labels. */
function isOwned(key: string): boolean {
  return (
    key === MANAGED ||
    key === PROFILED ||
    key === CPU_ONLY ||
    key.startsWith(G) ||
    (key.startsWith(A) && key.includes('.sliced.'))
  );
}

describe('syncNodeProfile scenarios', () => {
  it('labels a new H100 node', async () => {
    const { labels } = expectOk(await runScenario(C, 'labels-a-new-h100-node'));
    expect(labels).toEqual({
      [MANAGED]: 'true',
      [PROFILED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      [`${H100}.sliced.units`]: '1600000',
      [`${H100}.sliced.cores-percentage`]: '12800',
      [`${H100}.sliced.memory-percentage`]: '100',
      [`${H100}.sliced.memory-mib`]: '81920',
    });
  });

  it('removes stale owned labels and leaves foreign ones', async () => {
    const { labels = {} } = expectOk(await runScenario(C, 'removes-stale-owned-labels-and-leaves-foreign-ones'));
    const removed = Object.keys(labels)
      .filter((k) => labels[k] === null)
      .sort();
    expect(removed).toEqual([
      `${A}nvidia-a10g.sliced.cores-percentage`,
      `${A}nvidia-a10g.sliced.memory-mib`,
      `${A}nvidia-a10g.sliced.memory-percentage`,
      `${A}nvidia-a10g.sliced.units`,
      `${G}intel`,
      `${G}intel-xeon-platinum-8259cl`,
      `${G}intel-xeon-platinum-8259cl.count`,
    ]);
    expect(labels).toMatchObject({
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '48',
      [`${A}nvidia-tesla-t4.sliced.units`]: '1600000',
    });
    expect(labels).not.toHaveProperty(['example.com/team']);
    expect(labels).not.toHaveProperty([`${A}nvidia-l4.note`]);
    expect(labels).not.toHaveProperty([MANAGED]);
    for (const key of Object.keys(labels)) expect(isOwned(key), key).toBe(true);
  });

  it('never overwrites an admin managed value', async () => {
    const { labels } = expectOk(await runScenario(C, 'never-overwrites-an-admin-managed-value'));
    expect(labels).toEqual({ [`${G}generic`]: null, [`${G}generic.count`]: null });
  });

  it('keys the CPU by model and marks CPU-only nodes', async () => {
    const { labels } = expectOk(await runScenario(C, 'keys-the-cpu-by-model-and-marks-cpu-only-nodes'));
    expect(labels).toEqual({
      [MANAGED]: 'true',
      [PROFILED]: 'true',
      [`${G}amd-epyc-7763`]: 'true',
      [`${G}amd`]: 'true',
      [`${G}amd-epyc-7763.count`]: '64',
      [CPU_ONLY]: 'true',
    });
  });

  it('derives device labels from GPU Feature Discovery on a node our agent does not run on', async () => {
    const response = expectOk(await runScenario(C, 'derives-device-labels-from-gpu-feature-discovery'));
    const derived = {
      [`${A}nvidia`]: 'true',
      [`${A}nvidia.driver-version`]: '570.124.06',
      [`${A}nvidia.runtime-version`]: '12.8',
      [H100]: 'true',
      [`${H100}.product`]: 'NVIDIA-H100-80GB-HBM3',
      [`${H100}.memory`]: '80Gi',
      [`${H100}.cores`]: '0',
      [`${H100}.count`]: '8',
      [`${H100}.family`]: 'hopper',
      [`${H100}.comcap`]: '9.0',
    };
    // the same aKey and labels our agent would publish, plus the usual capacity labels
    expect(response.labels).toEqual({
      [MANAGED]: 'true',
      [PROFILED]: 'true',
      [`${G}generic`]: 'true',
      [`${G}generic.count`]: '224',
      ...derived,
      [`${H100}.sliced.units`]: '1600000',
      [`${H100}.sliced.cores-percentage`]: '12800',
      [`${H100}.sliced.memory-percentage`]: '100',
      [`${H100}.sliced.memory-mib`]: '81920',
    });
    expect(JSON.parse(response.annotations?.['feature.gpustack.ai/derived-device-labels'] ?? '{}')).toEqual(derived);
  });

  it('hands the device labels back to our agent when it starts, removing only its own', async () => {
    const response = expectOk(await runScenario(C, 'hands-the-device-labels-back-to-the-agent-when-it-starts'));
    expect(Object.entries(response.labels ?? {}).filter(([, v]) => v === null)).toEqual([
      [`${A}nvidia.runtime-version`, null],
    ]);
    for (const key of Object.keys(response.labels ?? {}))
      expect(isOwned(key) || key.endsWith('.runtime-version'), key).toBe(true);
    expect(response.annotations).toEqual({ 'feature.gpustack.ai/derived-device-labels': null });
  });

  it('refuses while the settings are invalid', async () => {
    const error = expectRefusal(await runScenario(C, 'refuses-while-the-settings-are-invalid'));
    expect(error).toMatchObject({ code: 'InvalidSettings', retryAfterSeconds: 30 });
    expect(error.message).toContain('spec.nodeManagement');
  });

  it('leaves new nodes unmanaged under manual management', async () => {
    expect(expectOk(await runScenario(C, 'leaves-new-nodes-unmanaged-under-manual-management'))).toEqual({
      labels: {},
      attachments: [],
    });
  });
});

describe('syncNodeProfile with builders', () => {
  const labelsOf = (raw: unknown) => expectOk(runHook(C, raw)).labels ?? {};

  it('profiles a node an admin marked managed under manual management', () => {
    const node = makeNode('gpu-1').h100(8).cpu(224).managed('true').obj();
    const labels = labelsOf(nodeProfileRequest(node, makeSchedulingChain().spec({ nodeManagement: 'Manual' }).obj()));
    expect(labels).toMatchObject({ [`${G}generic.count`]: '224', [`${H100}.sliced.units`]: '1600000' });
    expect(labels).not.toHaveProperty([MANAGED]);
  });

  it.each([
    { cpu: '3500m', count: '4' },
    { cpu: '500m', count: '1' },
    { cpu: '224', count: '224' },
    { cpu: 96, count: '96' },
  ])('counts a CPU capacity of $cpu as $count cores (rounded up)', ({ cpu, count }) => {
    const node = makeNode('n').obj();
    expect(labelsOf(nodeProfileRequest({ ...node, status: { capacity: { cpu } } }))[`${G}generic.count`]).toBe(count);
  });

  it('writes no general count for a node without CPU capacity, and drops a stale one', () => {
    const node = makeNode('n').profiled().obj();
    const labels = labelsOf(nodeProfileRequest({ ...node, status: {} }));
    expect(labels).toMatchObject({ [`${G}generic`]: 'true', [`${G}generic.count`]: null });
  });

  it.each([
    { vendor: 'nvidia', device: 'h100', cores: '12800' },
    { vendor: 'ascend', device: 'ascend910b2', cores: '6300' },
    { vendor: 'amd', device: 'mi300x', cores: '100' },
  ] as const)('writes $cores cores-percentage per $vendor card', ({ device, cores }) => {
    const labels = labelsOf(nodeProfileRequest(makeNode('n')[device](8).obj()));
    const key = Object.keys(labels).find((k) => k.endsWith('.sliced.cores-percentage'));
    expect(key && labels[key]).toBe(cores);
  });

  it('writes no sliced labels for a manufacturer the settings disable, and removes old ones', () => {
    const node = makeNode('n').h100(8).profiled().obj();
    const labels = labelsOf(
      nodeProfileRequest(
        node,
        makeSchedulingChain()
          .spec({ manufacturers: [{ name: 'amd' }] })
          .obj(),
      ),
    );
    expect(labels[`${H100}.sliced.units`]).toBeNull();
  });

  it('never mentions a foreign label and never changes an existing managed value (property)', () => {
    const foreignKey = fc.oneof(
      fc.stringMatching(/^[a-z]{1,8}\.example\.com\/[a-z0-9-]{1,12}$/),
      fc.stringMatching(/^acceleratable\.feature\.gpustack\.ai\/nvidia-h100-80gb-hbm3\.(note|owner|zone)$/),
      fc.stringMatching(/^feature\.node\.kubernetes\.io\/[a-z0-9.-]{1,20}$/),
    );
    fc.assert(
      fc.property(
        fc.dictionary(foreignKey, fc.stringMatching(/^[a-z0-9]{0,10}$/), { maxKeys: 6 }),
        fc.option(fc.constantFrom('true', 'false', 'True', ''), { nil: undefined }),
        (foreign, managed) => {
          let node = makeNode('n').h100(8).cpu(224);
          for (const [key, value] of Object.entries(foreign)) node = node.label(key, value);
          if (managed !== undefined) node = node.managed(managed);
          const labels = labelsOf(nodeProfileRequest(node.obj()));
          for (const key of Object.keys(foreign)) expect(labels).not.toHaveProperty([key]);
          if (managed !== undefined) expect(labels).not.toHaveProperty([MANAGED]);
          for (const key of Object.keys(labels)) expect(isOwned(key), key).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('relates the ChainSettings default, not the SchedulingChain whose status moves with every Node', () => {
    expect(customizeNodeProfile({ parent: makeNode('n').obj() })).toEqual({
      relatedResources: [{ apiVersion: 'worker.gpustack.ai/v1alpha1', resource: 'chainsettings', names: ['default'] }],
    });
  });

  it('without a ChainSettings (no chain, or before its first sync) manages no new node, but profiles managed ones', () => {
    const fresh = labelsOf(nodeProfileRequest(makeNode('new').h100(8).cpu(224).obj(), null));
    expect(fresh).toEqual({});
    const admin = labelsOf(nodeProfileRequest(makeNode('gpu-1').h100(8).cpu(224).managed('true').obj(), null));
    expect(admin).toMatchObject({ [`${G}generic.count`]: '224', [`${H100}.sliced.units`]: '1600000' });
    expect(admin).not.toHaveProperty([MANAGED]);
    const unmanaged = labelsOf(nodeProfileRequest(makeNode('off').h100(8).cpu(224).managed('false').obj(), null));
    expect(unmanaged).toEqual({});
  });

  it('reads the ChainSettings only: a related SchedulingChain is not its settings', () => {
    const node = makeNode('new').h100(8).cpu(224).obj();
    const chain = makeSchedulingChain().spec({ nodeManagement: 'Automatic' }).obj();
    const raw = { ...(nodeProfileRequest(node, null) as object), related: objectMap([chain]) };
    expect(labelsOf(raw)).toEqual({});
  });
});

describe('syncNodeProfile writes the NodeProfile the chain reads', () => {
  const responseOf = (raw: unknown): DecoratorSyncResponse => expectOk(runHook(C, raw));
  const profileOf = (response: DecoratorSyncResponse): NodeProfileOutput => {
    expect(response.attachments).toHaveLength(1);
    return response.attachments?.[0] as NodeProfileOutput;
  };
  const node = makeNode('gpu-1')
    .h100(8)
    .cpu(224)
    .label('feature.node.kubernetes.io/pci-10de.present', 'true')
    .label('nvidia.com/gpu.count', '8')
    .label('example.com/team', 'ml')
    .obj();

  it('holds only what the chain reads, as the Node is after this sync, and marks a new Node at once', () => {
    const response = responseOf(nodeProfileRequest(node));
    const profile = profileOf(response);
    expect(profile.metadata.name).toBe('gpu-1');
    expect(profile.spec.cpuCapacity).toBe('224');
    // node-profile's own labels of this very sync are in it (managed, the general key, sliced labels)…
    expect(profile.spec.labels).toMatchObject({
      [MANAGED]: 'true',
      [`${G}generic.count`]: '224',
      [`${H100}.count`]: '8',
    });
    // …and nothing the chain does not read: NFD, GPU Feature Discovery, the admin's, node-profile's `.sliced.*`.
    expect(Object.keys(profile.spec.labels).filter((k) => k.includes('.sliced.'))).toEqual([]);
    const foreign = Object.keys(profile.spec.labels).filter(
      (k) => !/(^|\.)gpustack\.ai\/|^kubernetes\.io\/(os|arch)$/.test(k),
    );
    expect(foreign).toEqual([]);
    // The chain reads the same facts of the profile as of the labelled Node.
    const labelled = { ...node.metadata.labels };
    for (const [k, v] of Object.entries(response.labels ?? {}))
      if (v === null) delete labelled[k];
      else labelled[k] = v;
    const enabled = new Set(['nvidia'] as const);
    expect(extractNodeFacts({ name: 'gpu-1', ...profile.spec }, enabled)).toEqual(
      extractNodeFacts({ name: 'gpu-1', labels: labelled, cpuCapacity: '224' }, enabled),
    );
    // A Node that was not managed has never been read whole by the chain: marked in the same sync.
    expect(response.labels?.[PROFILED]).toBe('true');
  });

  it('marks a managed Node the chain reads whole only once its NodeProfile exists (upgrade, admin label)', () => {
    const readWhole = makeNode('gpu-1').h100(8).cpu(224).managed('true').obj();
    const first = responseOf(nodeProfileRequest(readWhole));
    expect(first.labels ?? {}).not.toHaveProperty([PROFILED]);
    const second = responseOf(nodeProfileRequest(readWhole, undefined, profileOf(first)));
    expect(second.labels?.[PROFILED]).toBe('true');
    expect(profileOf(second).spec).toEqual(profileOf(first).spec);
    // The profile joins its shard with the mark: before, the chain reads it itself (and the Node whole, once).
    expect(profileOf(first).metadata.labels).not.toHaveProperty(['gpustack.ai/node-shard']);
    expect(profileOf(second).metadata.labels?.['gpustack.ai/node-shard']).toMatch(/^([0-9]|[12][0-9]|3[01])$/);
  });

  it('keeps the profile and the mark the same on later syncs, and the mark does not enter the profile', () => {
    const first = profileOf(responseOf(nodeProfileRequest(node)));
    const marked = makeNode('gpu-1').h100(8).cpu(224).label(PROFILED, 'true').obj();
    const later = responseOf(nodeProfileRequest(marked, undefined, first));
    expect(profileOf(later)).toEqual(first);
    expect(later.labels?.[PROFILED]).toBe('true');
    expect(first.spec.labels).not.toHaveProperty([PROFILED]);
  });

  it('writes the NodeProfile of a marked Node again when it is gone, keeping the mark', () => {
    const marked = makeNode('gpu-1').h100(8).cpu(224).managed('true').label(PROFILED, 'true').obj();
    const response = responseOf(nodeProfileRequest(marked));
    expect(response.labels?.[PROFILED]).toBe('true');
    expect(profileOf(response).metadata.name).toBe('gpu-1');
  });

  it('writes no NodeProfile for an unmanaged Node (deleting one left over) and drops its mark', () => {
    const off = makeNode('off').h100(8).cpu(224).managed('false').label(PROFILED, 'true').obj();
    const response = responseOf(nodeProfileRequest(off, undefined, { kind: 'NodeProfile', metadata: { name: 'off' } }));
    expect(response.attachments).toEqual([]);
    expect(response.labels?.[PROFILED]).toBeNull();
    const manual = makeNode('new').h100(8).cpu(224).obj();
    const unmanaged = responseOf(
      nodeProfileRequest(manual, makeSchedulingChain().spec({ nodeManagement: 'Manual' }).obj()),
    );
    expect(unmanaged.attachments).toEqual([]);
    expect(unmanaged.labels ?? {}).not.toHaveProperty([PROFILED]);
  });
});
