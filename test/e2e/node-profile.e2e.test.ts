// node-profile on a real control plane with the resync it ships (an hour, not the e2e's 5 s): a
// Node registered as a kubelet registers it — the object, then its status — is labelled by events,
// within seconds (Metacontroller v4, with the manifest's `ignoreStatusChanges`).

import { describe, expect, it } from 'vitest';

import type { Node } from '../../src/k8s/index.js';
import { renderChain } from '../../src/render/index.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { createNode, exampleNodes, registerNode } from '../../harness/e2e/chain.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const NODE_PROFILE = 'gpustack-node-profile';
const CPU_COUNT = 'general.feature.gpustack.ai/generic.count';
/** Seconds, with a 2-core machine's slack, and far below any resync (300 s before, an hour now). */
const LABELLED_MS = 30_000;

let client: KubeClient;

/** An example Node under another name, as the kubelet registers it: labels and annotations, no status. */
function renamed(node: Node, name: string): Node {
  return { ...node, metadata: { ...node.metadata, name } };
}

/** The labels node-profile's answer leaves on `node` (what render prints), `null` for those it removes. */
function wantedLabels(node: Node): Record<string, string | null> {
  const result = renderChain({ nodes: [node], namespaces: ['default'] }, { now: '2026-01-01T00:00:00Z' });
  if (!result.ok) throw new Error(`render refused ${node.metadata.name}: ${result.error.message}`);
  return result.nodes.find((n) => n.name === node.metadata.name)?.labels ?? {};
}

/** Waits until the live Node carries `want`; returns the seconds it took from `since`. */
async function labelledWithin(name: string, want: Record<string, string | null>, since: number): Promise<number> {
  let diff: string[] = [];
  try {
    await waitFor(
      async () => {
        const labels = (await client.get('v1', 'Node', name))?.metadata.labels ?? {};
        diff = Object.entries(want)
          .filter(([key, value]) => (value === null ? key in labels : labels[key] !== value))
          .map(([key, value]) => `${key}: want ${value}, have ${labels[key]}`);
        return diff.length === 0;
      },
      LABELLED_MS,
      `Node ${name} labelled`,
      200,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstill different:\n  ${diff.join('\n  ')}`, { cause: error });
  }
  return (performance.now() - since) / 1000;
}

/** Writes `status.capacity` (and allocatable) on the status subresource, as a kubelet does. */
async function postStatus(name: string, capacity: Record<string, string>): Promise<void> {
  await client.applyObject(
    { apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { capacity, allocatable: capacity } },
    { subresource: 'status' },
  );
}

useCluster({
  controllerManager: false,
  kueue: 'crds',
  hooks: true,
  manifests: { shippedResync: [NODE_PROFILE] },
  setup: async (c) => {
    client = c.client;
    const controller = await client.get<KubeObject & { spec: { resyncPeriodSeconds?: number } }>(
      'metacontroller.k8s.io/v1alpha1',
      'DecoratorController',
      NODE_PROFILE,
    );
    expect(controller?.spec.resyncPeriodSeconds).toBeGreaterThanOrEqual(300);
    // node-profile relates the ChainSettings the chain writes; without it, it would label by defaults.
    await waitFor(
      async () => (await client.get(GPUSTACK, 'ChainSettings', 'default')) !== undefined,
      120_000,
      'the chain wrote no ChainSettings',
      500,
    );
  },
});

describe('node-profile labels a Node from its events, not its resync', () => {
  it('a Node given its status right after it registers (as a kubelet does) gets every label, the CPU count among them, within seconds', async () => {
    const node = renamed(exampleNodes('h100-8x.yaml')[0] as Node, 'e2e-kubelet-registers');
    const want = wantedLabels(node);
    expect(want[CPU_COUNT]).toBe('224');
    const started = performance.now();
    await createNode(client, node);
    const seconds = await labelledWithin(node.metadata.name, want, started);
    log(`${node.metadata.name}: labelled ${seconds.toFixed(1)} s after it registered`);
  });

  it('a labelled Node given its status, and then more CPUs, gets each CPU count within seconds', async () => {
    const node = renamed(exampleNodes('reference-4-node.yaml')[0] as Node, 'e2e-status-later');
    const name = node.metadata.name;
    await registerNode(client, node);
    await waitFor(
      async () => (await client.get('v1', 'Node', name))?.metadata.labels?.['gpustack.ai/managed'] === 'true',
      LABELLED_MS,
      `Node ${name} managed`,
      200,
    );
    const noStatus = (await client.get('v1', 'Node', name))?.metadata.labels ?? {};
    expect(noStatus[CPU_COUNT]).toBeUndefined();

    for (const cpu of ['16', '32']) {
      const capacity = { ...(node.status?.capacity as Record<string, string>), cpu };
      const withCapacity = { ...node, status: { ...node.status, capacity } } as Node;
      const want = wantedLabels(withCapacity);
      expect(want[CPU_COUNT]).toBe(cpu);
      const started = performance.now();
      await postStatus(name, capacity);
      const seconds = await labelledWithin(name, want, started);
      const profile = await waitFor(
        async () => {
          const live = await client.get<KubeObject & { spec: { cpuCapacity?: string } }>(GPUSTACK, 'NodeProfile', name);
          return live?.spec.cpuCapacity === cpu ? live : undefined;
        },
        LABELLED_MS,
        `NodeProfile ${name} with cpuCapacity ${cpu}`,
        200,
      );
      expect(profile.spec.cpuCapacity).toBe(cpu);
      log(`${name}: capacity cpu ${cpu} labelled ${seconds.toFixed(1)} s after the status write`);
    }
  });
});
