/**
 * @module The whole chain offline: node-profile on every Node (by the ChainSettings the chain
 * writes from its spec; its labels and NodeProfiles), then scheduling-chain on the NodeProfiles, the
 * node-devices-check decorator on its AdmissionCheck, and instance-type on every InstanceType —
 * the same functions the hooks run, fed the objects Metacontroller would relate.
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  SchedulingChainStatusSchema,
  sortObjects,
  type CompositeSyncResponse,
  type DecoratorSyncResponse,
  type Node,
  type SchedulingChain,
  type SyncOutcome,
  type SyncRefusal,
} from '../k8s/index.js';
import { resolveSettings } from '../contracts/index.js';
import { MANAGED_LABEL, NODE_SHARD_LABEL, PROFILED_LABEL, applyChanges } from '../nodefeature/index.js';
import * as sync from '../sync/index.js';

export interface RenderInput {
  readonly nodes: readonly Node[];
  /** The SchedulingChain `default`; absent → default settings. */
  readonly chain?: SchedulingChain | undefined;
  /** Namespaces that exist in the cluster (LocalQueues go to the eligible ones). */
  readonly namespaces: readonly string[];
}

export interface RenderedNode {
  readonly name: string;
  /** What node-profile answers: a value sets the label, `null` removes it. */
  readonly labels: Record<string, string | null>;
  /** Annotations node-profile sets or removes (its record of derived device labels); present when any. */
  readonly annotations?: Record<string, string | null>;
}

/** Plain desired objects, sorted (apiVersion, kind, namespace, name). */
export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
  readonly [field: string]: unknown;
}

/** A node left out of a pool, as the SchedulingChain status reports it. */
export interface RenderedSkip {
  readonly name: string;
  readonly reason: string;
  readonly message: string;
}

export type RenderResult =
  | {
      readonly ok: true;
      readonly nodes: RenderedNode[];
      readonly objects: RenderedObject[];
      readonly skipped: RenderedSkip[];
      /** Labels of pooled nodes that could not be read (`status.unreadableLabels`); present when any. */
      readonly unreadable?: RenderedSkip[];
    }
  | { readonly ok: false; readonly error: SyncRefusal };

const DEFAULT_CHAIN: SchedulingChain = {
  apiVersion: GPUSTACK_API_VERSION,
  kind: 'SchedulingChain',
  metadata: { name: SCHEDULING_CHAIN_NAME },
  spec: {},
};

/** The Node as Metacontroller leaves it after node-profile's answer. */
function applyProfile(
  node: Node,
  labels: Record<string, string | null>,
  annotations: Record<string, string | null>,
): Node {
  const metadata = { ...node.metadata, labels: applyChanges(node.metadata.labels, labels) };
  if (Object.keys(annotations).length > 0) metadata.annotations = applyChanges(node.metadata.annotations, annotations);
  return { ...node, metadata };
}

/**
 * node-profile on a Node as Metacontroller converges it: a second sync sees the NodeProfile the
 * first one wrote, and only then marks the Node `gpustack.ai/profiled`.
 */
function profileNode(node: Node, related: sync.NodeProfileSyncRequest['related']): SyncOutcome<DecoratorSyncResponse> {
  const first = sync.syncNodeProfile({ parent: node, children: {}, related, finalizing: false });
  if (!first.ok || (first.response.attachments ?? []).length === 0) return first;
  const children = { [sync.NODE_PROFILE_KEY]: byName(first.response.attachments ?? []) };
  return sync.syncNodeProfile({ parent: node, children, related, finalizing: false });
}

function byName<T extends { metadata: { name: string; namespace?: string | undefined } }>(
  objects: readonly T[],
): Record<string, T> {
  return Object.fromEntries(
    objects.map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, o]),
  );
}

/**
 * The chain as Metacontroller converges it: a first sync emits the NodeShards, each shard's
 * controller summarises the profiles labelled with its index, and a second sync plans from those
 * summaries, with what the chain relates itself: profiles in no shard and managed Nodes without one
 * (none here). The NodeShards come back with their status, as the live objects have it.
 */
function syncChainWithShards(
  chain: SchedulingChain,
  nodeProfiles: readonly RenderedObject[],
  nodes: readonly Node[],
  context: sync.SyncContext,
): SyncOutcome<CompositeSyncResponse> {
  const unprofiled = nodes.filter(
    (n) => n.metadata.labels?.[MANAGED_LABEL] === 'true' && n.metadata.labels[PROFILED_LABEL] === undefined,
  );
  const shardOf = (profile: RenderedObject): string | undefined =>
    (profile.metadata as { labels?: Record<string, string> }).labels?.[NODE_SHARD_LABEL];
  const related = sync.SchedulingChainSyncRequestSchema.shape.related.parse({
    [sync.NODE_PROFILE_KEY]: byName(nodeProfiles.filter((p) => shardOf(p) === undefined)),
    [sync.NODE_KEY]: byName(unprofiled),
  });
  const first = sync.syncSchedulingChain({ parent: chain, children: {}, related, finalizing: false }, context);
  if (!first.ok) return first;
  const shards: RenderedObject[] = [];
  for (const shard of first.response.children.filter((child) => child.kind === 'NodeShard')) {
    const index = String((shard['spec'] as { index: number }).index);
    const mine = nodeProfiles.filter((p) => shardOf(p) === index);
    const request = sync.NodeShardSyncRequestSchema.parse({
      parent: shard,
      related: { [sync.NODE_PROFILE_KEY]: byName(mine) },
    });
    const outcome = sync.syncNodeShard(request);
    if (!outcome.ok) return outcome;
    shards.push({ ...shard, status: outcome.response.status });
  }
  const children = sync.SchedulingChainSyncRequestSchema.shape.children.parse({
    [sync.NODE_SHARD_KEY]: byName(shards),
  });
  const second = sync.syncSchedulingChain({ parent: chain, children, related, finalizing: false }, context);
  if (!second.ok) return second;
  const withStatus = new Map(shards.map((s) => [s.metadata.name, s]));
  return {
    ok: true,
    response: {
      ...second.response,
      children: second.response.children.map((child) =>
        child.kind === 'NodeShard' ? (withStatus.get(child.metadata.name) ?? child) : child,
      ),
    },
  };
}

/**
 * Runs the chain on a node dump. A refusal from any hook (e.g. invalid settings) stops the run.
 * The chain's children reach the downstream hooks as Metacontroller would hand them over: parsed
 * by those hooks' own request schemas, so what `render` feeds them is typed without a cast.
 * @example renderChain({ nodes, namespaces: ['default'] }, { now }) // { ok: true, nodes: [...], objects: [...] }
 */
export function renderChain(input: RenderInput, context: sync.SyncContext): RenderResult {
  const chain = input.chain ?? DEFAULT_CHAIN;
  // node-profile and instance-type relate the ChainSettings the chain writes; invalid settings have none to write here.
  const resolution = resolveSettings(chain.spec);
  if (!resolution.ok)
    return sync.refuse('InvalidSettings', `SchedulingChain ${chain.metadata.name}: ${resolution.message}`);
  const settings = sync.buildChainSettings(resolution.settings);
  const settingsMap = { [sync.CHAIN_SETTINGS_KEY]: { [settings.metadata.name]: settings } };
  const rendered: RenderedNode[] = [];
  const profiled: Node[] = [];
  const nodeProfiles: RenderedObject[] = [];
  for (const node of sortObjects(input.nodes)) {
    const outcome = profileNode(node, settingsMap);
    if (!outcome.ok) return outcome;
    const { labels = {}, annotations = {}, attachments = [] } = outcome.response;
    const changedAnnotations = Object.keys(annotations).length > 0 ? { annotations } : {};
    rendered.push({ name: node.metadata.name, labels, ...changedAnnotations });
    profiled.push(applyProfile(node, labels, annotations));
    nodeProfiles.push(...attachments);
  }
  const chainOutcome = syncChainWithShards(chain, nodeProfiles, profiled, context);
  if (!chainOutcome.ok) return chainOutcome;
  const { children, status } = chainOutcome.response;
  const checks = children
    .filter((child) => child.kind === 'AdmissionCheck')
    .map((check) => {
      const request = sync.NodeDevicesCheckSyncRequestSchema.parse({ parent: check });
      const outcome = sync.syncNodeDevicesCheck(request, context);
      return outcome.ok && outcome.response.status ? { ...check, status: outcome.response.status } : check;
    });
  const related = {
    ...settingsMap,
    [sync.RESOURCE_FLAVOR_KEY]: byName(children.filter((child) => child.kind === 'ResourceFlavor')),
    [sync.NAMESPACE_KEY]: byName(
      input.namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ),
    [sync.ADMISSION_CHECK_KEY]: byName(checks),
    [sync.TOPOLOGY_KEY]: byName(children.filter((child) => child.kind === 'Topology')),
  };
  const objects: RenderedObject[] = [...nodeProfiles, ...children];
  for (const type of children.filter((child) => child.kind === 'InstanceType')) {
    const request = sync.InstanceTypeSyncRequestSchema.parse({ parent: type, related });
    const outcome = sync.syncInstanceType(request, context);
    if (!outcome.ok) return outcome;
    objects.push(...outcome.response.children);
  }
  const { skippedNodes = [], unreadableLabels = [] } = SchedulingChainStatusSchema.partial().parse(status ?? {});
  return {
    ok: true,
    nodes: rendered,
    objects: sortObjects(objects),
    skipped: skippedNodes,
    ...(unreadableLabels.length > 0 ? { unreadable: unreadableLabels } : {}),
  };
}
