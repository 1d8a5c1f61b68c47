/**
 * @module `gpustack-node-profile`: stage 3 of the chain. Stamps `gpustack.ai/managed`, the
 * general (CPU) key and the per-card capacity labels on each Node (docs/architecture.md#labels), and derives
 * device labels from a vendor's labels where our agent has published none (`deviceLabelSources`).
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  type CustomizeResponse,
  type DecoratorSyncResponse,
  type Node,
  type NodeProfileOutput,
  type SyncOutcome,
} from '../../k8s/index.js';
import {
  MANAGED_LABEL,
  NODE_SHARD_LABEL,
  PART_OF_LABEL,
  PART_OF_VALUE,
  PROFILED_LABEL,
  constructProfile,
  constructTopologyProfile,
  extractChainViewAfter,
  nodeShardOf,
  parseNodeShard,
  type LabelChanges,
} from '../../nodefeature/index.js';
import { NODE_PROFILE_KEY, refuse, settingsForNodes } from '../common/index.js';
import { deviceResourceOf, enabledManufacturers } from '../../contracts/index.js';
import type { NodeProfileCustomizeRequest, NodeProfileSyncRequest } from './schema.js';

/**
 * Relates the ChainSettings `default`, so a settings change re-labels every node. Not the
 * SchedulingChain: its status changes whenever one Node's cards do, and every Node relating it
 * would re-sync (N+1 syncs per change); the ChainSettings changes only with the settings.
 */
export function customizeNodeProfile(_request: NodeProfileCustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [{ apiVersion: GPUSTACK_API_VERSION, resource: 'chainsettings', names: [SCHEDULING_CHAIN_NAME] }],
  };
}

/**
 * The NodeProfile of a Node as Metacontroller leaves it after a sync answering `changes` (none:
 * the Node as it is): what the chain reads of it (see `extractChainView`), in `shard` when given
 * (none: the chain relates the profile itself).
 */
export function buildNodeProfile(
  node: Node,
  changes: { readonly labels?: LabelChanges; readonly annotations?: LabelChanges } = {},
  shard?: number,
): NodeProfileOutput {
  const cpu = node.status?.capacity?.['cpu'];
  const view = extractChainViewAfter(
    {
      name: node.metadata.name,
      labels: node.metadata.labels,
      annotations: node.metadata.annotations,
      ...(cpu !== undefined ? { cpuCapacity: cpu } : {}),
    },
    changes,
  );
  return {
    apiVersion: GPUSTACK_API_VERSION,
    kind: 'NodeProfile',
    metadata: {
      name: node.metadata.name,
      labels: { [PART_OF_LABEL]: PART_OF_VALUE, ...(shard !== undefined ? { [NODE_SHARD_LABEL]: String(shard) } : {}) },
    },
    spec: {
      labels: { ...view.labels },
      ...(view.annotations !== undefined ? { annotations: { ...view.annotations } } : {}),
      ...(view.cpuCapacity !== undefined ? { cpuCapacity: String(view.cpuCapacity) } : {}),
    },
  };
}

/**
 * Labels one Node, by the ChainSettings `default` (see `settingsForNodes` for its absence), and
 * writes a managed Node's NodeProfile — the part of it the chain reads —, marking the Node
 * `gpustack.ai/profiled=true` (the chain reads managed Nodes without the mark whole). The
 * chain keeps its last good ChainSettings while its own spec is invalid, so node-profile goes on
 * with the last good settings; a ChainSettings that itself fails the schema → refusal (429):
 * labelling by a guess could unmanage nodes.
 * @example syncNodeProfile({ parent: node, related: {} }) // { ok: true, response: { labels: { 'gpustack.ai/managed': 'true', … } } }
 */
export function syncNodeProfile(request: NodeProfileSyncRequest): SyncOutcome<DecoratorSyncResponse> {
  const resolution = settingsForNodes(request.related);
  if (!resolution.ok) {
    return refuse('InvalidSettings', `ChainSettings ${SCHEDULING_CHAIN_NAME}: ${resolution.message}`);
  }
  const { settings } = resolution;
  const node = request.parent;
  const capacity = node.status?.capacity;
  const manufacturers = enabledManufacturers(settings);
  const profile = constructProfile(
    { labels: node.metadata.labels, annotations: node.metadata.annotations, cpuCapacity: capacity?.['cpu'], capacity },
    {
      nodeManagement: settings.nodeManagement,
      generalKey: settings.generalKey,
      mixedOnNode: settings.mixedOnNode,
      manufacturers,
      deviceLabelSources: settings.deviceLabelSources,
      deviceResources: Object.fromEntries([...manufacturers].map((mfr) => [mfr, deviceResourceOf(settings, mfr)])),
    },
  );
  const managedChange = profile.labels[MANAGED_LABEL];
  const managed = managedChange === undefined ? node.metadata.labels?.[MANAGED_LABEL] : managedChange;
  // The topology profile and its levels (docs/architecture.md#topology): only while topology is on.
  const topology = constructTopologyProfile(node.metadata, managed === 'true', settings.topology);
  Object.assign(profile.labels, topology.labels);
  Object.assign(profile.annotations, topology.annotations);
  const annotations = Object.keys(profile.annotations).length > 0 ? { annotations: profile.annotations } : {};
  const marked = node.metadata.labels?.[PROFILED_LABEL] !== undefined;
  if (managed !== 'true') {
    // Unmanaged: no profile (Metacontroller deletes one left from before), and no mark of one.
    const unmark = marked ? { [PROFILED_LABEL]: null } : {};
    return { ok: true, response: { labels: { ...profile.labels, ...unmark }, ...annotations, attachments: [] } };
  }
  // The mark takes the Node out of what the chain reads whole. A Node the chain may be reading
  // whole right now (managed, unmarked: an upgrade, or an admin's label) keeps it off until its
  // profile exists — Metacontroller writes a decorator's labels before its attachments, so both in
  // one sync would drop the Node from its pools in between. Any other Node is marked at once.
  const observed = request.children[NODE_PROFILE_KEY]?.[node.metadata.name];
  const readWhole = node.metadata.labels?.[MANAGED_LABEL] === 'true' && !marked;
  const marks = observed !== undefined || !readWhole;
  const mark = marks ? { [PROFILED_LABEL]: 'true' } : {};
  // The profile joins a shard with the mark, not before: while the chain reads the Node whole it
  // also reads the profile itself and counts the Node once (a shard's summary carries no names to
  // match). Once set, the shard is kept, so a Node never moves between shards (counted twice or
  // lost while two summaries catch up) — not even when the settings' nodeShards changes.
  const shard = marks
    ? (parseNodeShard(observed?.metadata.labels?.[NODE_SHARD_LABEL]) ??
      nodeShardOf(node.metadata.name, settings.nodeShards))
    : undefined;
  const attachment = buildNodeProfile(node, { labels: profile.labels, annotations: profile.annotations }, shard);
  return {
    ok: true,
    response: { labels: { ...profile.labels, ...mark }, ...annotations, attachments: [attachment] },
  };
}
