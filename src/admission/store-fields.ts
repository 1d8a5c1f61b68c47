/**
 * @module What the stores keep of each received object: the fields the decision, the reconcile
 * pass and the informer read, nothing else. A real Node is ~23 KB of JSON (NFD labels, images,
 * managedFields) and a Pod several KB; held whole, 10,000 Nodes and 100,000 Pods would not fit the
 * Deployment's memory limit. Each projection runs after the object passed its schema, and its
 * output still passes that schema, so the store's type does not change.
 *
 * Kept on purpose although not every field is read today: `spec.unschedulable` and `spec.taints`
 * of a Node, `spec.tolerations` and `spec.nodeSelector` of a PodSet template and `spec.tolerations`
 * of a ResourceFlavor, which decide whether a pod could be placed on a node at all.
 */
import {
  DEVICES_ANNOTATION,
  isSharedDevice,
  manufacturerOfDriver,
  type ReceivedDevice,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceClaim,
  type ReceivedResourceClaimTemplate,
  type ReceivedResourceSlice,
} from '../dra/index.js';
import type { Node } from '../k8s/index.js';
import type { ReceivedInstanceType } from '../dra/index.js';
import type { Container, ReceivedResourceFlavor, Pod, PodSpec, Workload } from '../placement/index.js';

/**
 * The members of `source` named in `keys` that are present; an absent one stays absent, not
 * `undefined`. The one cast is sound for what this module picks from: each source passed its
 * schema, so a member its type requires is present and is copied.
 */
function pick<T extends object, const K extends keyof T>(source: T, keys: readonly K[]): Pick<T, K> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) {
    if (source[key] !== undefined) out[key] = source[key];
  }
  return out as Pick<T, K>;
}

/** `pick` over an optional member: absent (or `null`) stays so, present becomes the picked object. */
function pickOptional<T extends object, const K extends keyof T>(
  value: T | undefined,
  keys: readonly K[],
): Pick<T, K> | undefined;
function pickOptional<T extends object, const K extends keyof T>(
  value: T | null | undefined,
  keys: readonly K[],
): Pick<T, K> | null | undefined;
function pickOptional<T extends object, const K extends keyof T>(
  value: T | null | undefined,
  keys: readonly K[],
): Pick<T, K> | null | undefined {
  return value === undefined || value === null ? value : pick(value, keys);
}

const IDENTITY = ['apiVersion', 'kind'] as const;

function slimContainer(container: Container): Container {
  const resources = pickOptional(container.resources, ['requests', 'limits']);
  return { ...pick(container, ['name', 'restartPolicy']), ...(resources === undefined ? {} : { resources }) };
}

/** What a pod asks for and where it may run; `extra` names the PodSpec fields kept beyond the containers. */
function slimPodSpec<S extends PodSpec, const K extends keyof S>(spec: S, extra: readonly K[]): Pick<S, K> & PodSpec {
  return {
    ...pick(spec, extra),
    containers: spec.containers.map(slimContainer),
    ...(spec.initContainers !== undefined ? { initContainers: spec.initContainers.map(slimContainer) } : {}),
  };
}

/**
 * A Node: its labels (flavors select by any of them), whether it is cordoned, its taints, and the
 * extended resources (`<domain>/<name>`) of its allocatable: a device plugin's `<base>` there makes
 * it the owner of the node's cards (docs/architecture.md#device-owner).
 */
export function slimNode(node: Node): Node {
  const spec = pickOptional(node.spec, ['unschedulable', 'taints']);
  const allocatable = Object.entries(node.status?.allocatable ?? {}).filter(([key]) => key.includes('/'));
  return {
    ...pick(node, IDENTITY),
    metadata: pick(node.metadata, ['name', 'resourceVersion', 'labels']),
    ...(spec === undefined ? {} : { spec }),
    ...(allocatable.length > 0 ? { status: { allocatable: Object.fromEntries(allocatable) } } : {}),
  };
}

/** The resources the scheduler served through DRA, once each (a mapping per container and resource). */
function slimExtendedClaim(
  status: NonNullable<Pod['status']>,
): Pick<NonNullable<Pod['status']>, 'extendedResourceClaimStatus'> {
  const mappings = status.extendedResourceClaimStatus?.requestMappings;
  if (mappings === undefined || mappings === null) return {};
  const names = [...new Set(mappings.map((m) => m.resourceName))].sort();
  return { extendedResourceClaimStatus: { requestMappings: names.map((resourceName) => ({ resourceName })) } };
}

/** A Pod: where it is bound, what its containers ask for, its phase, the resources DRA served. */
export function slimPod(pod: Pod): Pod {
  const picked = pickOptional(pod.status, ['phase']);
  const status =
    picked === undefined || picked === null ? picked : { ...picked, ...slimExtendedClaim(pod.status ?? {}) };
  return {
    ...pick(pod, IDENTITY),
    metadata: pick(pod.metadata, ['name', 'namespace', 'resourceVersion', 'uid']),
    spec: slimPodSpec(pod.spec, ['nodeName']),
    ...(status === undefined ? {} : { status }),
  };
}

type WorkloadStatus = NonNullable<Workload['status']>;

function slimWorkloadStatus(status: WorkloadStatus): WorkloadStatus {
  const { admission, conditions, admissionChecks } = status;
  return {
    ...(conditions !== undefined ? { conditions: conditions.map((c) => pick(c, ['type', 'status', 'reason'])) } : {}),
    ...(admission === undefined
      ? {}
      : {
          admission:
            admission === null
              ? null
              : {
                  clusterQueue: admission.clusterQueue,
                  // topologyAssignment: the domains TAS chose, which the check verifies (docs/architecture.md#topology-check).
                  podSetAssignments: admission.podSetAssignments.map((a) =>
                    pick(a, ['name', 'flavors', 'count', 'topologyAssignment']),
                  ),
                },
        }),
    ...(admissionChecks !== undefined
      ? {
          admissionChecks: admissionChecks.map((c) =>
            pick(c, ['name', 'state', 'message', 'lastTransitionTime', 'requeueAfterSeconds']),
          ),
        }
      : {}),
  };
}

/** A Workload: identity, whether it is active, each PodSet's count and pod template, and the status our check reads and writes. */
export function slimWorkload(workload: Workload): Workload {
  const { spec, status } = workload;
  return {
    ...pick(workload, IDENTITY),
    metadata: pick(workload.metadata, ['name', 'namespace', 'resourceVersion', 'uid', 'generation']),
    spec: {
      ...pick(spec, ['active']),
      podSets: spec.podSets.map((podSet) => ({
        ...pick(podSet, ['name', 'count']),
        template: { spec: slimPodSpec(podSet.template.spec, ['nodeSelector', 'tolerations', 'resourceClaims']) },
      })),
    },
    ...(status === undefined ? {} : { status: status === null ? null : slimWorkloadStatus(status) }),
  };
}

/** A ResourceFlavor: its name, the node labels it pins and the taints it tolerates. */
export function slimResourceFlavor(flavor: ReceivedResourceFlavor): ReceivedResourceFlavor {
  const spec = pickOptional(flavor.spec, ['nodeLabels', 'tolerations']);
  return {
    ...pick(flavor, IDENTITY),
    metadata: pick(flavor.metadata, ['name', 'resourceVersion']),
    ...(spec === undefined ? {} : { spec }),
  };
}

/**
 * A device of ours: its name, the attributes the ledger reads, its counter set, its taints, and for the shared
 * device its capacities (a whole device's are never read: 80,000 devices at 5,000 nodes).
 */
function slimDevice(device: ReceivedDevice, driver: string): ReceivedDevice {
  const attributes = device.attributes;
  const shared = isSharedDevice(device, driver);
  // `mode` only where it is what marks the device shared (without `allowMultipleAllocations`).
  const read = shared && device.allowMultipleAllocations !== true ? /(^|\/)(productKey|mode)$/ : /(^|\/)productKey$/;
  const kept =
    attributes === undefined
      ? undefined
      : Object.fromEntries(Object.entries(attributes).filter(([name]) => read.test(name)));
  return {
    ...pick(device, shared ? ['name', 'allowMultipleAllocations', 'capacity'] : ['name', 'allowMultipleAllocations']),
    ...(kept === undefined ? {} : { attributes: kept }),
    ...(device.consumesCounters === undefined
      ? {}
      : { consumesCounters: device.consumesCounters.map((c) => ({ counterSet: c.counterSet })) }),
    // A tainted card is not free (the agent's `gpustack.ai/unhealthy`): the ledger must see it.
    ...(device.taints === undefined || device.taints.length === 0
      ? {}
      : { taints: device.taints.map((t) => pick(t, ['key', 'value', 'effect'])) }),
  };
}

/** A DeviceTaintRule: which devices it selects and its taint (its status, the eviction's progress, is not read). */
export function slimDeviceTaintRule(rule: ReceivedDeviceTaintRule): ReceivedDeviceTaintRule {
  const selector = rule.spec.deviceSelector;
  return {
    ...pick(rule, IDENTITY),
    metadata: pick(rule.metadata, ['name', 'resourceVersion', 'labels']),
    spec: {
      ...(selector === undefined ? {} : { deviceSelector: pick(selector, ['driver', 'pool', 'device']) }),
      taint: pick(rule.spec.taint, ['key', 'value', 'effect']),
    },
  };
}

/** A ResourceSlice: driver, pool and node; devices only for our drivers (another vendor's are never counted). */
export function slimResourceSlice(slice: ReceivedResourceSlice): ReceivedResourceSlice {
  const ours = manufacturerOfDriver(slice.spec.driver) !== undefined;
  return {
    ...pick(slice, IDENTITY),
    metadata: pick(slice.metadata, ['name', 'resourceVersion']),
    spec: {
      ...pick(slice.spec, ['driver', 'nodeName']),
      pool: pick(slice.spec.pool, ['name', 'generation', 'resourceSliceCount']),
      ...(ours && slice.spec.devices !== undefined
        ? { devices: slice.spec.devices.map((d) => slimDevice(d, slice.spec.driver)) }
        : {}),
    },
  };
}

/**
 * A ResourceClaim: only the allocation results on our drivers, and the names of the Pods it is
 * reserved for (the holders of the per-card metrics). Most claims in a cluster are few bytes after this.
 */
export function slimResourceClaim(claim: ReceivedResourceClaim): ReceivedResourceClaim {
  const results = claim.status?.allocation?.devices?.results
    ?.filter((r) => manufacturerOfDriver(r.driver) !== undefined)
    .map((r) => pick(r, ['driver', 'pool', 'device', 'consumedCapacity']));
  const reservedFor = claim.status?.reservedFor?.map((r) => pick(r, ['name']));
  return {
    ...pick(claim, IDENTITY),
    metadata: pick(claim.metadata, ['name', 'namespace', 'resourceVersion']),
    ...(results === undefined || results.length === 0
      ? {}
      : {
          status: {
            allocation: { devices: { results } },
            ...(reservedFor === undefined || reservedFor.length === 0 ? {} : { reservedFor }),
          },
        }),
  };
}

/** A ResourceClaimTemplate: the `exactly` part of each device request. */
export function slimResourceClaimTemplate(template: ReceivedResourceClaimTemplate): ReceivedResourceClaimTemplate {
  const requests = template.spec.spec.devices?.requests?.map((r) => ({
    name: r.name,
    ...(r.exactly === undefined
      ? {}
      : { exactly: pick(r.exactly, ['deviceClassName', 'allocationMode', 'count', 'capacity']) }),
  }));
  return {
    ...pick(template, IDENTITY),
    metadata: pick(template.metadata, ['name', 'namespace', 'resourceVersion']),
    spec: { spec: requests === undefined ? {} : { devices: { requests } } },
  };
}

/** An InstanceType: name, its pool's key, os and arch, and only our annotation. */
export function slimInstanceType(type: ReceivedInstanceType): ReceivedInstanceType {
  const annotations = type.metadata.annotations;
  const ours = annotations !== undefined && Object.hasOwn(annotations, DEVICES_ANNOTATION);
  const spec =
    type.spec === undefined ? undefined : pick(type.spec, ['acceleratable', 'acceleratorGroup', 'os', 'arch']);
  return {
    ...pick(type, IDENTITY),
    metadata: {
      ...pick(type.metadata, ['name', 'resourceVersion']),
      ...(ours ? { annotations: { [DEVICES_ANNOTATION]: annotations[DEVICES_ANNOTATION] as string } } : {}),
    },
    ...(spec === undefined ? {} : { spec }),
  };
}
