// The sharded path equals the old one: the chain planning from NodeShard summaries answers exactly
// as the chain relating every NodeProfile (docs/architecture.md#node-shards), on every example
// cluster, under settings that change what a Node contributes, with several shard counts.
import { describe, expect, it } from 'vitest';
import { sortObjects, type Node, type SchedulingChain } from '../../src/k8s/index.js';
import { NODE_SHARD_LABEL } from '../../src/nodefeature/index.js';
import { renderChain, type RenderedObject } from '../../src/render/index.js';
import * as sync from '../../src/sync/index.js';
import { generateNodes } from '../../bench/shared/cluster-nodes.js';
import { NOW } from '../support/hooks.js';
import { listClusterFiles, loadClusterNodes } from '../support/nodes.js';

const GPUSTACK = 'worker.gpustack.ai/v1alpha1';

function chainOf(spec: Record<string, unknown>): SchedulingChain {
  return { apiVersion: GPUSTACK, kind: 'SchedulingChain', metadata: { name: 'default' }, spec };
}

const byName = <T extends { metadata: { name: string } }>(objects: readonly T[]): Record<string, T> =>
  Object.fromEntries(objects.map((o) => [o.metadata.name, o]));

const shardOf = (profile: RenderedObject): string | undefined =>
  (profile.metadata as { labels?: Record<string, string> }).labels?.[NODE_SHARD_LABEL];

function withoutShard(profile: RenderedObject): RenderedObject {
  const metadata = profile.metadata as { name: string; labels: Record<string, string> };
  const { [NODE_SHARD_LABEL]: _shard, ...labels } = metadata.labels;
  return { ...profile, metadata: { ...metadata, labels } as RenderedObject['metadata'] };
}

function syncChain(chain: SchedulingChain, children: unknown, profiles: readonly RenderedObject[]) {
  const request = sync.SchedulingChainSyncRequestSchema.parse({
    parent: chain,
    children,
    related: { [sync.NODE_PROFILE_KEY]: byName(profiles), [sync.NODE_KEY]: {} },
    finalizing: false,
  });
  const outcome = sync.syncSchedulingChain(request, { now: NOW });
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.response;
}

/**
 * The chain's answer both ways from the NodeProfiles node-profile writes: relating every profile
 * (the old path), and from the summaries of the NodeShards its first answer emits.
 */
function bothWays(nodes: readonly Node[], spec: Record<string, unknown>) {
  const chain = chainOf(spec);
  const rendered = renderChain({ nodes, chain, namespaces: ['default'] }, { now: NOW });
  if (!rendered.ok) throw new Error(rendered.error.message);
  const profiles = rendered.objects.filter((o) => o.kind === 'NodeProfile');
  const old = syncChain(chain, {}, profiles.map(withoutShard));
  const shards = old.children
    .filter((child) => child.kind === 'NodeShard')
    .map((shard) => {
      const index = String((shard['spec'] as { index: number }).index);
      const request = sync.NodeShardSyncRequestSchema.parse({
        parent: shard,
        related: { [sync.NODE_PROFILE_KEY]: byName(profiles.filter((p) => shardOf(p) === index)) },
        children: {},
        finalizing: false,
      });
      const outcome = sync.syncNodeShard(request);
      if (!outcome.ok) throw new Error(outcome.error.message);
      return { ...shard, status: outcome.response.status };
    });
  const sharded = syncChain(chain, { [sync.NODE_SHARD_KEY]: byName(shards) }, []);
  const chainKinds = (children: readonly { kind: string }[]) => children.filter((c) => c.kind !== 'NodeShard');
  const renderedChain = sortObjects(
    rendered.objects.filter((o) =>
      ['ResourceFlavor', 'InstanceType', 'AdmissionCheck', 'ChainSettings', 'DeviceClass', 'Topology'].includes(o.kind),
    ),
  );
  return { old, sharded, shards, profiles, rendered, renderedChain, chainKinds };
}

/** `count` copies of a cluster's Nodes under new names: enough skipped Nodes to pass the status bound. */
function copies(nodes: readonly Node[], count: number): Node[] {
  return Array.from({ length: count }, (_, i) =>
    nodes.map((n) => ({ ...n, metadata: { ...n.metadata, name: `${n.metadata.name}-${String(i).padStart(3, '0')}` } })),
  ).flat();
}

const SETTINGS: readonly Record<string, unknown>[] = [
  {},
  { nodeShards: 1 },
  { nodeShards: 3, mixedOnNode: false },
  { nodeShards: 7, generalKey: 'CPUModel' },
  { manufacturers: [{ name: 'nvidia' }], mixedOnNode: false },
  { nodeShards: 5, topology: { mode: 'Auto' } },
];

describe('the chain from NodeShard summaries equals the chain from every NodeProfile', () => {
  it.each(listClusterFiles().flatMap((file) => SETTINGS.map((spec) => [file, spec] as const)))(
    '%s with %j',
    (file, spec) => {
      const { old, sharded, rendered, renderedChain, chainKinds, profiles, shards } = bothWays(
        loadClusterNodes(file),
        spec,
      );
      expect(chainKinds(sharded.children)).toEqual(chainKinds(old.children));
      expect(sharded.status).toEqual(old.status);
      // render takes the sharded path: its chain objects are the old path's children.
      expect(renderedChain).toEqual(chainKinds(old.children));
      expect(rendered.objects.filter((o) => o.kind === 'NodeShard')).toHaveLength(shards.length);
      // Every profile is in exactly one shard, and the summaries count each once.
      const counted = shards.reduce((sum, s) => sum + (s.status as { profiles: number }).profiles, 0);
      expect(counted).toBe(profiles.length);
      expect(profiles.every((p) => shardOf(p) !== undefined)).toBe(true);
    },
  );

  it('on 600 generated Nodes in 4 shards: the same answer from a request without a single NodeProfile', () => {
    const { old, sharded, shards, chainKinds } = bothWays(generateNodes(600), { nodeShards: 4 });
    expect(chainKinds(sharded.children)).toEqual(chainKinds(old.children));
    expect(sharded.status).toEqual(old.status);
    // Groups are Node kinds, not Nodes: the summaries hold far fewer entries than the 600 Nodes.
    const groups = shards.flatMap((s) => (s.status as { groups: unknown[] }).groups);
    expect(groups.length).toBeLessThan(200);
    expect((old.status as { managedNodes: number }).managedNodes).toBe(600);
  });

  it('past the status bound: the first 100 skipped Nodes and the count of all of them, as before', () => {
    const nodes = copies(loadClusterNodes('garbage-labels.yaml'), 60);
    const { old, sharded } = bothWays(nodes, { nodeShards: 5 });
    const status = sharded.status as { skippedNodes?: unknown[]; conditions: { type: string; message: string }[] };
    expect(status.skippedNodes).toHaveLength(100);
    expect(status.conditions.find((c) => c.type === 'NodesSkipped')?.message).toMatch(/^\d{3} nodes are left out/);
    expect(sharded.status).toEqual(old.status);
    expect(sharded.children.filter((c) => c.kind !== 'NodeShard')).toEqual(
      old.children.filter((c) => c.kind !== 'NodeShard'),
    );
  });
});
