/**
 * @module Which version of an API group serves a resource, from the API server's discovery: a
 * resource that moves between versions (resource.k8s.io DeviceTaintRule: v1beta2 behind a gate in
 * Kubernetes 1.36, v1 from 1.37) is read at the version the cluster serves.
 */
import type { KubeApi } from './client.js';

interface ResourceList {
  readonly resources?: readonly { readonly name?: unknown }[];
}

/**
 * The first of `versions` (`resource.k8s.io/v1`, …, in order of preference) whose discovery lists
 * `resource`; `undefined` when none does. A version the server does not serve (404) is skipped;
 * any other failure (no connection, 403) throws.
 */
export async function servedVersion(
  api: KubeApi,
  resource: string,
  versions: readonly string[],
): Promise<string | undefined> {
  for (const groupVersion of versions) {
    // A GET answered 404 reads as `undefined` (api.get's rule).
    const list = (await api.get(`/apis/${groupVersion}`)) as ResourceList | undefined;
    if (list?.resources?.some((r) => r.name === resource)) return groupVersion;
  }
  return undefined;
}
