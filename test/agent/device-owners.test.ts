import { describe, expect, it } from 'vitest';
import {
  apiOwnerDecider,
  createAgentState,
  runCycle,
  type Labels,
  type Publisher,
  type SlicePublisher,
} from '../../src/agent/index.js';
import { ApiError, type KubeApi } from '../../src/api-client/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import { groupResource } from './fake-slice-api.js';
import { detection, h100, mi300x, recordingLogger } from './support.js';

const NODE = 'gpu-a';

/** The API as the owner source reads it: one Node, the ChainSettings, claims and this node's Pods. */
function ownerApi() {
  const self = {
    allocatable: {} as Record<string, string>,
    chainSettings: undefined as unknown,
    chainSettingsError: undefined as ApiError | undefined,
    claims: [] as unknown[],
    pods: [] as unknown[],
    calls: [] as string[],
  };
  const api: KubeApi = {
    get: (path) => {
      const [, resource] = groupResource(path);
      self.calls.push(`get ${resource}`);
      if (resource === 'nodes')
        return Promise.resolve({ metadata: { name: NODE }, status: { allocatable: self.allocatable } });
      if (resource === 'chainsettings') {
        if (self.chainSettingsError) return Promise.reject(self.chainSettingsError);
        return Promise.resolve(self.chainSettings);
      }
      return Promise.resolve(undefined);
    },
    listEach: (path, onItem) => {
      const [, resource] = groupResource(path);
      self.calls.push(
        `list ${resource}${path.includes('fieldSelector') ? ` ${decodeURIComponent(path.split('?')[1] ?? '')}` : ''}`,
      );
      for (const item of resource === 'resourceclaims' ? self.claims : resource === 'pods' ? self.pods : [])
        onItem(item);
      return Promise.resolve('1');
    },
    patch: () => Promise.reject(new Error('not expected')),
    create: () => Promise.reject(new Error('not expected')),
    replace: () => Promise.reject(new Error('not expected')),
    remove: () => Promise.reject(new Error('not expected')),
    watch: () => Promise.reject(new Error('not expected')),
  };
  return Object.assign(self, { api });
}

function heldClaim(pool = NODE): unknown {
  return {
    status: { allocation: { devices: { results: [{ driver: 'nvidia.gpustack.ai', pool, device: 'card-0' }] } } },
  };
}

describe('apiOwnerDecider', () => {
  it('DRA owns the cards of a node that advertises nothing; the device plugin those of a node that advertises <base>', async () => {
    const fake = ownerApi();
    const source = apiOwnerDecider(fake.api, NODE);
    expect((await source.decide(['nvidia'])).get('nvidia')?.owner).toBe('DRA');
    fake.allocatable = { 'nvidia.com/gpu': '4' };
    const decision = (await source.decide(['nvidia', 'amd'])).get('nvidia');
    expect(decision).toEqual({
      owner: 'DevicePlugin',
      wanted: 'DevicePlugin',
      setting: 'Auto',
      resource: 'nvidia.com/gpu',
      reason: 'the node advertises nvidia.com/gpu: 4 (a device plugin serves it)',
    });
  });

  it('asks for the holders only while a change of owner is due, and waits while claims hold cards', async () => {
    const fake = ownerApi();
    const source = apiOwnerDecider(fake.api, NODE);
    await source.decide(['nvidia']);
    // After a start nothing is remembered: this node's Pods are asked once.
    expect(fake.calls).toEqual([`get nodes`, `get chainsettings`, `list pods fieldSelector=spec.nodeName=${NODE}`]);
    fake.calls.length = 0;
    await source.decide(['nvidia']);
    expect(fake.calls).toEqual([`get nodes`, `get chainsettings`]);

    // A device plugin appears while a claim holds a card: DRA stays the owner, and says why.
    fake.allocatable = { 'nvidia.com/gpu': '4' };
    fake.claims = [heldClaim(), heldClaim('gpu-b')];
    fake.calls.length = 0;
    const waiting = (await source.decide(['nvidia'])).get('nvidia');
    expect(waiting?.owner).toBe('DRA');
    expect(waiting?.pending).toMatch(/^1 ResourceClaim holds cards here/);
    expect(fake.calls).toContain('list resourceclaims');

    // Released: the device plugin takes over, and the claims are no longer listed after that.
    fake.claims = [heldClaim('gpu-b')];
    expect((await source.decide(['nvidia'])).get('nvidia')?.owner).toBe('DevicePlugin');
    fake.calls.length = 0;
    await source.decide(['nvidia']);
    expect(fake.calls).toEqual([`get nodes`, `get chainsettings`]);

    // The device plugin goes while one of its Pods holds a card: DRA waits for the Pod.
    fake.allocatable = { 'nvidia.com/gpu': '0' };
    fake.pods = [
      {
        metadata: { name: 'p' },
        spec: { containers: [{ resources: { limits: { 'nvidia.com/gpu': '1' } } }] },
        status: {},
      },
    ];
    const back = (await source.decide(['nvidia'])).get('nvidia');
    expect(back?.owner).toBe('DevicePlugin');
    expect(back?.pending).toMatch(/^1 Pod holds cards of the device plugin here/);
    fake.pods = [];
    expect((await source.decide(['nvidia'])).get('nvidia')?.owner).toBe('DRA');
  });

  it("follows the settings' override and device resource, and takes Auto when the ChainSettings cannot be read", async () => {
    const fake = ownerApi();
    const problems: string[] = [];
    const source = apiOwnerDecider(fake.api, NODE, (message) => problems.push(message));
    fake.allocatable = { 'nvidia.com/gpu': '4', 'example.com/mi': '2' };
    fake.chainSettings = {
      spec: {
        deviceOwners: { nvidia: 'DRA' },
        manufacturers: [{ name: 'nvidia' }, { name: 'amd', resourceName: 'example.com/mi' }],
      },
    };
    const owners = await source.decide(['nvidia', 'amd']);
    expect(owners.get('nvidia')).toMatchObject({
      owner: 'DRA',
      setting: 'DRA',
      reason: 'deviceOwners sets DRA in the settings',
    });
    expect(owners.get('amd')).toMatchObject({ owner: 'DevicePlugin', resource: 'example.com/mi' });

    // Invalid settings: the last good ones stay, reported once.
    fake.chainSettings = { spec: { deviceOwners: { nvidia: 'Sometimes' } } };
    expect((await source.decide(['nvidia'])).get('nvidia')?.owner).toBe('DRA');
    await source.decide(['nvidia']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/spec\.deviceOwners\.nvidia.*last good settings/);

    // No RBAC for the ChainSettings on a fresh agent: every manufacturer Auto.
    const denied = ownerApi();
    denied.allocatable = { 'nvidia.com/gpu': '4' };
    denied.chainSettingsError = new ApiError(
      403,
      'GET',
      '/apis/worker.gpustack.ai/v1alpha1/chainsettings/default',
      'forbidden',
    );
    const seen: string[] = [];
    const fresh = apiOwnerDecider(denied.api, NODE, (message) => seen.push(message));
    expect((await fresh.decide(['nvidia'])).get('nvidia')?.owner).toBe('DevicePlugin');
    expect(seen).toEqual(['ChainSettings default not readable (403); deviceOwners taken as Auto']);
  });
});

function labelPublisher(): Publisher {
  let last: Labels | undefined;
  return {
    mode: 'node-labels',
    read: () => Promise.resolve(last),
    write: (labels) => {
      last = labels;
      return Promise.resolve();
    },
  };
}

function slicePublisher(): SlicePublisher & { calls: { cards: readonly SliceCard[]; keep: ReadonlySet<string> }[] } {
  const calls: { cards: readonly SliceCard[]; keep: ReadonlySet<string> }[] = [];
  return {
    calls,
    publish(cards, keep) {
      calls.push({ cards, keep });
      return Promise.resolve({ result: 'unchanged', written: 0, deleted: 0, problems: [] });
    },
  };
}

describe('the agent cycle publishes only the cards DRA owns', () => {
  it('withholds a manufacturer the device plugin owns, taints one being handed over, and logs each change once', async () => {
    const fake = ownerApi();
    const slices = slicePublisher();
    const logger = recordingLogger();
    const state = createAgentState();
    const options = {
      detect: () => Promise.resolve(detection([h100(0), h100(1), mi300x(0)], { ascend: 'InitFailed' })),
      publisher: labelPublisher(),
      slicePublisher: slices,
      ownerDecider: apiOwnerDecider(fake.api, NODE),
      intervalMs: 60_000,
      logger,
    };
    await runCycle(state, options);
    expect(slices.calls.at(-1)?.cards.map((c) => `${c.manufacturer}-${c.index}`)).toEqual([
      'nvidia-0',
      'nvidia-1',
      'amd-0',
    ]);

    // The NVIDIA device plugin starts while a claim holds card 0: still published, tainted.
    fake.allocatable = { 'nvidia.com/gpu': '2' };
    fake.claims = [heldClaim()];
    await runCycle(state, options);
    expect(slices.calls.at(-1)?.cards.map((c) => [`${c.manufacturer}-${c.index}`, c.handover ?? false])).toEqual([
      ['nvidia-0', true],
      ['nvidia-1', true],
      ['amd-0', false],
    ]);
    await runCycle(state, options);
    const waits = logger.entries.filter((e) => e.message === 'device owner change waits');
    expect(waits).toHaveLength(1);
    expect(waits[0]?.fields).toMatchObject({ manufacturer: 'nvidia', owner: 'DRA', wanted: 'DevicePlugin' });

    // Released: NVIDIA's cards leave the slices (a failed detection's pool is not kept for it either).
    fake.claims = [];
    fake.allocatable = { 'nvidia.com/gpu': '2', 'huawei.com/npu': '8' };
    await runCycle(state, options);
    expect(slices.calls.at(-1)?.cards.map((c) => `${c.manufacturer}-${c.index}`)).toEqual(['amd-0']);
    expect([...(slices.calls.at(-1)?.keep ?? [])]).toEqual([]);
    expect(state.ownerDecisions?.get('nvidia')?.owner).toBe('DevicePlugin');
    expect(state.ownerDecisions?.get('ascend')?.owner).toBe('DevicePlugin');
    const changes = logger.entries.filter((e) => e.message === 'device owner');
    expect(
      changes.map((e) => [(e.fields as { manufacturer: string }).manufacturer, (e.fields as { owner: string }).owner]),
    ).toEqual([
      ['amd', 'DRA'],
      ['ascend', 'DRA'],
      ['nvidia', 'DRA'],
      ['ascend', 'DevicePlugin'],
      ['nvidia', 'DevicePlugin'],
    ]);
  });

  it('publishes nothing while the Node cannot be read: the slice cycle fails and is retried', async () => {
    const fake = ownerApi();
    const slices = slicePublisher();
    const state = createAgentState();
    const api: KubeApi = {
      ...fake.api,
      get: () => Promise.reject(new ApiError(500, 'GET', '/api/v1/nodes/gpu-a', 'etcd')),
    };
    await runCycle(state, {
      detect: () => Promise.resolve(detection([h100(0)])),
      publisher: labelPublisher(),
      slicePublisher: slices,
      ownerDecider: apiOwnerDecider(api, NODE),
      intervalMs: 60_000,
      logger: recordingLogger(),
    });
    expect(slices.calls).toHaveLength(0);
    expect(state.sliceFailures).toBe(1);
  });
});
