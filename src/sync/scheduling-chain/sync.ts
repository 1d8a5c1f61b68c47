/**
 * @module `gpustack-scheduling-chain`: stage 4 of the chain. Turns the managed Nodes into
 * ResourceFlavors, derived InstanceTypes and the per-card AdmissionCheck (docs/architecture.md#controllers, #kueue-objects).
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  sortObjects,
  type CompositeSyncResponse,
  type CustomizeResponse,
  type InstanceType,
  type NodeShard,
  type Topology,
  type SyncOutcome,
} from '../../k8s/index.js';
import { deviceResourceOf, enabledManufacturers, resolveSettings } from '../../contracts/index.js';
import { buildDeviceClasses } from '../../dra/index.js';
import {
  MANAGED_LABEL,
  NODE_SHARD_LABEL,
  PART_OF_LABEL,
  PART_OF_VALUE,
  PROFILED_LABEL,
  TOPOLOGY_PROFILE_LABEL,
} from '../../nodefeature/index.js';
import {
  INSTANCE_TYPE_KEY,
  NODE_KEY,
  NODE_PROFILE_KEY,
  NODE_SHARD_KEY,
  RESOURCE_FLAVOR_KEY,
  RETRY_AFTER_SECONDS,
  TOPOLOGY_KEY,
  keepObservedChildren,
  refuse,
  type SyncContext,
} from '../common/index.js';
import {
  buildAdmissionCheck,
  buildChainSettings,
  buildDerivedInstanceType,
  buildNodeShard,
  buildResourceFlavor,
  buildStickyInstanceType,
  buildTopology,
} from './children.js';
import { extractNodeViews, extractShardMembers, planChain, type FlavorPlan } from './pools.js';
import type { ChildObject } from './schema.js';
import type { SchedulingChainCustomizeRequest, SchedulingChainSyncRequest } from './schema.js';
import { computeChainStatus, computeRefusedStatus } from './status.js';
import { topologyReadyCondition } from './topology-status.js';

/**
 * Relates the NodeProfiles in no shard yet (profiles of a release before shards, until node-profile
 * labels them) and the managed Nodes that have no profile yet, read whole. Every other managed
 * Node reaches the chain through the summaries of its NodeShards, the chain's children, so no
 * chain request holds every Node (docs/architecture.md#node-shards). The profiles'
 * label selector matches no Node: Metacontroller before v4 matches a changed related object
 * against every rule's selector whatever its kind, and a rule without one would re-sync the chain
 * on every Node write (heartbeats included).
 */
export function customizeSchedulingChain(_request: SchedulingChainCustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [
      {
        apiVersion: GPUSTACK_API_VERSION,
        resource: 'nodeprofiles',
        labelSelector: {
          matchLabels: { [PART_OF_LABEL]: PART_OF_VALUE },
          matchExpressions: [{ key: NODE_SHARD_LABEL, operator: 'DoesNotExist' }],
        },
      },
      {
        apiVersion: 'v1',
        resource: 'nodes',
        labelSelector: {
          matchLabels: { [MANAGED_LABEL]: 'true' },
          matchExpressions: [{ key: PROFILED_LABEL, operator: 'DoesNotExist' }],
        },
      },
    ],
  };
}

/**
 * Desired state of the scheduling chain. Refuses (429) while the related Nodes are not in the
 * request; with invalid settings it reports `Ready=False` and keeps the last good children — the
 * ChainSettings among them, so node-profile goes on with the last good settings.
 * @example syncSchedulingChain(request, { now: '2026-01-01T00:00:00Z' }) // { ok: true, response: { children: [...], status } }
 */
export function syncSchedulingChain(
  request: SchedulingChainSyncRequest,
  context: SyncContext,
): SyncOutcome<CompositeSyncResponse> {
  const { parent, related, children } = request;
  const previous = parent.status?.conditions;
  if (parent.metadata.name !== SCHEDULING_CHAIN_NAME) {
    const status = computeRefusedStatus(
      'NotDefault',
      `only the SchedulingChain named "${SCHEDULING_CHAIN_NAME}" is used; this one is ignored`,
      0,
      previous,
      context.now,
    );
    return { ok: true, response: { status, children: [] } };
  }
  const missing = [NODE_PROFILE_KEY, NODE_KEY].filter((key) => related[key] === undefined);
  if (missing.length > 0) {
    const keys = missing.length === 1 ? `${missing.join('')} is` : `${missing.join(' and ')} are`;
    return refuse('MissingRelated', `related ${keys} missing: the customize hook has not been applied yet`);
  }
  // Unsorted: planChain visits members by name itself, and the count below needs no order.
  const observedShards = Object.values(children[NODE_SHARD_KEY] ?? {});
  const members = [
    ...extractShardMembers(observedShards),
    ...extractNodeViews(Object.values(related[NODE_PROFILE_KEY] ?? {}), Object.values(related[NODE_KEY] ?? {})),
  ];
  const resolution = resolveSettings(parent.spec);
  if (!resolution.ok) {
    const managed = members.reduce((sum, m) => sum + (m.view.labels?.[MANAGED_LABEL] === 'true' ? m.nodes : 0), 0);
    const status = computeRefusedStatus('InvalidSettings', resolution.message, managed, previous, context.now);
    return {
      ok: true,
      response: { status, children: keepObservedChildren(children), resyncAfterSeconds: RETRY_AFTER_SECONDS },
    };
  }
  const { settings } = resolution;
  const plan = planChain(members, settings, enabledManufacturers(settings));
  const observedTypes = sortObjects<InstanceType>(Object.values(children[INSTANCE_TYPE_KEY] ?? {}));
  const observedByName = new Map(observedTypes.map((t) => [t.metadata.name, t]));
  const livePools = new Set(plan.pools.map((p) => p.name));
  // A sticky pool (an observed InstanceType without nodes) keeps its model's classes: claims and
  // templates that name them stay valid until an admin deletes the InstanceType.
  const productKeys = [
    ...plan.pools.flatMap((pool) => (pool.manufacturer !== undefined ? [pool.key] : [])),
    ...observedTypes.flatMap((t) => (t.spec.acceleratable && t.spec.acceleratorGroup ? [t.spec.acceleratorGroup] : [])),
  ];
  const manufacturers = enabledManufacturers(settings);
  const desired = [
    ...plan.flavors.map((flavor) => buildResourceFlavor(flavor, settings)),
    ...plan.pools
      .filter((pool) => settings.deriveInstanceTypes || observedByName.has(pool.name))
      .map((pool) => buildDerivedInstanceType(pool, observedByName.get(pool.name))),
    ...observedTypes.filter((t) => !livePools.has(t.metadata.name)).map(buildStickyInstanceType),
    ...(settings.admissionCheck === 'Enabled' ? [buildAdmissionCheck()] : []),
    buildChainSettings(settings),
    ...buildDeviceClasses(manufacturers, productKeys, (mfr) => deviceResourceOf(settings, mfr)),
    ...shardIndexes(settings.nodeShards, observedShards).map(buildNodeShard),
    ...desiredTopologies(plan.flavors, children[RESOURCE_FLAVOR_KEY], children[TOPOLOGY_KEY]),
  ];
  const topology = topologyReadyCondition({
    mode: settings.topology?.mode ?? 'Disabled',
    desiredFlavors: plan.flavors,
    observedFlavors: Object.values(children[RESOURCE_FLAVOR_KEY] ?? {}),
    observedTopologies: Object.values(children[TOPOLOGY_KEY] ?? {}),
  });
  const status = computeChainStatus(plan, observedTypes, topology, previous, context.now);
  return { ok: true, response: { status, children: sortObjects(desired) } };
}

/**
 * The shards to keep: 0 … `count` − 1, and every observed one beyond that still summarising
 * profiles (or not summarised yet): a Node keeps its shard when the count shrinks, so its shard
 * stays until its last Node leaves.
 */
function shardIndexes(count: number, observed: readonly NodeShard[]): number[] {
  const indexes = new Set<number>(Array.from({ length: count }, (_, i) => i));
  for (const shard of observed) if (shard.status?.profiles !== 0) indexes.add(shard.spec.index);
  return [...indexes].sort((a, b) => a - b);
}

function textAt(object: unknown, ...path: string[]): unknown {
  let at: unknown = object;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/**
 * One Topology per profile of a desired flavor, and every observed one an observed flavor still
 * names (docs/architecture.md#topology-migration): when a profile changes, the old flavor is
 * deleted but stays, terminating, while its ClusterQueue still lists it (Kueue's
 * `resource-in-use` finalizer), and its Topology stays with it, as observed (a Topology's levels
 * are immutable), so work admitted through it is never left with a missing Topology.
 */
function desiredTopologies(
  flavors: readonly FlavorPlan[],
  observedFlavors: Readonly<Record<string, ChildObject>> | undefined,
  observedTopologies: Readonly<Record<string, ChildObject>> | undefined,
): Topology[] {
  const out = new Map<string, Topology>();
  for (const { topology } of flavors) {
    if (topology === undefined) continue;
    const built = buildTopology(topology.profile, topology.levels);
    out.set(built.metadata.name, built);
  }
  for (const flavor of Object.values(observedFlavors ?? {})) {
    const name = textAt(flavor, 'spec', 'topologyName');
    if (typeof name !== 'string' || out.has(name)) continue;
    const observed = observedTopologies?.[name];
    const levels = textAt(observed, 'spec', 'levels');
    const profile = observed?.metadata.labels?.[TOPOLOGY_PROFILE_LABEL];
    if (!Array.isArray(levels) || profile === undefined) continue;
    const labels = levels.map((level) => textAt(level, 'nodeLabel'));
    if (labels.length === 0 || !labels.every((label): label is string => typeof label === 'string')) continue;
    out.set(name, buildTopology(profile, labels));
  }
  return [...out.values()];
}
