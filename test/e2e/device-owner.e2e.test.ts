// One owner per card (docs/architecture.md#device-owner) on real components: etcd, kube-apiserver,
// kube-controller-manager (the resource claim controller) and kube-scheduler (KEP-5004's
// DRAExtendedResource: beta, on by default), and one real node agent per Node on the fake NVML.
// The DeviceClasses are the chain's (`buildDeviceClasses`), applied directly: no Metacontroller or
// Kueue is needed to prove who hands out the cards. No kubelet: the harness marks Nodes Ready and
// stands in for a device plugin by writing `nvidia.com/gpu` into a Node's status, as the kubelet
// does for one.
//
// Cluster: `owner-plugin` and `owner-dra`, two H100s each.
import { describe, expect, it } from 'vitest';

import { OWNER_TAINT_KEY, buildDeviceClasses } from '../../src/dra/index.js';
import { nvidiaMachine, poolOf, waitPool, type FakeAgent, type SliceDevice } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import {
  RESOURCE_API,
  allocated,
  claimsOf,
  createReadyNode,
  deletePodNow,
  pod,
  waitBound,
  waitUnschedulable,
  claimTemplate,
} from '../../harness/e2e/scheduling.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const NAMESPACE = 'default';
const NVIDIA = 'nvidia.gpustack.ai';
const GPU = 'nvidia.com/gpu';
const PLUGIN_NODE = 'owner-plugin';
const DRA_NODE = 'owner-dra';
const NODE_CAPACITY = { cpu: '64', memory: '512Gi', pods: '110' };

let client: KubeClient;
const agents = new Map<string, FakeAgent>();

function agentOf(node: string): FakeAgent {
  const agent = agents.get(node);
  if (!agent) throw new Error(`no agent for ${node}`);
  return agent;
}

/** Writes the Node's status as the kubelet does for a device plugin that serves `count` cards (0: gone). */
async function advertise(node: string, count: number | undefined): Promise<void> {
  const resources = count === undefined ? {} : { [GPU]: String(count) };
  // A merge patch cannot drop a key by leaving it out: null removes it.
  const extra = count === undefined ? { [GPU]: null } : resources;
  await client.mergePatch(
    'v1',
    'Node',
    node,
    { status: { capacity: { ...NODE_CAPACITY, ...extra }, allocatable: { ...NODE_CAPACITY, ...extra } } },
    undefined,
    'status',
  );
}

const ownerTainted = (devices: readonly SliceDevice[]): boolean =>
  devices.length > 0 &&
  devices.every((d) => ((d as { taints?: { key: string }[] }).taints ?? []).some((t) => t.key === OWNER_TAINT_KEY));

useCluster({
  scheduler: true,
  setup: async (c) => {
    client = c.client;
    for (const deviceClass of buildDeviceClasses(new Set(['nvidia']), []))
      await client.applyObject(deviceClass as KubeObject);
    for (const node of [PLUGIN_NODE, DRA_NODE]) {
      await createReadyNode(client, { name: node, capacity: NODE_CAPACITY });
      agents.set(node, await c.startAgent(node, nvidiaMachine('NVIDIA H100 80GB HBM3', 2)));
    }
    await client.applyObject(claimTemplate('one-card', 'gpustack-nvidia'));
    for (const node of [PLUGIN_NODE, DRA_NODE])
      await waitPool(client, agentOf(node), NVIDIA, (p) => p.devices.length === 4, 'both cards published');
  },
});

describe('one owner per card: the device plugin or DRA, decided per node', () => {
  it('the whole class maps nvidia.com/gpu (KEP-5004) and the shared class nvidia.com/gpu.shared', async () => {
    const whole = await client.get<KubeObject & { spec: { extendedResourceName?: string } }>(
      RESOURCE_API,
      'DeviceClass',
      'gpustack-nvidia',
    );
    expect(whole?.spec.extendedResourceName).toBe(GPU);
    const shared = await client.get<KubeObject & { spec: { extendedResourceName?: string } }>(
      RESOURCE_API,
      'DeviceClass',
      'gpustack-nvidia-shared',
    );
    expect(shared?.spec.extendedResourceName).toBe(`${GPU}.shared`);
  });

  it('a node that advertises nvidia.com/gpu: 4 publishes no NVIDIA devices, and a claim goes to the other node', async () => {
    await advertise(PLUGIN_NODE, 4);
    await waitFor(
      async () => ((await poolOf(client, PLUGIN_NODE, NVIDIA)) === undefined ? true : undefined),
      60_000,
      `${PLUGIN_NODE}: its NVIDIA pool withdrawn\n${agentOf(PLUGIN_NODE).process.tail(10)}`,
      500,
    );
    // The decision is in the agent's log (written asynchronously: it may trail the slices).
    await waitFor(
      async () =>
        /"owner":"DevicePlugin"[^\n]*"msg":"device owner"/.test(agentOf(PLUGIN_NODE).process.tail(40)) || undefined,
      10_000,
      `${PLUGIN_NODE}: the agent logs the device plugin as the owner`,
      500,
    );
    await client.applyObject(pod('claims-a-card', NAMESPACE, { claims: [{ name: 'gpu', template: 'one-card' }] }));
    const bound = await waitBound(client, NAMESPACE, 'claims-a-card');
    expect(bound.spec.nodeName).toBe(DRA_NODE);
    const [claim] = await claimsOf(client, bound);
    expect(claim && allocated(claim).map((d) => [d.driver, d.pool])).toEqual([[NVIDIA, DRA_NODE]]);
  });

  it('on the DRA node, nvidia.com/gpu: 1 runs through DRA: its claim is visible and a card allocated; mixed requests never exceed the cards', async () => {
    // The plain request may only land where no device plugin serves it through DRA: pin it to make the point.
    const onDra = { [`kubernetes.io/hostname`]: DRA_NODE };
    await client.applyObject(pod('plain-gpu', NAMESPACE, { requests: { [GPU]: '1' }, nodeSelector: onDra }));
    const bound = await waitBound(client, NAMESPACE, 'plain-gpu');
    expect(bound.spec.nodeName).toBe(DRA_NODE);
    const claimName = bound.status?.extendedResourceClaimStatus?.resourceClaimName ?? '';
    expect(claimName).toMatch(/^plain-gpu-extended-resources-/);
    const [claim] = await claimsOf(client, bound);
    const devices = claim ? allocated(claim) : [];
    expect(devices).toHaveLength(1);
    expect(devices[0]).toMatchObject({ driver: NVIDIA, pool: DRA_NODE, device: expect.stringMatching(/^card-\d$/) });
    // The DRA node's two cards are now both taken (one claim from a template, one from the plain
    // request): a third request of either kind stays unschedulable.
    await client.applyObject(pod('plain-gpu-2', NAMESPACE, { requests: { [GPU]: '1' }, nodeSelector: onDra }));
    await client.applyObject(
      pod('claims-another', NAMESPACE, { claims: [{ name: 'gpu', template: 'one-card' }], nodeSelector: onDra }),
    );
    await waitUnschedulable(client, NAMESPACE, 'plain-gpu-2');
    await waitUnschedulable(client, NAMESPACE, 'claims-another');
    const taken = new Set<string>();
    for (const name of ['claims-a-card', 'plain-gpu']) {
      const current = await waitBound(client, NAMESPACE, name);
      for (const claimOf of await claimsOf(client, current))
        for (const device of allocated(claimOf)) taken.add(`${device.pool}/${device.device}`);
    }
    expect([...taken].sort()).toEqual([`${DRA_NODE}/card-0`, `${DRA_NODE}/card-1`]);
    await deletePodNow(client, NAMESPACE, 'plain-gpu-2');
    await deletePodNow(client, NAMESPACE, 'claims-another');
  });

  it('a device plugin that appears while claims hold cards waits for them (devices tainted), then takes the node; its removal gives the cards back to DRA', async () => {
    const agent = agentOf(DRA_NODE);
    await advertise(DRA_NODE, 2);
    const waiting = await waitPool(
      client,
      agent,
      NVIDIA,
      (p) => ownerTainted(p.devices),
      'devices tainted gpustack.ai/device-owner',
    );
    expect(waiting.devices.map((d) => d.name).sort()).toEqual(['card-0', 'card-0-shared', 'card-1', 'card-1-shared']);
    await waitFor(
      async () => agent.process.tail(60).includes('device owner change waits') || undefined,
      10_000,
      `${DRA_NODE}: the agent logs that the change waits`,
      500,
    );
    // A new claim cannot land on a tainted card: nowhere to go.
    await client.applyObject(
      pod('claims-during-handover', NAMESPACE, { claims: [{ name: 'gpu', template: 'one-card' }] }),
    );
    await waitUnschedulable(client, NAMESPACE, 'claims-during-handover');
    await deletePodNow(client, NAMESPACE, 'claims-during-handover');
    // The claims go with their Pods (the resource claim controller deallocates them): the pool goes.
    await deletePodNow(client, NAMESPACE, 'claims-a-card');
    await deletePodNow(client, NAMESPACE, 'plain-gpu');
    await waitFor(
      async () => ((await poolOf(client, DRA_NODE, NVIDIA)) === undefined ? true : undefined),
      120_000,
      `${DRA_NODE}: the pool withdrawn once no claim holds a card\n${agent.process.tail(10)}`,
      500,
    );
    // The device plugin goes (the kubelet leaves nvidia.com/gpu: 0): DRA owns the cards again, untainted.
    await advertise(DRA_NODE, 0);
    const back = await waitPool(
      client,
      agent,
      NVIDIA,
      (p) => p.devices.length === 4 && !ownerTainted(p.devices),
      'published again',
    );
    expect(back.devices.every((d) => (d as { taints?: unknown[] }).taints === undefined)).toBe(true);
  });
});
