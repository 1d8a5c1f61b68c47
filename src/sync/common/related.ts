/**
 * @module The object-map keys (`Kind.group/version`) of everything the controllers observe or
 * emit, and small readers over those maps.
 */
import {
  GPUSTACK_API_VERSION,
  KUEUE_API_VERSION,
  objectMapKey,
  sortObjects,
  type KubeObject,
} from '../../k8s/index.js';

export const NODE_KEY = objectMapKey('Node', 'v1');
export const NAMESPACE_KEY = objectMapKey('Namespace', 'v1');
export const SCHEDULING_CHAIN_KEY = objectMapKey('SchedulingChain', GPUSTACK_API_VERSION);
export const NODE_PROFILE_KEY = objectMapKey('NodeProfile', GPUSTACK_API_VERSION);
export const NODE_SHARD_KEY = objectMapKey('NodeShard', GPUSTACK_API_VERSION);
export const CHAIN_SETTINGS_KEY = objectMapKey('ChainSettings', GPUSTACK_API_VERSION);
export const INSTANCE_TYPE_KEY = objectMapKey('InstanceType', GPUSTACK_API_VERSION);
export const RESOURCE_FLAVOR_KEY = objectMapKey('ResourceFlavor', KUEUE_API_VERSION);
export const CLUSTER_QUEUE_KEY = objectMapKey('ClusterQueue', KUEUE_API_VERSION);
export const LOCAL_QUEUE_KEY = objectMapKey('LocalQueue', KUEUE_API_VERSION);
export const ADMISSION_CHECK_KEY = objectMapKey('AdmissionCheck', KUEUE_API_VERSION);
export const TOPOLOGY_KEY = objectMapKey('Topology', KUEUE_API_VERSION);

/** The objects of one kind in an object map, in canonical order (map order is not ours to trust). */
export function objectsOf<T extends KubeObject>(
  map: Readonly<Record<string, Readonly<Record<string, T>>>>,
  key: string,
): T[] {
  return sortObjects(Object.values(map[key] ?? {}));
}

/** True when an object is being deleted: it must count as absent (Kueue's in-use finalizer keeps it around). */
export function isTerminating(object: KubeObject): boolean {
  return typeof object.metadata.deletionTimestamp === 'string' && object.metadata.deletionTimestamp !== '';
}
