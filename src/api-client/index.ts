/** @module src/api-client: the small API-server client the agent and the admission checker share (list, watch, get, patch). */
export {
  ApiError,
  createKubeApi,
  loadKubeConfig,
  withQuery,
  type KubeApi,
  type PatchType,
  type WatchEvent,
  type WatchOptions,
} from './client.js';
