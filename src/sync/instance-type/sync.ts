/**
 * @module `gpustack-instance-type`: one InstanceType → its same-named ClusterQueue and a LocalQueue
 * in every eligible namespace (docs/architecture.md#kueue-objects), torn down by the finalize hook.
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  checkInstanceTypeSpec,
  matchesSelector,
  sortObjects,
  type CompositeSyncResponse,
  type Condition,
  type CustomizeResponse,
  type Settings,
  type SyncOutcome,
} from '../../k8s/index.js';
import { resolveSettings, enabledManufacturers } from '../../contracts/index.js';
import {
  NODE_DEVICES_CHECK_NAME,
  RESOURCE_TYPE_LABEL,
  RESOURCE_TYPE_NODES,
  RESOURCE_TYPE_TOPOLOGY,
  acceleratorKeyManufacturer,
  localQueueName,
} from '../../nodefeature/index.js';
import {
  ADMISSION_CHECK_KEY,
  CLUSTER_QUEUE_KEY,
  LOCAL_QUEUE_KEY,
  NAMESPACE_KEY,
  RESOURCE_FLAVOR_KEY,
  TOPOLOGY_KEY,
  isTerminating,
  keepObservedChildren,
  objectsOf,
  refuse,
  settingsFromChainSettings,
  type SyncContext,
} from '../common/index.js';
import { buildClusterQueue, buildLocalQueue, type QueuePlan } from './children.js';
import { poolFlavors, poolKeyLabel, selectFlavors, type FlavorSelection } from './flavors.js';
import { poolTopologyCondition } from './topology-status.js';
import type { InstanceTypeCustomizeRequest, InstanceTypeSyncRequest, ReceivedObject } from './schema.js';
import { DEVICES_ANNOTATION, readPoolDevices, statusDevices } from '../../dra/index.js';
import { computeInstanceTypeStatus, type StatusInput } from './status.js';

/** Seconds between finalize calls while Kueue still holds the ClusterQueue. */
const FINALIZE_RECHECK_SECONDS = 5;
const KUBE_SYSTEM = 'kube-system';

/**
 * Relates the settings (the ChainSettings `default`), the flavors, the namespaces, our
 * AdmissionCheck and the chain's Kueue Topologies (for `TopologyReady`; they change only with a
 * profile). Not the SchedulingChain: its status changes whenever one Node's cards do, and
 * every InstanceType relating it would re-sync; the ChainSettings changes only with the settings.
 */
export function customizeInstanceType(_request: InstanceTypeCustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [
      { apiVersion: GPUSTACK_API_VERSION, resource: 'chainsettings', names: [SCHEDULING_CHAIN_NAME] },
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        resource: 'resourceflavors',
        labelSelector: { matchLabels: { [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_NODES } },
      },
      { apiVersion: 'v1', resource: 'namespaces' },
      { apiVersion: 'kueue.x-k8s.io/v1beta2', resource: 'admissionchecks', names: [NODE_DEVICES_CHECK_NAME] },
      {
        apiVersion: 'kueue.x-k8s.io/v1beta2',
        resource: 'topologies',
        labelSelector: { matchLabels: { [RESOURCE_TYPE_LABEL]: RESOURCE_TYPE_TOPOLOGY } },
      },
    ],
  };
}

/**
 * Namespaces that get a LocalQueue: the settings' selector, or all but kube-system and the system
 * namespace; plus those in `kept` (namespaces whose LocalQueue stays whatever the settings say).
 */
function eligibleNamespaces(
  namespaces: readonly ReceivedObject[],
  settings: Settings,
  kept: ReadonlySet<string>,
): string[] {
  return namespaces
    .filter((ns) => !isTerminating(ns) && ns.status?.phase !== 'Terminating')
    .filter((ns) =>
      kept.has(ns.metadata.name)
        ? true
        : settings.localQueueNamespaces
          ? matchesSelector(settings.localQueueNamespaces, ns.metadata.labels)
          : ns.metadata.name !== KUBE_SYSTEM && ns.metadata.name !== settings.systemNamespace,
    )
    .map((ns) => ns.metadata.name);
}

/** Our check may be listed only once observed Active: an inactive check would stop the queue. */
function isCheckActive(checks: readonly ReceivedObject[]): boolean {
  const check = checks.find((c) => c.metadata.name === NODE_DEVICES_CHECK_NAME && !isTerminating(c));
  return check?.status?.conditions?.some((c) => c.type === 'Active' && c.status === 'True') ?? false;
}

function finalizeInstanceType(
  request: InstanceTypeSyncRequest,
  base: Omit<StatusInput, 'terminating' | 'selection' | 'problem' | 'topology'>,
  context: SyncContext,
): CompositeSyncResponse {
  const remaining =
    objectsOf(request.children, CLUSTER_QUEUE_KEY).length + objectsOf(request.children, LOCAL_QUEUE_KEY).length;
  const status = computeInstanceTypeStatus(
    { ...base, terminating: true, selection: { flavors: [], dropped: [] } },
    request.parent.status?.conditions,
    context.now,
  );
  // Returning no children makes Metacontroller delete them; release the parent only once they are gone.
  return remaining === 0
    ? { status, children: [], finalized: true }
    : { status, children: [], finalized: false, resyncAfterSeconds: FINALIZE_RECHECK_SECONDS };
}

/**
 * An InstanceType whose spec breaks the CRD's rules (stored before the CRD had them): its values
 * would become invalid labels, so nothing is rebuilt. The observed queues go back unchanged (an
 * empty list would delete them), the status keeps the last reported flavors and capacity and says
 * `Ready=False`, `InvalidSpec`, naming the field.
 */
function keepLastGood(
  request: InstanceTypeSyncRequest,
  base: Omit<StatusInput, 'terminating' | 'selection' | 'problem' | 'topology'>,
  message: string,
  context: SyncContext,
): CompositeSyncResponse {
  const last = request.parent.status;
  const status = computeInstanceTypeStatus(
    {
      ...base,
      terminating: false,
      selection: { flavors: [], dropped: [] },
      problem: { reason: 'InvalidSpec', message: `${message}; the queues are kept as they are until it is fixed` },
      ...lastTopology(last?.conditions),
    },
    last?.conditions,
    context.now,
  );
  return {
    status: { ...status, flavors: last?.flavors ?? [], capacity: last?.capacity ?? '0' },
    children: keepObservedChildren(request.children),
  };
}

/** The last reported `TopologyReady`, kept while nothing is rebuilt. */
function lastTopology(conditions: readonly Condition[] | undefined): Pick<StatusInput, 'topology'> {
  const last = conditions?.find((c) => c.type === 'TopologyReady');
  const status = last?.status;
  if (status !== 'True' && status !== 'False' && status !== 'Unknown') return {};
  return { topology: { type: 'TopologyReady', status, reason: last?.reason ?? '', message: last?.message ?? '' } };
}

/**
 * Desired ClusterQueue and LocalQueues of one InstanceType. Refuses (429) until the related
 * flavors and namespaces are in the request, or while the settings are invalid; with an invalid
 * spec it keeps the last good queues and reports `Ready=False`.
 * @example syncInstanceType(request, { now }) // { ok: true, response: { children: [ClusterQueue, LocalQueue…], status } }
 */
export function syncInstanceType(
  request: InstanceTypeSyncRequest,
  context: SyncContext,
): SyncOutcome<CompositeSyncResponse> {
  const { parent, related, children } = request;
  const name = parent.metadata.name;
  const spec = parent.spec;
  const base = {
    entrance: localQueueName(name),
    inactive: spec.inactive === true,
    acceleratable: spec.acceleratable,
    observedQueue: children[CLUSTER_QUEUE_KEY]?.[name],
  };
  if (request.finalizing || isTerminating(parent))
    return { ok: true, response: finalizeInstanceType(request, base, context) };
  const checked = checkInstanceTypeSpec(spec);
  if (!checked.ok) return { ok: true, response: keepLastGood(request, base, checked.message, context) };
  for (const key of [RESOURCE_FLAVOR_KEY, NAMESPACE_KEY]) {
    if (related[key] === undefined)
      return refuse('MissingRelated', `related ${key} is missing: the customize hook has not been applied yet`);
  }
  // No ChainSettings yet (no SchedulingChain, or before the chain's first sync: the two look
  // alike here): every default, as an InstanceType without a chain gets, but no observed
  // LocalQueue is dropped. Refusing would leave a chain-less InstanceType without queues and
  // retry forever; an empty or narrowed child list would delete queues (and strand the workloads
  // in them) only because an object is missing — e.g. in a namespace that only the chain's
  // `localQueueNamespaces` selects. The defaults can only widen the rest: every manufacturer is
  // enabled, and the check is listed only while the chain keeps it Active. The chain's first
  // ChainSettings re-syncs every InstanceType, and its selector then prunes the LocalQueues.
  const written = settingsFromChainSettings(related);
  const resolution = written ?? resolveSettings({});
  // The chain keeps its last good ChainSettings while its own spec is invalid; only one edited by
  // hand (the CRD does not check it) fails here.
  if (!resolution.ok) return refuse('InvalidSettings', `ChainSettings ${SCHEDULING_CHAIN_NAME}: ${resolution.message}`);
  const { settings } = resolution;
  const kept = new Set(
    written === undefined ? objectsOf(children, LOCAL_QUEUE_KEY).map((queue) => queue.metadata.namespace ?? '') : [],
  );
  const keyLabel = poolKeyLabel(spec);
  const mfr =
    spec.acceleratable && spec.acceleratorGroup ? acceleratorKeyManufacturer(spec.acceleratorGroup) : undefined;
  const usable =
    keyLabel !== undefined && (!spec.acceleratable || (mfr !== undefined && enabledManufacturers(settings).has(mfr)));
  // The ledger's count, as the admission checker annotated it (absent: no checker, no DRA, a CPU pool).
  const devices = spec.acceleratable ? readPoolDevices(parent.metadata.annotations?.[DEVICES_ANNOTATION]) : undefined;
  const selection: FlavorSelection = usable
    ? withoutCordoned(selectFlavors(objectsOf(related, RESOURCE_FLAVOR_KEY), spec), devices?.cordonedByFlavor)
    : { flavors: [], dropped: [] };
  const plan: QueuePlan = {
    name,
    spec,
    keyLabel,
    manufacturer: mfr,
    flavors: selection.flavors,
    admissionCheck:
      spec.acceleratable &&
      settings.admissionCheck === 'Enabled' &&
      isCheckActive(objectsOf(related, ADMISSION_CHECK_KEY)),
  };
  const desired = [
    buildClusterQueue(plan),
    ...eligibleNamespaces(objectsOf(related, NAMESPACE_KEY), settings, kept).map((ns) =>
      buildLocalQueue(name, base.entrance, ns),
    ),
  ];
  const problem = readyProblem(spec.acceleratable, keyLabel, mfr, usable, selection);
  const topology = poolTopologyCondition({
    mode: settings.topology?.mode ?? 'Disabled',
    selected: selection.flavors.map((f) => f.name),
    poolFlavors: poolFlavors(objectsOf(related, RESOURCE_FLAVOR_KEY), spec),
    topologies: related[TOPOLOGY_KEY] === undefined ? undefined : objectsOf(related, TOPOLOGY_KEY),
    observedQueue: base.observedQueue,
  });
  const status = computeInstanceTypeStatus(
    { ...base, terminating: false, selection, topology, ...(problem ? { problem } : {}) },
    parent.status?.conditions,
    context.now,
  );
  return {
    ok: true,
    response: {
      status: devices ? { ...status, devices: statusDevices(devices) } : status,
      children: sortObjects(desired),
    },
  };
}

/**
 * The flavors with their cordoned cards taken off their capacity (docs/operations.md#cordon-a-card):
 * the ClusterQueue's quota, and the status's capacity, shrink by one card per cordoned card while
 * it is cordoned. Never below zero (a count from before the flavor shrank).
 */
function withoutCordoned(
  selection: FlavorSelection,
  cordonedByFlavor: Readonly<Record<string, number>> | undefined,
): FlavorSelection {
  if (cordonedByFlavor === undefined) return selection;
  return {
    ...selection,
    flavors: selection.flavors.map((flavor) => {
      const cordoned = Object.hasOwn(cordonedByFlavor, flavor.name) ? (cordonedByFlavor[flavor.name] ?? 0) : 0;
      return cordoned === 0 ? flavor : { ...flavor, capacity: Math.max(0, flavor.capacity - cordoned) };
    }),
  };
}

function readyProblem(
  acceleratable: boolean,
  keyLabel: string | undefined,
  mfr: string | undefined,
  usable: boolean,
  selection: FlavorSelection,
): StatusInput['problem'] {
  if (keyLabel === undefined)
    return { reason: 'InvalidSpec', message: 'spec.acceleratorGroup is required when spec.acceleratable is true' };
  if (acceleratable && !usable) {
    return {
      reason: 'UnknownManufacturer',
      message: `spec.acceleratorGroup must start with an enabled manufacturer (${mfr ?? 'none found'}); the ClusterQueue is held`,
    };
  }
  if (selection.flavors.length === 0)
    return { reason: 'NoFlavors', message: 'no ResourceFlavor matches this instance type; the ClusterQueue is held' };
  return undefined;
}
