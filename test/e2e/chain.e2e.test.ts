// The whole chain on a real control plane: etcd, kube-apiserver, kube-controller-manager and
// Metacontroller built from the Go module proxy, Kueue's v1beta2 CRDs, our hook server (the
// built CLI) and our manifests. Run with `npm run test:e2e`.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { localQueueName } from '../../src/nodefeature/index.js';
import { FAKE_LIBRARIES, machineFile } from '../../harness/native/fake-machine.js';
import { renderChain } from '../../src/render/index.js';
import { converge, waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import {
  createNode,
  diffAgainstRender,
  exampleClusterFiles,
  exampleNodes,
  readLiveChain,
} from '../../harness/e2e/chain.js';
import { readLog } from '../../harness/e2e/control-plane.js';
import { nvidiaMachine, startAgentProcess } from '../../harness/e2e/agent.js';
import { type HookServer } from '../../harness/e2e/hook-server.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import { makeInstanceType } from '../builders/gpustack.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
/** How long the chain may take to follow a change (Metacontroller, two or three hooks deep). */
const CONVERGE_MS = 120_000;

type Spec<T> = KubeObject & { spec: T };
type ClusterQueueSpec = {
  stopPolicy?: string;
  resourceGroups?: { flavors: { name: string; resources: { nominalQuota: string }[] }[] }[];
};
type Status<T> = KubeObject & { status?: T };

let client: KubeClient;
let server: HookServer;

async function liveNamespaces(): Promise<string[]> {
  return (await client.list('v1', 'Namespace')).map((n) => n.metadata.name).sort();
}

async function flavorNames(): Promise<string[]> {
  return (await client.list(KUEUE, 'ResourceFlavor', { labelSelector: 'resource.gpustack.ai/type=nodes' }))
    .map((f) => f.metadata.name)
    .sort();
}

async function queueFlavors(name: string): Promise<string[] | undefined> {
  const queue = await client.get<Spec<ClusterQueueSpec>>(KUEUE, 'ClusterQueue', name);
  return queue?.spec.resourceGroups?.[0]?.flavors.map((f) => f.name);
}

/** Calls of one hook our server has answered since it started, by its own counter on /metrics. */
async function hookCalls(controller: string, hook: string): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('gpustack_hook_requests_total{'))
    .filter((line) => line.includes(`controller="${controller}"`) && line.includes(`hook="${hook}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** Waits until `hook` of `controller` has answered no call for `quietMs`; returns its count then. */
async function quietCalls(controller: string, hook: string, quietMs = 5000): Promise<number> {
  let last = await hookCalls(controller, hook);
  let since = Date.now();
  await waitFor(
    async () => {
      const now = await hookCalls(controller, hook);
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    CONVERGE_MS,
    `${controller} ${hook} did not go quiet`,
    500,
  );
  return last;
}

/**
 * Waits until a sync of the chain has both started and ended after this call. Metacontroller
 * syncs one parent at a time, so the second answer counted from now belongs to a sync that began
 * after the first one ended, i.e. after now.
 */
async function chainSyncedSinceNow(): Promise<void> {
  const seen = await hookCalls('scheduling-chain', 'sync');
  await waitFor(
    async () => (await hookCalls('scheduling-chain', 'sync')) >= seen + 2,
    CONVERGE_MS,
    'the chain did not sync again',
  );
}

/** Waits until Metacontroller's log, past `offset`, shows a refused call of `route` (our server is down). */
async function refusedSince(offset: number, route: string): Promise<void> {
  await waitFor(
    () =>
      readLog(cluster, 'metacontroller')
        .slice(offset)
        .split('\n')
        .some((line) => line.includes(route) && line.includes('connection refused')),
    CONVERGE_MS,
    `Metacontroller did not try ${route} while the hooks were down`,
  );
}

const cluster = useCluster({
  kueue: 'crds',
  hooks: true,
  setup: async (c) => {
    client = c.client;
    server = c.hookServer as HookServer;
  },
});

describe('the scheduling chain on a real control plane', () => {
  const clusterNodes = [...exampleNodes('reference-4-node.yaml'), ...exampleNodes('h100-8x.yaml')];

  it('converges to exactly what render prints for the reference cluster plus an H100 node', async () => {
    for (const node of clusterNodes) await createNode(client, node);
    const namespaces = await liveNamespaces();
    await converge('the live chain matches render', async () =>
      diffAgainstRender(await readLiveChain(client), clusterNodes, namespaces),
    );

    expect(await flavorNames()).toEqual([
      'gpustack-generic-linux-amd64-16c',
      'gpustack-generic-linux-amd64-224c',
      'gpustack-generic-linux-amd64-48c',
      'gpustack-generic-linux-amd64-4c',
      'gpustack-nvidia-a10g-linux-amd64-1d',
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
      'gpustack-nvidia-tesla-t4-linux-amd64-1d',
      'gpustack-nvidia-tesla-t4-linux-amd64-4d',
    ]);
    const t4 = await client.get<Spec<ClusterQueueSpec & { admissionChecksStrategy?: unknown }>>(
      KUEUE,
      'ClusterQueue',
      'gpustack-nvidia-tesla-t4-linux-amd64',
    );
    expect(t4?.spec.resourceGroups?.[0]?.flavors.map((f) => f.resources[0]?.nominalQuota)).toEqual(['1600k', '6400k']);
    expect(t4?.spec.admissionChecksStrategy).toEqual({ admissionChecks: [{ name: 'gpustack-node-devices' }] });
    const check = await client.get<Status<{ conditions?: { type: string; status: string }[] }>>(
      KUEUE,
      'AdmissionCheck',
      'gpustack-node-devices',
    );
    expect(check?.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Active', status: 'True' }));
    const chain = await client.get<Status<{ managedNodes?: number; conditions?: { type: string; status: string }[] }>>(
      GPUSTACK,
      'SchedulingChain',
      'default',
    );
    expect(chain?.status?.managedNodes).toBe(clusterNodes.length);
    expect(chain?.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
    const type = await client.get<Status<{ entrance?: string; capacity?: string }>>(
      GPUSTACK,
      'InstanceType',
      'gpustack-nvidia-tesla-t4-linux-amd64',
    );
    expect(type?.status).toMatchObject({
      entrance: localQueueName('gpustack-nvidia-tesla-t4-linux-amd64'),
      capacity: '5',
    });
  });

  it('a chain status write re-syncs no InstanceType, one Node changing its cards only that Node in node-profile; a settings change re-labels every Node', async () => {
    const h100 = 'gpu-h100-01';
    const count = 'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count';
    const managed = (await client.list('v1', 'Node')).filter(
      (n) => n.metadata.labels?.['gpustack.ai/managed'] === 'true',
    );
    expect(managed.length).toBeGreaterThanOrEqual(5);
    const cardsTo = async (cards: string, flavor: string, gone: string): Promise<void> => {
      await client.mergePatch('v1', 'Node', h100, { metadata: { labels: { [count]: cards } } });
      await converge(`the H100 node moves to its ${cards}-card flavor, and the chain status says so`, async () => {
        const names = await flavorNames();
        const chain = await client.get<Status<{ pools?: { flavors?: string[] }[] }>>(
          GPUSTACK,
          'SchedulingChain',
          'default',
        );
        const reported = (chain?.status?.pools ?? []).flatMap((p) => p.flavors ?? []);
        return [
          ...(names.includes(flavor) ? [] : [`no ${flavor}`]),
          ...(names.includes(gone) ? [`${gone} still there`] : []),
          ...(reported.includes(flavor) ? [] : [`chain status does not list ${flavor}`]),
        ];
      });
    };
    const eight = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d';
    const four = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-4d';
    // The e2e resyncs every parent every few seconds; for the count, node-profile's and
    // instance-type's periodic resyncs are put off (Metacontroller restarts those controllers,
    // re-syncing every parent once, before the counters go quiet), so only syncs caused by events
    // are counted.
    const resync = async (seconds: number): Promise<void> => {
      await client.mergePatch('metacontroller.k8s.io/v1alpha1', 'DecoratorController', 'gpustack-node-profile', {
        spec: { resyncPeriodSeconds: seconds },
      });
      await client.mergePatch('metacontroller.k8s.io/v1alpha1', 'CompositeController', 'gpustack-instance-type', {
        spec: { resyncPeriodSeconds: seconds },
      });
    };
    await resync(3600);
    try {
      const types = (await client.list(GPUSTACK, 'InstanceType')).length;
      // The chain's status alone (it moves with every Node's cards): a status write, which the
      // chain's next sync writes back, re-syncs no InstanceType. They relate the ChainSettings,
      // which does not move; relating the chain, each would re-sync on both writes. First, so that
      // a failure here leaves the H100 node as the later tests expect it.
      const managedNodes = async (): Promise<number | undefined> =>
        (await client.get<Status<{ managedNodes?: number }>>(GPUSTACK, 'SchedulingChain', 'default'))?.status
          ?.managedNodes;
      const real = await managedNodes();
      const typesQuiet = await quietCalls('instance-type', 'sync');
      const status = { status: { managedNodes: 999 } };
      await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', status, undefined, 'status');
      await converge('the chain writes its status back', async () => {
        const now = await managedNodes();
        return now === real ? [] : [`managedNodes ${now}, not ${real}`];
      });
      const statusSyncs = (await quietCalls('instance-type', 'sync')) - typesQuiet;
      log(`instance-type syncs for two writes of the chain's status alone, ${types} InstanceTypes: ${statusSyncs}`);
      expect(statusSyncs).toBe(0);

      const before = await quietCalls('node-profile', 'sync');
      const typesBefore = await quietCalls('instance-type', 'sync');
      await cardsTo('4', four, eight);
      const oneNode = (await quietCalls('node-profile', 'sync')) - before;
      const typeSyncs = (await quietCalls('instance-type', 'sync')) - typesBefore;
      log(`node-profile syncs for one Node's card change, ${managed.length} managed Nodes: ${oneNode}`);
      log(`instance-type syncs for that change, ${types} InstanceTypes: ${typeSyncs}`);
      expect(oneNode).toBeGreaterThanOrEqual(1);
      expect(oneNode).toBeLessThanOrEqual(3);
      // The chain saw the change through the Node's NodeProfile (owned by the Node), not the Node.
      const node = await client.get('v1', 'Node', h100);
      const profile = await client.get<Spec<{ labels: Record<string, string> }>>(GPUSTACK, 'NodeProfile', h100);
      expect(node?.metadata.labels?.['gpustack.ai/profiled']).toBe('true');
      expect(profile?.spec.labels[count]).toBe('4');
      expect(profile?.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Node', name: h100, uid: node?.metadata.uid, controller: true }),
      ]);
      // The H100 flavors change, and every InstanceType relates the ResourceFlavors: they re-sync.
      expect(typeSyncs).toBeGreaterThanOrEqual(1);
    } finally {
      await resync(5);
    }
    await cardsTo('8', eight, four);

    // A settings change reaches every Node: the general key becomes each node's CPU model, and back.
    const generic = 'general.feature.gpustack.ai/generic';
    const names = clusterNodes.map((n) => n.metadata.name);
    const generics = async (): Promise<string[]> =>
      (await client.list('v1', 'Node'))
        .filter((n) => names.includes(n.metadata.name) && n.metadata.labels?.[generic] === 'true')
        .map((n) => n.metadata.name);
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', { spec: { generalKey: 'CPUModel' } });
    await converge('every node loses the generic key', async () => (await generics()).map((n) => `${n} still generic`));
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', { spec: { generalKey: 'Generic' } });
    await converge('every node has the generic key again', async () => {
      const back = await generics();
      return names.filter((n) => !back.includes(n)).map((n) => `${n} not generic`);
    });
  });

  it('follows the real agent (node-labels mode, fake NVML): a card disappears and the node moves flavor', async () => {
    const node = 'e2e-agent';
    await createNode(client, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: node,
        labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': node },
      },
      status: { capacity: { cpu: '32', memory: '256Gi', pods: '110' } },
    });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-agent-'));
    const writeCards = (count: number): string => machineFile(nvidiaMachine('NVIDIA H100 80GB HBM3', count), dir);
    const devices = writeCards(4);
    const { process: agent, healthPort } = await startAgentProcess(cluster.plane, 'agent', node, ['nvidia'], {
      GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
      GPUSTACK_FAKE_DEVICES: devices,
      GPUSTACK_SYSFS_ROOT: dir,
    });
    try {
      await converge('the agent labels the node and the chain adds a 4-card flavor', async () => {
        const labels = (await client.get('v1', 'Node', node))?.metadata.labels ?? {};
        const problems: string[] = [];
        if (labels['acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count'] !== '4')
          problems.push(`count label ${labels['acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count']}`);
        if (labels['acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.sliced.units'] !== '1600000')
          problems.push('node-profile has not added .sliced.units');
        const flavors = await queueFlavors('gpustack-nvidia-h100-80gb-hbm3-linux-amd64');
        if (
          JSON.stringify(flavors) !==
          JSON.stringify([
            'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-4d',
            'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
          ])
        )
          problems.push(`queue flavors ${JSON.stringify(flavors)}`);
        return problems;
      });
      const health = await fetch(`http://127.0.0.1:${healthPort}/healthz`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { lastDetection: string | null }).lastDetection).not.toBeNull();

      writeCards(3);
      await converge('one card gone: the node moves to a 3-card flavor and the 4-card flavor is deleted', async () => {
        const names = await flavorNames();
        const problems: string[] = [];
        if (!names.includes('gpustack-nvidia-h100-80gb-hbm3-linux-amd64-3d')) problems.push('no 3-card flavor');
        if (names.includes('gpustack-nvidia-h100-80gb-hbm3-linux-amd64-4d')) problems.push('4-card flavor still there');
        const flavors = await queueFlavors('gpustack-nvidia-h100-80gb-hbm3-linux-amd64');
        if (
          JSON.stringify(flavors) !==
          JSON.stringify([
            'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-3d',
            'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
          ])
        )
          problems.push(`queue flavors ${JSON.stringify(flavors)}`);
        return problems;
      });
    } finally {
      await agent.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await agent.exited).code).toBe(0);
  });

  it('a node with only GPU Feature Discovery labels (no agent) gets its flavor and queue, and loses them with the labels', async () => {
    // The GPU Operator's GFD labels and the device plugin's capacity, nothing of ours: as render sees it.
    const gfdNode = exampleNodes('gpu-feature-discovery.yaml').find((n) => n.metadata.name === 'gpu-a100-01');
    if (!gfdNode) throw new Error('examples/clusters/gpu-feature-discovery.yaml has no gpu-a100-01');
    const name = gfdNode.metadata.name;
    const aKey = 'acceleratable.feature.gpustack.ai/nvidia-a100-sxm4-80gb';
    const queue = 'gpustack-nvidia-a100-sxm4-80gb-linux-amd64';
    const flavor = `${queue}-4d`;
    await createNode(client, gfdNode);
    const rendered = renderChain({ nodes: [gfdNode], namespaces: ['default'] }, { now: '2026-01-01T00:00:00Z' });
    if (!rendered.ok) throw new Error(rendered.error.message);
    const want = rendered.nodes[0];
    await converge('node-profile derives the device labels, the chain adds the flavor and queue', async () => {
      const node = await client.get('v1', 'Node', name);
      const labels = node?.metadata.labels ?? {};
      const annotations = node?.metadata.annotations ?? {};
      const problems: string[] = [];
      for (const [key, value] of Object.entries(want?.labels ?? {}))
        if (value !== null && labels[key] !== value) problems.push(`label ${key}: want ${value}, have ${labels[key]}`);
      for (const [key, value] of Object.entries(want?.annotations ?? {}))
        if (value !== null && annotations[key] !== value) problems.push(`annotation ${key} differs`);
      if (!(await flavorNames()).includes(flavor)) problems.push(`no ${flavor}`);
      const cq = await client.get<Spec<ClusterQueueSpec>>(KUEUE, 'ClusterQueue', queue);
      const quotas = cq?.spec.resourceGroups?.[0]?.flavors.map((f) => [f.name, f.resources[0]?.nominalQuota]);
      if (JSON.stringify(quotas) !== JSON.stringify([[flavor, '6400k']]))
        problems.push(`queue ${JSON.stringify(quotas)}`);
      if (!(await client.get(KUEUE, 'LocalQueue', localQueueName(queue), 'default'))) problems.push('no LocalQueue');
      return problems;
    });
    expect((await client.get('v1', 'Node', name))?.metadata.labels?.[`${aKey}.count`]).toBe('4');
    const type = await client.get<Spec<{ unitResources?: unknown; acceleratorGroup?: string }>>(
      GPUSTACK,
      'InstanceType',
      queue,
    );
    expect(type?.spec).toMatchObject({
      acceleratorGroup: 'nvidia-a100-sxm4-80gb',
      unitResources: { cpu: '12', ram: '128Gi' },
    });

    // The GPU Operator goes: node-profile removes what it derived (and only that), the flavor goes.
    const gfdKeys = Object.keys(gfdNode.metadata.labels ?? {}).filter((k) => k.startsWith('nvidia.com/'));
    await client.mergePatch('v1', 'Node', name, {
      metadata: { labels: Object.fromEntries(gfdKeys.map((k) => [k, null])) },
    });
    await converge('the derived labels, the record and the flavor are gone; the InstanceType stays, held', async () => {
      const node = await client.get('v1', 'Node', name);
      const left = Object.keys(node?.metadata.labels ?? {}).filter((k) => k.startsWith('acceleratable.'));
      const cq = await client.get<Spec<ClusterQueueSpec>>(KUEUE, 'ClusterQueue', queue);
      return [
        ...left.map((k) => `label ${k} still there`),
        ...(node?.metadata.annotations?.['feature.gpustack.ai/derived-device-labels'] !== undefined
          ? ['record still there']
          : []),
        ...((await flavorNames()).includes(flavor) ? [`${flavor} still there`] : []),
        ...(cq?.spec.stopPolicy === 'Hold' ? [] : [`queue stopPolicy ${cq?.spec.stopPolicy}`]),
      ];
    });
    expect(await client.get(GPUSTACK, 'InstanceType', queue)).toBeDefined();
    // A label nobody derived (the node's own) is untouched.
    expect((await client.get('v1', 'Node', name))?.metadata.labels?.['kubernetes.io/hostname']).toBe(name);
  });

  it('an unmanaged node leaves its pools', async () => {
    await client.mergePatch('v1', 'Node', 'node-cpu', { metadata: { labels: { 'gpustack.ai/managed': 'false' } } });
    await converge('node-cpu (the only 16-core node) leaves: its flavor goes', async () => {
      const names = await flavorNames();
      const flavors = (await queueFlavors('gpustack-generic-linux-amd64')) ?? [];
      return [
        ...(names.includes('gpustack-generic-linux-amd64-16c') ? ['16c flavor still there'] : []),
        ...(flavors.includes('gpustack-generic-linux-amd64-16c') ? ['generic queue still lists 16c'] : []),
      ];
    });
    // An admin's value is never overwritten by node-profile.
    expect((await client.get('v1', 'Node', 'node-cpu'))?.metadata.labels?.['gpustack.ai/managed']).toBe('false');
  });

  it('a new namespace gets one LocalQueue per InstanceType', async () => {
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-e2e' } });
    const types = (await client.list(GPUSTACK, 'InstanceType')).map((t) => t.metadata.name);
    expect(types.length).toBeGreaterThanOrEqual(4);
    await converge('team-e2e has a LocalQueue for every InstanceType', async () => {
      const queues = new Map(
        (await client.list(KUEUE, 'LocalQueue', { namespace: 'team-e2e' })).map((q) => [
          q.metadata.name,
          q as Spec<{ clusterQueue: string }>,
        ]),
      );
      return types.flatMap((type) =>
        queues.get(localQueueName(type))?.spec.clusterQueue === type ? [] : [`no LocalQueue for ${type}`],
      );
    });
  });

  it('an InstanceType set inactive holds its ClusterQueue, and the chain keeps the admin edit', async () => {
    const name = 'gpustack-nvidia-tesla-t4-linux-amd64';
    await client.mergePatch(GPUSTACK, 'InstanceType', name, { spec: { inactive: true } });
    await converge('the t4 queue is held and the type Inactive', async () => {
      const queue = await client.get<Spec<ClusterQueueSpec>>(KUEUE, 'ClusterQueue', name);
      const type = await client.get<Status<{ phase?: string }>>(GPUSTACK, 'InstanceType', name);
      return [
        ...(queue?.spec.stopPolicy === 'Hold' ? [] : [`stopPolicy ${queue?.spec.stopPolicy}`]),
        ...(type?.status?.phase === 'Inactive' ? [] : [`phase ${type?.status?.phase}`]),
      ];
    });
    await chainSyncedSinceNow();
    expect((await client.get<Spec<{ inactive?: boolean }>>(GPUSTACK, 'InstanceType', name))?.spec.inactive).toBe(true);
  });

  it('a deleted InstanceType takes its ClusterQueue and LocalQueues with it and is released', async () => {
    const name = 'e2e-custom-cpu';
    await client.applyObject(
      makeInstanceType(name).byAdmin().displayName('Custom CPU').unitResources('2', '4Gi').manifest(),
    );
    const entrance = localQueueName(name);
    await converge('the admin InstanceType gets its queue and LocalQueues', async () => {
      const queue = await client.get(KUEUE, 'ClusterQueue', name);
      const local = await client.get(KUEUE, 'LocalQueue', entrance, 'default');
      const type = await client.get(GPUSTACK, 'InstanceType', name);
      return [
        ...(queue ? [] : ['no ClusterQueue']),
        ...(local ? [] : ['no LocalQueue in default']),
        ...(type?.metadata.finalizers?.some((f) => f.startsWith('metacontroller.io/'))
          ? []
          : ['no Metacontroller finalizer']),
      ];
    });
    await client.delete(GPUSTACK, 'InstanceType', name);
    await converge('queue, LocalQueues and the InstanceType are gone', async () => {
      const locals = (await client.list(KUEUE, 'LocalQueue')).filter((q) => q.metadata.name === entrance);
      return [
        ...((await client.get(KUEUE, 'ClusterQueue', name)) ? ['ClusterQueue still there'] : []),
        ...locals.map((q) => `LocalQueue ${q.metadata.namespace}/${q.metadata.name} still there`),
        ...((await client.get(GPUSTACK, 'InstanceType', name))
          ? ['InstanceType still there (finalizer not released)']
          : []),
      ];
    });
  });

  it('a derived InstanceType whose nodes all leave stays, with its queue held', async () => {
    const name = 'gpustack-nvidia-a10g-linux-amd64';
    await client.mergePatch('v1', 'Node', 'node-a10g', { metadata: { labels: { 'gpustack.ai/managed': 'false' } } });
    await converge('the a10g flavor goes, its InstanceType stays and its queue is held', async () => {
      const queue = await client.get<Spec<ClusterQueueSpec>>(KUEUE, 'ClusterQueue', name);
      return [
        ...((await flavorNames()).includes('gpustack-nvidia-a10g-linux-amd64-1d') ? ['a10g flavor still there'] : []),
        ...((await client.get(GPUSTACK, 'InstanceType', name)) ? [] : ['InstanceType gone']),
        ...(queue?.spec.stopPolicy === 'Hold' && queue.spec.resourceGroups === undefined
          ? []
          : [`queue ${JSON.stringify(queue?.spec)}`]),
      ];
    });
    const chain = await client.get<Status<{ pools?: { name: string; nodes: number }[] }>>(
      GPUSTACK,
      'SchedulingChain',
      'default',
    );
    expect(chain?.status?.pools).toContainEqual(expect.objectContaining({ name, nodes: 0 }));
  });

  it('every object render emits for every example cluster passes server-side dry-run', async () => {
    const namespaces = ['default'];
    for (const file of exampleClusterFiles()) {
      const result = renderChain({ nodes: exampleNodes(file), namespaces }, { now: '2026-01-01T00:00:00Z' });
      if (!result.ok) throw new Error(`${file}: ${result.error.message}`);
      for (const object of result.objects) {
        await expect(
          client.applyObject(object as unknown as KubeObject, { dryRun: true, fieldManager: 'gpustack-e2e-dry-run' }),
          `${file}: ${object.kind} ${object.metadata.name}`,
        ).resolves.toBeDefined();
      }
      log(`${file}: ${result.objects.length} objects pass server-side dry-run`);
    }
  });

  it('survives the hook server being killed mid-run: nothing is lost, and the chain converges after restart', async () => {
    const before = await flavorNames();
    const logOffset = readLog(cluster, 'metacontroller').length;
    await server.kill();
    await createNode(client, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'e2e-late', labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
      status: { capacity: { cpu: '96' } },
    });
    // Both controllers have tried the dead server (the new Node, the chain's resync) and failed.
    await refusedSince(logOffset, '/hooks/node-profile/sync');
    await refusedSince(logOffset, '/hooks/scheduling-chain/sync');
    expect(await flavorNames(), 'no flavor may go while the hooks are down').toEqual(before);
    await server.start();
    await converge('after the restart the new node gets its 96-core flavor and nothing else changed', async () => {
      const names = await flavorNames();
      return [
        ...(names.includes('gpustack-generic-linux-amd64-96c') ? [] : ['no 96c flavor']),
        ...before.filter((name) => !names.includes(name)).map((name) => `lost ${name}`),
      ];
    });
  });
});
