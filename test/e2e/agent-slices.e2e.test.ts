// The agent's ResourceSlices on a real kube-apiserver (etcd + kube-apiserver only): the API
// server's validation is the judge of every slice, and its resourceVersions tell whether a cycle
// wrote anything. The last two cases run the built agent against the fake NVML library (slices,
// and the NVLink clique label from its fabric info).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createAgentState,
  resourceSlicePublisher,
  runCycle,
  type Publisher,
  type SlicePublisher,
} from '../../src/agent/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { createKubeApi, loadKubeConfig, type KubeApi } from '../../src/api-client/index.js';
import type { DetectResult, Device } from '../../native/index.js';
import { recordingLogger } from '../agent/support.js';
import { FAKE_LIBRARIES, machineFile } from '../../harness/native/fake-machine.js';
import { waitFor, type KubeClient } from '../../harness/e2e/apply.js';
import { createNode } from '../../harness/e2e/chain.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import { nvidiaMachine, startAgentProcess } from '../../harness/e2e/agent.js';

const SLICES = '/apis/resource.k8s.io/v1/resourceslices';

interface LiveSlice {
  metadata: { name: string; resourceVersion: string };
  spec: {
    driver: string;
    nodeName: string;
    pool: { name: string; generation: number; resourceSliceCount: number };
    devices?: { name: string; attributes?: Record<string, unknown>; capacity?: Record<string, { value: string }> }[];
    sharedCounters?: { name: string }[];
  };
}

let client: KubeClient;
let api: KubeApi;

async function slicesOf(node: string, driver?: string): Promise<LiveSlice[]> {
  const selector = `spec.nodeName=${node}${driver ? `,spec.driver=${driver}` : ''}`;
  const list = await client.request<{ items: LiveSlice[] }>(
    'GET',
    `${SLICES}?fieldSelector=${encodeURIComponent(selector)}`,
  );
  return list.items.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
}

function deviceNames(slices: readonly LiveSlice[]): string[] {
  return slices.flatMap((s) => (s.spec.devices ?? []).map((d) => d.name)).sort();
}

async function node(name: string): Promise<void> {
  await createNode(client, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
    status: { capacity: { cpu: '32', memory: '256Gi', pods: '110' } },
  } as never);
}

function card(manufacturer: ManufacturerName, index: number, memoryMiB = 143771): SliceCard {
  return {
    manufacturer,
    index,
    uuid: `${manufacturer.toUpperCase()}-e2e-${index}`,
    product: manufacturer === 'nvidia' ? 'NVIDIA H200' : 'AMD Instinct MI300X',
    memoryMiB,
    family: manufacturer === 'nvidia' ? 'Hopper' : 'CDNA3',
    computeCapability: manufacturer === 'nvidia' ? '9.0' : 'gfx942',
    driverVersion: '570.124.06',
    pciBusId: `0000:${(0x18 + index).toString(16).padStart(2, '0')}:00.0`,
    numaNode: index % 2,
  };
}

const cards = (manufacturer: ManufacturerName, n: number) => Array.from({ length: n }, (_, i) => card(manufacturer, i));
const NONE = new Set<string>();

const cluster = useCluster({
  controllerManager: false,
  setup: async (c) => {
    client = c.client;
    api = createKubeApi(await loadKubeConfig(c.kubeconfig));
  },
});

describe('agent ResourceSlices on a real kube-apiserver', () => {
  it('accepts the slices of a 100-card node, and a second cycle writes nothing', async () => {
    await node('big');
    const publisher = resourceSlicePublisher(api, 'big');
    const started = performance.now();
    const first = await publisher.publish(cards('nvidia', 100), NONE);
    const firstMs = performance.now() - started;
    expect(first).toMatchObject({ result: 'published', written: 17, deleted: 0, problems: [] });
    const slices = await slicesOf('big', 'nvidia.gpustack.ai');
    expect(slices).toHaveLength(17);
    expect(new Set(slices.map((s) => JSON.stringify(s.spec.pool)))).toEqual(
      new Set([JSON.stringify({ name: 'big', generation: 0, resourceSliceCount: 17 })]),
    );
    expect(deviceNames(slices)).toHaveLength(200);
    const versions = slices.map((s) => s.metadata.resourceVersion);
    const second = await publisher.publish(cards('nvidia', 100), NONE);
    expect(second).toMatchObject({ result: 'unchanged', written: 0, deleted: 0 });
    expect((await slicesOf('big', 'nvidia.gpustack.ai')).map((s) => s.metadata.resourceVersion)).toEqual(versions);
    // A fresh publisher (an agent restarted) compares with what is there too.
    expect((await resourceSlicePublisher(api, 'big').publish(cards('nvidia', 100), NONE)).result).toBe('unchanged');
    process.stderr.write(`[e2e] 100-card node: 17 slices written in ${Math.round(firstMs)} ms\n`);
  });

  it('a card going removes its devices and counter set; every slice moves to the next generation', async () => {
    await node('shrink');
    const publisher = resourceSlicePublisher(api, 'shrink');
    await publisher.publish(cards('nvidia', 4), NONE);
    expect(deviceNames(await slicesOf('shrink'))).toEqual([
      'card-0',
      'card-0-shared',
      'card-1',
      'card-1-shared',
      'card-2',
      'card-2-shared',
      'card-3',
      'card-3-shared',
    ]);
    const outcome = await publisher.publish(cards('nvidia', 3), NONE);
    expect(outcome).toMatchObject({ result: 'published', written: 2, deleted: 0 });
    const slices = await slicesOf('shrink');
    expect(deviceNames(slices)).not.toContain('card-3');
    expect(deviceNames(slices)).toHaveLength(6);
    expect(slices.flatMap((s) => s.spec.sharedCounters ?? []).map((c) => c.name)).toEqual([
      'card-0-counters',
      'card-1-counters',
      'card-2-counters',
    ]);
    expect(slices.map((s) => s.spec.pool.generation)).toEqual([1, 1]);
    // The server's canonical quantities (80Gi for 81920Mi) compare equal to ours: no rewrite.
    await publisher.publish([card('nvidia', 0, 81920)], NONE);
    const versions = (await slicesOf('shrink')).map((s) => s.metadata.resourceVersion);
    expect((await publisher.publish([card('nvidia', 0, 81920)], NONE)).result).toBe('unchanged');
    expect((await slicesOf('shrink')).map((s) => s.metadata.resourceVersion)).toEqual(versions);
  });

  it('a vendor going deletes its slices; a vendor whose detection failed keeps its cards, tainted NoSchedule', async () => {
    await node('two-vendors');
    const publisher = resourceSlicePublisher(api, 'two-vendors');
    await publisher.publish([...cards('nvidia', 2), ...cards('amd', 2)], NONE);
    expect((await slicesOf('two-vendors')).map((s) => s.spec.driver).sort()).toEqual([
      'amd.gpustack.ai',
      'amd.gpustack.ai',
      'nvidia.gpustack.ai',
      'nvidia.gpustack.ai',
    ]);
    const taintsOf = async (driver: string) =>
      (await slicesOf('two-vendors', driver)).flatMap((s) =>
        (s.spec.devices ?? []).map(
          (d) => [d.name, (d as { taints?: Record<string, unknown>[] }).taints ?? []] as const,
        ),
      );
    // AMD's library failed: its cards stay published, every device tainted, so no new claim lands on them.
    expect(await publisher.publish(cards('nvidia', 2), new Set(['amd']))).toMatchObject({ result: 'published' });
    const tainted = await taintsOf('amd.gpustack.ai');
    expect(tainted.map(([name]) => name)).toEqual(['card-0', 'card-0-shared', 'card-1', 'card-1-shared']);
    for (const [name, taints] of tainted) {
      expect(taints, name).toHaveLength(1);
      // The API server keeps the taint (DRADeviceTaints is on in 1.36) and stamps timeAdded itself.
      expect(taints[0], name).toMatchObject({
        key: 'gpustack.ai/unhealthy',
        value: 'detection-failed',
        effect: 'NoSchedule',
        timeAdded: expect.any(String),
      });
    }
    expect((await taintsOf('nvidia.gpustack.ai')).every(([, taints]) => taints.length === 0)).toBe(true);
    // Still failing: nothing to write (the server's timeAdded is no difference).
    const before = (await slicesOf('two-vendors', 'amd.gpustack.ai')).map((s) => s.metadata.resourceVersion);
    const again = resourceSlicePublisher(api, 'two-vendors', { resyncEvery: 1 });
    await again.publish([...cards('nvidia', 2), ...cards('amd', 2)], NONE); // the same cards, healthy: untaints
    expect((await taintsOf('amd.gpustack.ai')).every(([, taints]) => taints.length === 0)).toBe(true);
    await again.publish(cards('nvidia', 2), new Set(['amd']));
    const retainted = (await slicesOf('two-vendors', 'amd.gpustack.ai')).map((s) => s.metadata.resourceVersion);
    expect(retainted).not.toEqual(before);
    expect((await again.publish(cards('nvidia', 2), new Set(['amd']))).result).toBe('unchanged');
    expect((await slicesOf('two-vendors', 'amd.gpustack.ai')).map((s) => s.metadata.resourceVersion)).toEqual(
      retainted,
    );
    // A publisher that never saw AMD healthy (a restart while the library fails) leaves its slices alone.
    const restarted = resourceSlicePublisher(api, 'two-vendors');
    expect((await restarted.publish(cards('nvidia', 2), new Set(['amd']))).result).toBe('unchanged');
    expect((await slicesOf('two-vendors', 'amd.gpustack.ai')).map((s) => s.metadata.resourceVersion)).toEqual(
      retainted,
    );
    // AMD's cards are gone: its slices go.
    expect(await publisher.publish(cards('nvidia', 2), NONE)).toMatchObject({ result: 'published', deleted: 2 });
    expect(await slicesOf('two-vendors', 'amd.gpustack.ai')).toEqual([]);
    expect(await slicesOf('two-vendors', 'nvidia.gpustack.ai')).toHaveLength(2);
    // Another driver of our domain on this node is not ours: it stays.
    await client.request(
      'POST',
      SLICES,
      JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceSlice',
        metadata: { name: 'two-vendors-cdi' },
        spec: {
          driver: 'cdi.gpustack.ai',
          nodeName: 'two-vendors',
          pool: { name: 'two-vendors', generation: 0, resourceSliceCount: 1 },
          devices: [{ name: 'x' }],
        },
      }),
    );
    // No cards at all: nothing of ours is left on the node.
    await publisher.publish([], NONE);
    expect((await slicesOf('two-vendors')).map((s) => s.spec.driver)).toEqual(['cdi.gpustack.ai']);
  });

  it("a name held by someone else's slice (a squatter it may not delete): published under a name generated from it, the squatter reported, the labels regardless", async () => {
    await node('squatted');
    // Another driver's slice holds the name our first slice needs: its create is refused (409
    // AlreadyExists), and the agent may not delete it (issue 43).
    await client.request(
      'POST',
      SLICES,
      JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceSlice',
        metadata: { name: 'squatted-nvidia-counters-0' },
        spec: {
          driver: 'other.example.com',
          allNodes: true,
          pool: { name: 'p', generation: 0, resourceSliceCount: 1 },
        },
      }),
    );
    const labels: Publisher & { writes: number } = {
      mode: 'node-labels',
      writes: 0,
      read: () => Promise.resolve(undefined),
      write() {
        this.writes++;
        return Promise.resolve();
      },
    };
    const detection: DetectResult = { devices: [device(0), device(1)], errors: [] };
    const logger = recordingLogger();
    const state = createAgentState();
    const options = {
      detect: () => Promise.resolve(detection),
      publisher: labels,
      slicePublisher: resourceSlicePublisher(api, 'squatted', { resyncEvery: 1 }),
      intervalMs: 60_000,
      logger,
    };
    expect(await runCycle(state, options)).toBe('published');
    expect(labels.writes).toBe(1);
    expect(state.sliceFailures).toBe(0);
    const reported = logger.entries.find((e) => e.message === 'resource slices: card reported');
    expect((reported?.fields as { problem?: string }).problem).toMatch(
      /^ResourceSlice squatted-nvidia-counters-0 is held by another \(spec.nodeName "", driver "other.example.com"\), which this agent may not delete: published as squatted-nvidia-counters-0-[a-z0-9]{5}; deleting it frees the name$/,
    );
    const published = await slicesOf('squatted');
    expect(published.map((s) => s.metadata.name)).toEqual([
      expect.stringMatching(/^squatted-nvidia-counters-0-[a-z0-9]{5}$/),
      'squatted-nvidia-devices-0',
    ]);
    expect(deviceNames(published)).toHaveLength(4);
    // The next cycle finds it under its generated name: nothing written.
    await runCycle(state, options);
    expect((await slicesOf('squatted')).map((s) => s.metadata.resourceVersion)).toEqual(
      published.map((s) => s.metadata.resourceVersion),
    );
    // The squatter stays where it is.
    expect(await client.get('resource.k8s.io/v1', 'ResourceSlice', 'squatted-nvidia-counters-0')).toBeDefined();
  });

  it('a write the API server refuses with 422 (a ValidatingAdmissionPolicy) is logged with its reason and retried', async () => {
    await node('refused');
    const admission = '/apis/admissionregistration.k8s.io/v1';
    await client.request(
      'POST',
      `${admission}/validatingadmissionpolicies`,
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'no-slices-for-refused' },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['resource.k8s.io'],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['resourceslices'],
              },
            ],
          },
          validations: [
            {
              expression: "object.spec.nodeName != 'refused'",
              message: 'no slices for node refused',
              reason: 'Invalid',
            },
          ],
        },
      }),
    );
    await client.request(
      'POST',
      `${admission}/validatingadmissionpolicybindings`,
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'no-slices-for-refused' },
        spec: { policyName: 'no-slices-for-refused', validationActions: ['Deny'] },
      }),
    );
    const logger = recordingLogger();
    const state = createAgentState();
    const labels: Publisher = {
      mode: 'node-labels',
      read: () => Promise.resolve(undefined),
      write: () => Promise.resolve(),
    };
    const options = {
      detect: () => Promise.resolve({ devices: [device(0)], errors: [] }),
      publisher: labels,
      slicePublisher: resourceSlicePublisher(api, 'refused'),
      intervalMs: 60_000,
      logger,
    };
    // The policy takes effect within a second or two; until then the first slice may get through.
    await waitFor(
      async () => {
        await client.raw('DELETE', `${SLICES}?fieldSelector=${encodeURIComponent('spec.nodeName=refused')}`);
        // The labels go out whatever happens to the slices.
        expect(await runCycle(state, options)).not.toBe('failed');
        return state.lastSliceError?.includes('HTTP 422');
      },
      30_000,
      'the policy refuses the slices',
      500,
    );
    const failure = logger.entries.filter((e) => e.message === 'publishing resource slices failed; will retry').at(-1);
    expect((failure?.fields as { err: string }).err).toMatch(/HTTP 422.*no slices for node refused/);
    expect(state.sliceFailures).toBeGreaterThan(0);
    await client.request('DELETE', `${admission}/validatingadmissionpolicybindings/no-slices-for-refused`);
    await waitFor(
      async () => {
        await runCycle(state, options);
        return state.sliceFailures === 0;
      },
      30_000,
      'the slices are published once the policy is gone',
      500,
    );
    expect(deviceNames(await slicesOf('refused'))).toEqual(['card-0', 'card-0-shared']);
  });

  it('a slice of our driver on the node in another pool is replaced, not updated (the pool name is immutable)', async () => {
    await node('moved');
    await client.request(
      'POST',
      SLICES,
      JSON.stringify({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceSlice',
        metadata: { name: 'moved-nvidia-counters-0' },
        spec: {
          driver: 'nvidia.gpustack.ai',
          nodeName: 'moved',
          pool: { name: 'elsewhere', generation: 5, resourceSliceCount: 1 },
          sharedCounters: [{ name: 'x', counters: { units: { value: '1' } } }],
        },
      }),
    );
    const publisher = resourceSlicePublisher(api, 'moved');
    expect(await publisher.publish(cards('nvidia', 1), NONE)).toMatchObject({
      result: 'published',
      written: 2,
      deleted: 1,
    });
    const slices = await slicesOf('moved');
    expect(slices.map((s) => [s.metadata.name, s.spec.pool.name, s.spec.pool.generation])).toEqual([
      ['moved-nvidia-counters-0', 'moved', 0],
      ['moved-nvidia-devices-0', 'moved', 0],
    ]);
    expect((await publisher.publish(cards('nvidia', 1), NONE)).result).toBe('unchanged');
  });

  it('two publishers for one node (a rolling update) converge on one generation, which only grows', async () => {
    await node('rolling');
    const a = resourceSlicePublisher(api, 'rolling');
    const b = resourceSlicePublisher(api, 'rolling');
    const seen: number[] = [];
    const observe = async () => {
      for (const s of await slicesOf('rolling')) seen.push(s.spec.pool.generation);
    };
    // 40 cards: 5 counter slices and 2 device slices, so the two interleave on several writes. A
    // call that still conflicts after its own re-reads rejects; the agent retries it next cycle.
    let conflicts = 0;
    const publish = async (publisher: SlicePublisher, n: number) => {
      try {
        return (await publisher.publish(cards('nvidia', n), NONE)).result;
      } catch (error) {
        expect((error as Error).message).toMatch(/HTTP 409/);
        conflicts++;
        return 'failed';
      }
    };
    const run = async (publisher: SlicePublisher) => {
      for (let i = 0; i < 4; i++) {
        await publish(publisher, 40 - (i % 2));
        await observe();
      }
    };
    await Promise.all([run(a), run(b)]);
    // Both now want 40 cards: within a few cycles each finds the pool as it wants it.
    await waitFor(
      async () => (await publish(a, 40)) === 'unchanged' && (await publish(b, 40)) === 'unchanged',
      30_000,
      'both publishers find the pool unchanged',
    );
    const slices = await slicesOf('rolling');
    expect(slices).toHaveLength(7);
    const generations = new Set(slices.map((s) => s.spec.pool.generation));
    expect(generations.size).toBe(1);
    expect(deviceNames(slices)).toHaveLength(80);
    expect(Math.max(...seen)).toBeLessThanOrEqual([...generations][0] as number);
    process.stderr.write(
      `[e2e] rolling: final generation ${[...generations][0]}, ${conflicts} calls ended in 409 and were retried\n`,
    );
  });

  it('the real agent (fake NVML) publishes slices beside its labels and follows a card going', async () => {
    const name = 'e2e-agent-slices';
    await node(name);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-slices-'));
    const writeCards = (count: number): string => machineFile(nvidiaMachine('NVIDIA H200', count), dir);
    const devices = writeCards(4);
    const { process: agent, healthPort } = await startAgentProcess(cluster.plane, 'agent-slices', name, ['nvidia'], {
      GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
      GPUSTACK_FAKE_DEVICES: devices,
      GPUSTACK_SYSFS_ROOT: dir,
    });
    try {
      const started = Date.now();
      await waitFor(
        async () => deviceNames(await slicesOf(name)).length === 8,
        60_000,
        'the agent publishes 4 cards as 8 devices',
      );
      const publishedMs = Date.now() - started;
      const live = await slicesOf(name);
      const whole = live.flatMap((s) => s.spec.devices ?? []).find((d) => d.name === 'card-2') as {
        attributes: Record<string, unknown>;
      };
      expect(whole.attributes).toMatchObject({
        productKey: { string: 'nvidia-h200' },
        uuid: { string: 'GPU-e2e-2' },
        index: { int: 2 },
        computeCapability: { version: '9.0.0' },
        mode: { string: 'whole' },
      });
      const labels = (await client.get('v1', 'Node', name))?.metadata.labels ?? {};
      expect(labels['acceleratable.feature.gpustack.ai/nvidia-h200.count']).toBe('4');
      const owner = (live[0]?.metadata as { ownerReferences?: { kind: string; name: string }[] }).ownerReferences;
      expect(owner).toMatchObject([{ kind: 'Node', name }]);
      writeCards(3);
      const gone = Date.now();
      await waitFor(
        async () => {
          const names = deviceNames(await slicesOf(name));
          return names.length === 6 && !names.includes('card-3');
        },
        60_000,
        'card-3 leaves the slices',
      );
      const goneMs = Date.now() - gone;
      process.stderr.write(
        `[e2e] real agent: 4 cards published in ${publishedMs} ms, card-3 removed in ${goneMs} ms\n`,
      );
      const health = (await (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).json()) as {
        sliceWrites: number;
        lastSliceError: string | null;
      };
      expect(health.lastSliceError).toBeNull();
      expect(health.sliceWrites).toBeGreaterThanOrEqual(2);
      const metrics = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
      expect(metrics).toMatch(/gpustack_agent_slice_publishes_total\{result="published"\} [2-9]/);
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the real agent (fake NVML) labels its Node with the NVLink clique of the cards' fabric info, and removes it while a card's registration is in progress", async () => {
    const name = 'e2e-agent-clique';
    const CLIQUE = 'topology.gpustack.ai/nvlink-clique';
    await node(name);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-clique-'));
    // NVML hands the cluster UUID over as 16 bytes; the fake takes them as hex digits.
    const clusterUuid = '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11';
    const writeFabric = (state: (i: number) => number): string => {
      const machine = nvidiaMachine('NVIDIA H200', 4);
      const cards = (machine.devices?.nvidia ?? []).map((fields, i) => ({
        ...fields,
        fabricUuid: clusterUuid.replaceAll('-', '').toUpperCase(),
        fabricClique: 3,
        fabricState: state(i),
      }));
      return machineFile({ ...machine, devices: { nvidia: cards } }, dir);
    };
    const devices = writeFabric(() => 3);
    const { process: agent } = await startAgentProcess(cluster.plane, 'agent-clique', name, ['nvidia'], {
      GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
      GPUSTACK_FAKE_DEVICES: devices,
      GPUSTACK_SYSFS_ROOT: dir,
    });
    const labelsOf = async () => (await client.get('v1', 'Node', name))?.metadata.labels ?? {};
    try {
      const started = Date.now();
      await waitFor(async () => (await labelsOf())[CLIQUE] !== undefined, 60_000, 'the agent publishes the clique');
      const publishedMs = Date.now() - started;
      expect((await labelsOf())[CLIQUE]).toBe(`${clusterUuid}.3`);
      const declared = (await client.get('v1', 'Node', name))?.metadata.annotations?.[
        'feature.gpustack.ai/agent-labels'
      ];
      expect(declared?.split(',')).toContain(CLIQUE);
      // One card back in registration: not every card reports a fabric, the label goes.
      writeFabric((i) => (i === 2 ? 2 : 3));
      await waitFor(async () => !(CLIQUE in (await labelsOf())), 60_000, 'the clique label is removed');
      expect((await labelsOf())['acceleratable.feature.gpustack.ai/nvidia-h200.count']).toBe('4');
      process.stderr.write(`[e2e] real agent: NVLink clique label published in ${publishedMs} ms\n`);
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function device(index: number): Device {
  return {
    manufacturer: 'nvidia',
    index,
    uuid: `GPU-squat-${index}`,
    product: 'NVIDIA H200',
    memoryMiB: 143771,
    cores: 132,
    computeCapability: '9.0',
  };
}
