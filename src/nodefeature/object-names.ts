/**
 * @module Object names (docs/architecture.md#object-names): single dash, CPU and device pools split, os/arch in full.
 * Names may exceed 63 characters (DNS subdomain, ≤ 253), so they never go into label values;
 * the LocalQueue gets a fixed 31-character hashed name instead.
 */
import { fnv1a64Hex } from './fnv.js';

const PREFIX = 'gpustack-';
const LOCAL_QUEUE_PREFIX = 'gpustack-fnv64-';

/** Keys may carry `_` (`hygon-k100_ai`), which object names cannot. */
function nameSegment(key: string): string {
  return key.replace(/_/g, '-');
}

/** @example cpuFlavorName('generic', 'linux', 'amd64', 224) // 'gpustack-generic-linux-amd64-224c' */
export function cpuFlavorName(gKey: string, os: string, arch: string, cores: number): string {
  return `${PREFIX}${nameSegment(gKey)}-${os}-${arch}-${cores}c`;
}

/** @example deviceFlavorName('nvidia-h100-80gb-hbm3', 'linux', 'amd64', 8) // 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d' */
export function deviceFlavorName(aKey: string, os: string, arch: string, count: number): string {
  return `${PREFIX}${nameSegment(aKey)}-${os}-${arch}-${count}d`;
}

/**
 * ClusterQueue and InstanceType share this name.
 * @example clusterQueueName('generic', 'linux', 'amd64') // 'gpustack-generic-linux-amd64'
 */
export function clusterQueueName(key: string, os: string, arch: string): string {
  return `${PREFIX}${nameSegment(key)}-${os}-${arch}`;
}

/**
 * The LocalQueue name of a ClusterQueue: always 31 characters, so it fits in the
 * `kueue.x-k8s.io/queue-name` label whatever the ClusterQueue's name length.
 * @example localQueueName('gpustack--nvidia-a10g-linux-amd64') // 'gpustack-fnv64-c4680bb149644f1c'
 */
export function localQueueName(clusterQueue: string): string {
  return `${LOCAL_QUEUE_PREFIX}${fnv1a64Hex(clusterQueue)}`;
}
