/** @module src/api-client: the small API-server client the agent and the admission checker share (list, watch, get, patch). */
export {
  ApiError,
  KUBE_CLIENT_MIN_NODE,
  MAX_RETRY_AFTER_MS,
  createKubeApi,
  kubeClientLoads,
  loadKubeConfig,
  retryAfterMs,
  serverUnavailable,
  withQuery,
  type KubeApi,
  type PatchType,
  type WatchEvent,
  type WatchOptions,
} from './client.js';
export { servedVersion } from './discovery.js';
export { listParsed, type ItemParser } from './list.js';
