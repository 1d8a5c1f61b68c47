// Node shards on a real control plane (docs/architecture.md#node-shards): with 5 managed Nodes in
// 2 shards, the chain's request as Metacontroller sends it holds the 2 NodeShards' summaries and no
// Node or NodeProfile, the live objects equal render's, and a settings change still re-labels every
// Node. A recording proxy between Metacontroller and our server keeps the last request per route.

import { describe, expect, it } from 'vitest';

import type { Node, SchedulingChain } from '../../src/k8s/index.js';
import { localQueueName } from '../../src/nodefeature/index.js';
import { converge, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import {
  createNode,
  diffAgainstRender,
  exampleNodes,
  installOurManifests,
  readLiveChain,
} from '../../harness/e2e/chain.js';
import { startHookProxy, type HookProxy } from '../../harness/e2e/hook-proxy.js';
import type { HookServer } from '../../harness/e2e/hook-server.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const CONVERGE_MS = 120_000;

let client: KubeClient;
let proxy: HookProxy;

/** The 4 reference Nodes and a second CPU Node: 5 managed Nodes, 2 of them of the same kind. */
function fiveNodes(): Node[] {
  const nodes = exampleNodes('reference-4-node.yaml');
  const cpu = nodes.find((n) => n.metadata.name === 'node-cpu') as Node;
  return [...nodes, { ...cpu, metadata: { ...cpu.metadata, name: 'node-cpu-2' } }];
}

function chainWith(spec: Record<string, unknown>): SchedulingChain {
  return { apiVersion: GPUSTACK, kind: 'SchedulingChain', metadata: { name: 'default' }, spec };
}

async function namespaces(): Promise<string[]> {
  return (await client.list('v1', 'Namespace')).map((n) => n.metadata.name);
}

/** The objects of a pool that lost its Nodes: sticky (docs/architecture.md#controllers), render from scratch has none. */
const stickyPool = (pool: string, entrance: string) => (difference: string) =>
  difference.startsWith('unexpected ') && (difference.endsWith(` ${pool}`) || difference.endsWith(`/${entrance}`));

async function convergedTo(
  nodes: readonly Node[],
  spec: Record<string, unknown>,
  what: string,
  sticky: (difference: string) => boolean = () => false,
): Promise<void> {
  const names = await namespaces();
  await converge(
    what,
    async () => diffAgainstRender(await readLiveChain(client), nodes, names, chainWith(spec)).filter((d) => !sticky(d)),
    CONVERGE_MS,
  );
}

type ObjectMap = Record<string, Record<string, KubeObject & { status?: { groups?: { nodes: number }[] } }>>;
interface ChainRequest {
  readonly children: ObjectMap;
  readonly related: ObjectMap;
}

useCluster({
  kueue: 'crds',
  hooks: true,
  // Our manifests point at the recording proxy, not at the server.
  manifests: false,
  setup: async (c) => {
    client = c.client;
    const server = c.hookServer as HookServer;
    proxy = await startHookProxy(server.url, { keepBodies: true });
    c.onStop('hook-proxy', () => proxy.close());
    await installOurManifests(client, proxy.url);
    log(`hook server ${server.url} behind the recording proxy ${proxy.url}; logs ${c.logsDir}`);
  },
});

describe('node shards', () => {
  const nodes = fiveNodes();
  const spec = { nodeShards: 2 };

  it('relates no Node and no NodeProfile to the chain: 5 managed Nodes reach it as the summaries of 2 NodeShards', async () => {
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', { spec });
    for (const node of nodes) await createNode(client, node);
    await convergedTo(nodes, spec, 'the live chain with 5 Nodes in 2 shards equals render');

    const shards = await client.list<KubeObject & { status?: { profiles?: number } }>(GPUSTACK, 'NodeShard');
    expect(shards.map((s) => s.metadata.name).sort()).toEqual(['shard-0', 'shard-1']);
    // Both shards hold profiles, and together every one once.
    expect(shards.map((s) => s.status?.profiles ?? 0).every((n) => n > 0)).toBe(true);
    expect(shards.reduce((sum, s) => sum + (s.status?.profiles ?? 0), 0)).toBe(5);

    // The chain's next request, as Metacontroller sends it (a resync or a shard's status write).
    const before = proxy.sizes()['scheduling-chain/sync']?.count ?? 0;
    await converge(
      'the chain synced again',
      async () => ((proxy.sizes()['scheduling-chain/sync']?.count ?? 0) > before ? [] : ['no chain sync yet']),
      CONVERGE_MS,
    );
    const request = proxy.lastBody('scheduling-chain/sync') as ChainRequest;
    const relatedObjects = Object.values(request.related).flatMap((byName) => Object.values(byName));
    const profiles = Object.values(request.related[`NodeProfile.${GPUSTACK}`] ?? {});
    const relatedNodes = Object.values(request.related['Node.v1'] ?? {});
    const requestShards = Object.values(request.children[`NodeShard.${GPUSTACK}`] ?? {});
    log(
      `chain request: ${relatedObjects.length} related objects, ${requestShards.length} NodeShards, ` +
        `${Object.values(request.children).flatMap((m) => Object.values(m)).length} children in all`,
    );
    expect(relatedObjects).toHaveLength(0);
    expect(profiles).toHaveLength(0);
    expect(relatedNodes).toHaveLength(0);
    expect(requestShards).toHaveLength(2);
    // The 5 Nodes are in the summaries: 4 groups (the two CPU Nodes read the same, or fall in two shards).
    const groups = requestShards.flatMap((s) => s.status?.groups ?? []);
    expect(groups.reduce((sum, g) => sum + g.nodes, 0)).toBe(5);
    expect(groups.length).toBeLessThanOrEqual(5);
  });

  it('re-labels every Node on a settings change, and the chain follows through the summaries', async () => {
    const cpuModel = { ...spec, generalKey: 'CPUModel' };
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', { spec: cpuModel });
    // The generic CPU pool loses its Nodes to the CPU-model pools and stays, sticky, until an admin deletes it.
    const generic = 'gpustack-generic-linux-amd64';
    await convergedTo(
      nodes,
      cpuModel,
      'every Node re-labelled by CPU model, the chain equal to render',
      stickyPool(generic, localQueueName(generic)),
    );
    const chain = await client.get<KubeObject & { status?: { pools?: { name: string; nodes: number }[] } }>(
      GPUSTACK,
      'SchedulingChain',
      'default',
    );
    expect(chain?.status?.pools?.find((p) => p.name === generic)?.nodes).toBe(0);

    const live = await client.list('v1', 'Node');
    expect(live).toHaveLength(5);
    for (const node of live) {
      const labels = node.metadata.labels ?? {};
      // Generic is gone from every Node; each has a CPU-model key instead.
      expect(labels['general.feature.gpustack.ai/generic'], node.metadata.name).toBeUndefined();
      expect(
        Object.keys(labels).some((k) => k.startsWith('general.feature.gpustack.ai/') && !k.endsWith('.count')),
        node.metadata.name,
      ).toBe(true);
    }
  });

  it('coalesces a node pool joining at once: the shards and the chain sync a few times, not once per Node', async () => {
    const cpuModel = { ...spec, generalKey: 'CPUModel' };
    const gpu = nodes.find((n) => n.metadata.name !== 'node-cpu' && n.metadata.name !== 'node-cpu-2') as Node;
    const pool = Array.from({ length: 60 }, (_, i) => ({
      ...gpu,
      metadata: { ...gpu.metadata, name: `pool-${String(i).padStart(2, '0')}` },
    }));
    const calls = (route: string): number => proxy.sizes()[route]?.count ?? 0;
    const before = { shard: calls('node-shard/sync'), chain: calls('scheduling-chain/sync') };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < pool.length) await createNode(client, pool[next++] as Node);
      }),
    );
    await convergedTo(
      [...nodes, ...pool],
      cpuModel,
      'the 60 joining Nodes in their pools, the chain equal to render',
      stickyPool('gpustack-generic-linux-amd64', localQueueName('gpustack-generic-linux-amd64')),
    );
    const shardSyncs = calls('node-shard/sync') - before.shard;
    const chainSyncs = calls('scheduling-chain/sync') - before.chain;
    log(`60 Nodes joined: ${shardSyncs} shard syncs, ${chainSyncs} chain syncs`);
    // Paced, 6 shard syncs and 10 chain syncs when written; unpaced (`serve --join-pacing 0s`) the
    // shards synced 32 times, about once per two profiles written, the chain 12 (its work queue
    // coalesces it already at this size: the bound on it only keeps it from growing per Node).
    expect(shardSyncs).toBeLessThan(pool.length / 4);
    expect(chainSyncs).toBeLessThan(pool.length / 4);
  });
});
