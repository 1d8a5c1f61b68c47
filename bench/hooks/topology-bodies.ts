/**
 * @module The hook requests of one cluster with topology off and on (issue 44), as Metacontroller
 * sends them once the chain has converged: the chain's (its NodeShards with their summaries and
 * every other child observed; no NodeProfile), one NodeShard's (its profiles), the instance-type
 * hook's for the device pool with the most flavors (the flavors, Topologies, namespaces, its
 * queues) and node-profile's for one Node. The converged objects come from `renderChain`, which
 * runs the same hooks the same way (docs/architecture.md#node-shards). Pure.
 */
import type { Node } from '../../src/k8s/index.js';
import { NODE_SHARD_LABEL } from '../../src/nodefeature/index.js';
import { renderChain, type RenderedObject } from '../../src/render/index.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const NOW = '2026-02-01T08:00:00Z';

/** The chain's child kinds (manifests/compositecontrollers/scheduling-chain.yaml). */
const CHAIN_CHILD_KINDS = new Set([
  'ResourceFlavor',
  'InstanceType',
  'AdmissionCheck',
  'ChainSettings',
  'DeviceClass',
  'NodeShard',
  'Topology',
]);

export type TopologyHook = 'scheduling-chain' | 'node-shard' | 'instance-type' | 'node-profile';
export const TOPOLOGY_HOOKS: readonly TopologyHook[] = [
  'scheduling-chain',
  'node-shard',
  'instance-type',
  'node-profile',
];

export interface TopologyBodies {
  readonly topology: boolean;
  readonly nodes: number;
  /** Request bodies, JSON text, by hook. */
  readonly bodies: Readonly<Record<TopologyHook, string>>;
  readonly flavors: number;
  readonly topologies: number;
  /** Node groups in all shard summaries together: what the chain's request grows with. */
  readonly summaryGroups: number;
  readonly shards: number;
}

type Json = Record<string, unknown>;

function controller(kind: string, name: string): Json {
  return { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind, metadata: { name } };
}

function objectMap(objects: readonly RenderedObject[], declared: readonly string[] = []): Record<string, Json> {
  const map: Record<string, Record<string, unknown>> = Object.fromEntries(declared.map((key) => [key, {}]));
  for (const object of objects) {
    const inner = object.metadata.namespace
      ? `${object.metadata.namespace}/${object.metadata.name}`
      : object.metadata.name;
    (map[`${object.kind}.${object.apiVersion}`] ??= {})[inner] = object;
  }
  return map;
}

const labelsOf = (object: RenderedObject): Record<string, string> =>
  (object.metadata as { labels?: Record<string, string> }).labels ?? {};

/** The SchedulingChain `default`, with topology on (`{mode: Auto}`) or absent. */
export function chainOf(topology: boolean): {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Json;
} {
  return {
    apiVersion: GPUSTACK,
    kind: 'SchedulingChain',
    metadata: { name: 'default' },
    spec: topology ? { topology: { mode: 'Auto' } } : {},
  };
}

/** The instance-type hook's request for the device pool with the most flavors: its InstanceType, queues and related objects. */
function instanceTypeBody(objects: readonly RenderedObject[], namespaces: readonly string[]): Json {
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const types = ofKind('InstanceType').filter((t) => (t['spec'] as { acceleratable?: boolean }).acceleratable);
  const flavors = ofKind('ResourceFlavor');
  const flavorsOfType = (name: string) =>
    (
      ofKind('ClusterQueue').find((q) => q.metadata.name === name)?.['spec'] as
        { resourceGroups?: { flavors: unknown[] }[] } | undefined
    )?.resourceGroups?.[0]?.flavors.length ?? 0;
  const type = [...types].sort((a, b) => flavorsOfType(b.metadata.name) - flavorsOfType(a.metadata.name))[0];
  if (type === undefined) throw new Error('bench topology: no device pool');
  const check = ofKind('AdmissionCheck').map((c) => ({
    ...c,
    status: { conditions: [{ type: 'Active', status: 'True', reason: 'Ready', message: '', lastTransitionTime: NOW }] },
  }));
  return {
    controller: controller('CompositeController', 'gpustack-instance-type'),
    parent: type,
    children: objectMap(
      objects.filter(
        (o) =>
          (o.kind === 'ClusterQueue' && o.metadata.name === type.metadata.name) ||
          (o.kind === 'LocalQueue' &&
            (o['spec'] as { clusterQueue?: string } | undefined)?.clusterQueue === type.metadata.name),
      ),
      [`ClusterQueue.${KUEUE}`, `LocalQueue.${KUEUE}`],
    ),
    related: objectMap(
      [
        ...ofKind('ChainSettings'),
        ...flavors,
        ...namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
        ...check,
        ...ofKind('Topology'),
      ],
      [
        `ChainSettings.${GPUSTACK}`,
        `ResourceFlavor.${KUEUE}`,
        'Namespace.v1',
        `AdmissionCheck.${KUEUE}`,
        `Topology.${KUEUE}`,
      ],
    ),
    finalizing: false,
  };
}

/** The converged cluster's hook requests. Throws when the chain refuses (it must not, on generated Nodes). */
export function topologyBodies(
  nodes: readonly Node[],
  namespaces: readonly string[],
  topology: boolean,
): TopologyBodies {
  const chain = chainOf(topology);
  const rendered = renderChain({ nodes, namespaces, chain }, { now: NOW });
  if (!rendered.ok) throw new Error(`bench topology: render refused: ${rendered.error.message}`);
  const { objects } = rendered;
  const ofKind = (kind: string) => objects.filter((o) => o.kind === kind);
  const chainChildren = objects.filter((o) => CHAIN_CHILD_KINDS.has(o.kind));
  const shards = ofKind('NodeShard');
  const chainBody = {
    controller: controller('CompositeController', 'gpustack-scheduling-chain'),
    parent: chain,
    children: objectMap(chainChildren),
    related: { [`NodeProfile.${GPUSTACK}`]: {}, 'Node.v1': {} },
    finalizing: false,
  };

  const profiles = ofKind('NodeProfile');
  const shard = shards[0];
  if (shard === undefined) throw new Error('bench topology: no NodeShard');
  const index = String((shard['spec'] as { index: number }).index);
  const shardBody = {
    controller: controller('CompositeController', 'gpustack-node-shard'),
    parent: shard,
    children: {},
    related: objectMap(
      profiles.filter((p) => labelsOf(p)[NODE_SHARD_LABEL] === index),
      [`NodeProfile.${GPUSTACK}`],
    ),
    finalizing: false,
  };

  const typeBody = instanceTypeBody(objects, namespaces);

  const [node] = nodes;
  const profiled = rendered.nodes[0];
  if (node === undefined || profiled === undefined) throw new Error('bench topology: no Node');
  const labels = { ...node.metadata.labels };
  for (const [key, value] of Object.entries(profiled.labels)) {
    if (value === null) delete labels[key];
    else labels[key] = value;
  }
  const nodeBody = {
    controller: controller('DecoratorController', 'gpustack-node-profile'),
    parent: { ...node, metadata: { ...node.metadata, labels } },
    children: objectMap(
      profiles.filter((p) => p.metadata.name === node.metadata.name),
      [`NodeProfile.${GPUSTACK}`],
    ),
    related: objectMap(ofKind('ChainSettings'), [`ChainSettings.${GPUSTACK}`]),
    finalizing: false,
  };

  const summaryGroups = shards.reduce(
    (sum, s) => sum + ((s['status'] as { groups?: unknown[] } | undefined)?.groups?.length ?? 0),
    0,
  );
  return {
    topology,
    nodes: nodes.length,
    bodies: {
      'scheduling-chain': JSON.stringify(chainBody),
      'node-shard': JSON.stringify(shardBody),
      'instance-type': JSON.stringify(typeBody),
      'node-profile': JSON.stringify(nodeBody),
    },
    flavors: ofKind('ResourceFlavor').length,
    topologies: ofKind('Topology').length,
    summaryGroups,
    shards: shards.length,
  };
}
