// Node shards on a real control plane (docs/architecture.md#node-shards): with 5 managed Nodes in
// 2 shards, the chain's request as Metacontroller sends it holds the 2 NodeShards' summaries and no
// Node or NodeProfile, the live objects equal render's, and a settings change still re-labels every
// Node; a node pool joining at once syncs each shard and the chain no more often than join pacing's
// hold schedule allows (docs/architecture.md#join-pacing). A recording proxy between Metacontroller
// and our server keeps the last request per route and the time of every paced call.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import type { Node, NodeShardArrival, SchedulingChain } from '../../src/k8s/index.js';
import { localQueueName } from '../../src/nodefeature/index.js';
import { DEFAULT_JOIN_PACING_SECONDS } from '../../src/server/index.js';
import {
  ARRIVAL_GAP_SECONDS,
  ARRIVING_WITHIN_SECONDS,
  CLOCK_SKEW_SECONDS,
  MIN_ARRIVAL_NODES,
  holdForArrival,
} from '../../src/sync/index.js';
import { converge, sleep, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
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
let serverLog = '';
/** Every paced call (shard and chain sync) through the proxy: when it came, for which parent. */
const pacedCalls: { route: string; parent: string; receivedMs: number; durationMs: number }[] = [];
const SHARD_SYNC = 'node-shard/sync';
const CHAIN_SYNC = 'scheduling-chain/sync';

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
    serverLog = path.join(c.logsDir, 'hook-server.log');
    proxy = await startHookProxy(server.url, {
      keepBodies: true,
      onCallRoutes: [SHARD_SYNC, CHAIN_SYNC],
      onCall: ({ route, body, receivedMs, durationMs }) => {
        const parent = (JSON.parse(body.toString('utf8')) as { parent?: KubeObject }).parent?.metadata.name ?? '';
        pacedCalls.push({ route, parent, receivedMs, durationMs });
      },
    });
    c.onStop('hook-proxy', () => proxy.close());
    // The paced controllers keep their shipped resync periods (600 s, 60 s): what the pool scenario
    // counts are the syncs its Nodes cause, not the e2e's 5 s resync.
    await installOurManifests(client, proxy.url, {
      shippedResync: ['gpustack-node-shard', 'gpustack-scheduling-chain'],
    });
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

    // The chain's next request, as Metacontroller sends it (the chain's resync is a minute: an
    // update of the chain itself syncs it now).
    const before = proxy.sizes()['scheduling-chain/sync']?.count ?? 0;
    await client.mergePatch(GPUSTACK, 'SchedulingChain', 'default', {
      metadata: { annotations: { 'e2e.gpustack.ai/poke': String(Date.now()) } },
    });
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

  it('paces a node pool joining at once: each shard and the chain sync as often as the hold schedule allows, not once per Node', async () => {
    const cpuModel = { ...spec, generalKey: 'CPUModel' };
    const gpu = nodes.find((n) => n.metadata.name !== 'node-cpu' && n.metadata.name !== 'node-cpu-2') as Node;
    const pool = Array.from({ length: 60 }, (_, i) => ({
      ...gpu,
      metadata: { ...gpu.metadata, name: `pool-${String(i).padStart(2, '0')}` },
    }));
    // A fresh arrival: profiles created less than ARRIVAL_GAP_SECONDS apart are one arrival, so the
    // pool's must not extend the first Nodes' (whose arrival is long over: nothing would be held).
    await settled();
    const started = Date.now();
    const logOffset = readFileSync(serverLog, 'utf8').length;
    const callsBefore = pacedCalls.length;
    // The pool joins at a steady 5 Nodes a second (a node pool scaling up), long enough that
    // unpaced, each shard would sync about once per profile.
    for (let i = 0; i < pool.length; i += 5) {
      const second = sleep(1000);
      await Promise.all(pool.slice(i, i + 5).map((node) => createNode(client, node)));
      await second;
    }
    await convergedTo(
      [...nodes, ...pool],
      cpuModel,
      'the 60 joining Nodes in their pools, the chain equal to render',
      stickyPool('gpustack-generic-linux-amd64', localQueueName('gpustack-generic-linux-amd64')),
    );
    // The trailing syncs: until no paced call has come for twice the arriving window.
    await quietFor(2 * ARRIVING_WINDOW_SECONDS * 1000);
    const calls = pacedCalls.slice(callsBefore);
    const held = heldSyncs(readFileSync(serverLog, 'utf8').slice(logOffset));

    // The arrival each shard wrote is the pool's: it began after the pool did, and counts its Nodes.
    const shards = await client.list<KubeObject & { status?: { arrival?: NodeShardArrival } }>(GPUSTACK, 'NodeShard');
    const arrivals = shards.map((shard) => ({ name: shard.metadata.name, arrival: shard.status?.arrival }));
    const seconds = (time: string | undefined): number => Date.parse(time ?? '') / 1000;
    for (const { name, arrival } of arrivals)
      expect(seconds(arrival?.since), name).toBeGreaterThanOrEqual(Math.floor(started / 1000) - CLOCK_SKEW_SECONDS);
    expect(arrivals.reduce((sum, { arrival }) => sum + (arrival?.nodes ?? 0), 0)).toBe(pool.length);
    // Pacing was exercised: both kinds of parent were held.
    expect(held[SHARD_SYNC] ?? 0).toBeGreaterThan(0);
    expect(held[CHAIN_SYNC] ?? 0).toBeGreaterThan(0);

    // The bounds follow from the hold schedule and the arrivals the shards wrote (maxShardSyncs,
    // maxChainSyncs). Measured (4 runs, 2 cores, 11 s arrivals): 8–11 syncs per shard of 13, the
    // chain 17–19 of 26; unpaced (`serve --join-pacing 0s`) 23 and 24 per shard, the chain 54.
    const report: string[] = [];
    let longestShardSpan = 0;
    for (const { name, arrival } of arrivals) {
      const span = seconds(arrival?.newest) - seconds(arrival?.since);
      longestShardSpan = Math.max(longestShardSpan, span);
      const syncs = calls.filter((c) => c.route === SHARD_SYNC && c.parent === name).length;
      report.push(
        `${name}: ${syncs} syncs (bound ${maxShardSyncs(span)}, arrival ${span} s of ${arrival?.nodes} Nodes)`,
      );
      expect(syncs, name).toBeLessThanOrEqual(maxShardSyncs(span));
    }
    // The chain's arrival: from the first pool Node's creation (it relates the joining Nodes) to the
    // newest profile any shard counted.
    const live = await client.list('v1', 'Node');
    const firstNode = Math.min(
      ...live
        .filter((n) => n.metadata.name.startsWith('pool-'))
        .map((n) => seconds(String(n.metadata.creationTimestamp))),
    );
    const chainSpan = Math.max(...arrivals.map(({ arrival }) => seconds(arrival?.newest))) - firstNode;
    const chainSyncs = calls.filter((c) => c.route === CHAIN_SYNC).length;
    const chainBound = maxChainSyncs(chainSpan, longestShardSpan, shards.length);
    report.push(`chain: ${chainSyncs} syncs (bound ${chainBound}, arrival ${chainSpan} s)`);
    log(`60 Nodes joined: ${report.join('; ')}; held: ${JSON.stringify(held)}`);
    for (const c of calls)
      log(
        `  ${((c.receivedMs - started) / 1000).toFixed(1)} s ${c.route} ${c.parent} ${(c.durationMs / 1000).toFixed(1)} s`,
      );
    expect(chainSyncs).toBeLessThanOrEqual(chainBound);
  });
});

/** The window after its newest profile in which a shard still counts as arriving (2 s, give or take 3 s of skew). */
const ARRIVING_WINDOW_SECONDS = ARRIVING_WITHIN_SECONDS + CLOCK_SKEW_SECONDS;

/**
 * When a parent's held syncs start while it counts as arriving for `arrivingSeconds` (the hold
 * schedule of src/sync/node-shard/arrivals.ts): Metacontroller runs a parent's next sync (with
 * whatever came meanwhile) once the held one is answered, so they start at t, t + hold, …; a hold
 * is 1 s while the arrival its request shows (`seen(t)`) is under 2 s, then half of it: start
 * times growing by up to 1.5×.
 */
function holdSchedule(arrivingSeconds: number, seen: (t: number) => number): number[] {
  const starts: number[] = [];
  for (let t = 0; t <= arrivingSeconds; t += holdForArrival(seen(t), DEFAULT_JOIN_PACING_SECONDS, MIN_ARRIVAL_NODES))
    starts.push(t);
  return starts;
}

/** A shard's request shows its profiles up to now: an arrival a second shorter at most (creation times have whole seconds). */
const shardSeen = (t: number): number => Math.max(0, t - 1);

/**
 * The most syncs join pacing allows a shard whose arrival lasted `spanSeconds`: before 5 profiles
 * have come each may sync it unheld (MIN_ARRIVAL_NODES − 1); then the held syncs while it counts as
 * arriving, its span and the arriving window after its newest profile; then one more, queued during
 * the last hold (its own status write syncs nothing: ignoreStatusChanges, and nothing else of a
 * shard changes).
 */
function maxShardSyncs(spanSeconds: number): number {
  return MIN_ARRIVAL_NODES - 1 + holdSchedule(spanSeconds + ARRIVING_WINDOW_SECONDS, shardSeen).length + 1;
}

/**
 * The most syncs join pacing allows the chain for an arrival of `spanSeconds` (from the first
 * joining Node to the newest profile), with `shards` shards whose arrival lasted `shardSpanSeconds`:
 * - unheld while fewer than 5 Nodes join: MIN_ARRIVAL_NODES − 1;
 * - held while a shard counts as arriving (until its own held sync would have written a newer
 *   arrival: the arriving window and that shard's hold after its newest profile). The chain reads the
 *   arrival its shards last wrote, which a shard writes when a held sync ends: at t it shows the
 *   arrival of the shard's sync that started before the last one that ended (the shards' first
 *   profile comes `spanSeconds − shardSpanSeconds` after the first Node), so its holds lag the
 *   shards' and its syncs grow by about 4/3× instead of 1.5×;
 * - trailing, unheld: the sync queued during the last hold, and per shard its status writes that land
 *   after that (its last held sync's and its trailing one's), each syncing the chain once and that
 *   sync's status write (the pools' Node counts) once more: Metacontroller re-syncs a parent on its
 *   own status write unless it ignores it, which the chain does not.
 */
function maxChainSyncs(spanSeconds: number, shardSpanSeconds: number, shards: number): number {
  const shardStarts = holdSchedule(shardSpanSeconds + ARRIVING_WINDOW_SECONDS, shardSeen);
  const offset = Math.max(0, spanSeconds - shardSpanSeconds);
  const written = (t: number): number =>
    Math.max(0, ...shardStarts.filter((_, i) => (shardStarts[i + 1] ?? Infinity) <= t - offset).map(shardSeen));
  const longestShardHold = holdForArrival(shardSpanSeconds, DEFAULT_JOIN_PACING_SECONDS, MIN_ARRIVAL_NODES);
  const arriving = spanSeconds + ARRIVING_WINDOW_SECONDS + longestShardHold;
  return MIN_ARRIVAL_NODES - 1 + holdSchedule(arriving, written).length + 1 + 2 * 2 * shards;
}

/** Waits until the newest profile is older than an arrival's gap and no shard counts as arriving any more. */
async function settled(): Promise<void> {
  const profiles = await client.list(GPUSTACK, 'NodeProfile');
  const newest = Math.max(0, ...profiles.map((p) => Date.parse(String(p.metadata.creationTimestamp))));
  const wait = newest + (ARRIVAL_GAP_SECONDS + ARRIVING_WINDOW_SECONDS + 1) * 1000 - Date.now();
  if (wait > 0) await sleep(wait);
  await quietFor(2000);
}

/** Until no paced call is in flight (a held one) and none has ended for `ms`. */
async function quietFor(ms: number): Promise<void> {
  const received = (): number => (proxy.sizes()[SHARD_SYNC]?.count ?? 0) + (proxy.sizes()[CHAIN_SYNC]?.count ?? 0);
  for (;;) {
    const last = Math.max(0, ...pacedCalls.map((c) => c.receivedMs + c.durationMs));
    const left = last + ms - Date.now();
    if (left <= 0 && received() === pacedCalls.length) return;
    await sleep(Math.max(left, 500));
  }
}

/** Held calls per route in the hook server's log lines (`heldMs`), after the log's pino buffer is flushed. */
function heldSyncs(log: string): Record<string, number> {
  const held: Record<string, number> = {};
  for (const line of log.split('\n')) {
    if (!line.includes('"msg":"hook"') || !line.includes('"heldMs"')) continue;
    const entry = JSON.parse(line) as { controller: string; hook: string; heldMs: number };
    if (entry.heldMs > 0)
      held[`${entry.controller}/${entry.hook}`] = (held[`${entry.controller}/${entry.hook}`] ?? 0) + 1;
  }
  return held;
}
