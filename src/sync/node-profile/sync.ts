/**
 * @module `gpustack-node-profile`: stage 3 of the chain. Stamps `gpustack.ai/managed`, the
 * general (CPU) key and the per-card capacity labels on each Node (DESIGN §3.1), and derives
 * device labels from a vendor's labels where our agent has published none (`deviceLabelSources`).
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  type CustomizeResponse,
  type DecoratorSyncResponse,
  type SyncOutcome,
} from '../../k8s/index.js';
import { constructProfile } from '../../nodefeature/index.js';
import { deviceResourceOf, enabledManufacturers, refuse, settingsForNodes } from '../common/index.js';
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
 * Labels one Node, by the ChainSettings `default` (see `settingsForNodes` for its absence). The
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
  const annotations = Object.keys(profile.annotations).length > 0 ? { annotations: profile.annotations } : {};
  return { ok: true, response: { labels: profile.labels, ...annotations } };
}
