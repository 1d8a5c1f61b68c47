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
import type { Node } from '../k8s/index.js';
import type { Container, ObservedResourceFlavor, Pod, PodSpec, Workload } from '../sync/index.js';

type Loose = Readonly<Record<string, unknown>>;

/** The members of `source` named in `keys` that are present; an absent one stays absent, not `undefined`. */
function pick(source: unknown, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (source === null || typeof source !== 'object') return out;
  for (const key of keys) {
    const value = (source as Loose)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** `pick` over an optional member: absent (or `null`, kept as `null`) stays so, present becomes the picked object. */
function pickMember(source: Loose, key: string, keys: readonly string[]): Record<string, unknown> {
  const value = source[key];
  if (value === undefined) return {};
  return { [key]: value === null ? null : pick(value, keys) };
}

const IDENTITY = ['apiVersion', 'kind'];

function slimContainer(container: Container): Container {
  return {
    ...pick(container, ['name', 'restartPolicy']),
    ...pickMember(container, 'resources', ['requests', 'limits']),
  } as Container;
}

/** What a pod asks for and where it may run; `extra` names the PodSpec fields kept beyond the containers. */
function slimPodSpec(spec: PodSpec, extra: readonly string[]): PodSpec {
  return {
    ...pick(spec, extra),
    containers: spec.containers.map(slimContainer),
    ...(spec.initContainers !== undefined ? { initContainers: spec.initContainers.map(slimContainer) } : {}),
  } as PodSpec;
}

/** A Node: its labels (flavors select by any of them), whether it is cordoned, its taints. */
export function slimNode(node: Node): Node {
  return {
    ...pick(node, IDENTITY),
    metadata: pick(node.metadata, ['name', 'resourceVersion', 'labels']),
    ...pickMember(node, 'spec', ['unschedulable', 'taints']),
  } as Node;
}

/** A Pod: where it is bound, what its containers ask for, its phase. */
export function slimPod(pod: Pod): Pod {
  return {
    ...pick(pod, IDENTITY),
    metadata: pick(pod.metadata, ['name', 'namespace', 'resourceVersion', 'uid']),
    spec: slimPodSpec(pod.spec, ['nodeName']),
    ...pickMember(pod, 'status', ['phase']),
  } as Pod;
}

type WorkloadStatus = NonNullable<Workload['status']>;

function slimWorkloadStatus(status: WorkloadStatus): WorkloadStatus {
  const admission = status.admission;
  return {
    ...(status.conditions !== undefined
      ? { conditions: status.conditions.map((c) => pick(c, ['type', 'status', 'reason'])) }
      : {}),
    ...(admission === undefined
      ? {}
      : {
          admission:
            admission === null
              ? null
              : {
                  clusterQueue: admission.clusterQueue,
                  podSetAssignments: admission.podSetAssignments.map((a) => pick(a, ['name', 'flavors', 'count'])),
                },
        }),
    ...(status.admissionChecks !== undefined
      ? {
          admissionChecks: status.admissionChecks.map((c) =>
            pick(c, ['name', 'state', 'message', 'lastTransitionTime', 'requeueAfterSeconds']),
          ),
        }
      : {}),
  } as WorkloadStatus;
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
        template: { spec: slimPodSpec(podSet.template.spec, ['nodeSelector', 'tolerations']) },
      })),
    },
    ...(status === undefined ? {} : { status: status === null ? null : slimWorkloadStatus(status) }),
  } as Workload;
}

/** A ResourceFlavor: its name, the node labels it pins and the taints it tolerates. */
export function slimResourceFlavor(flavor: ObservedResourceFlavor): ObservedResourceFlavor {
  return {
    ...pick(flavor, IDENTITY),
    metadata: pick(flavor.metadata, ['name', 'resourceVersion']),
    ...pickMember(flavor, 'spec', ['nodeLabels', 'tolerations']),
  } as ObservedResourceFlavor;
}
