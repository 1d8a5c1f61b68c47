/** An in-memory API server for the ResourceSlice publisher: slices by name, with resourceVersions. */
import type { KubeApi } from '../../src/api-client/index.js';

/** `/apis/<group>/<version>/<resource>[/name]` or `/api/v1/<resource>[/name]` → group and resource. */
export function groupResource(path: string): [string, string] {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  return parts[0] === 'api' ? ['', parts[2] ?? ''] : [parts[1] ?? '', parts[3] ?? ''];
}

/** An in-memory API that records the RBAC verb of every call the publisher makes. */
export function recordingApi(): KubeApi & { calls: [string, string, string][] } {
  const calls: [string, string, string][] = [];
  const slices = new Map<string, Record<string, unknown>>();
  let version = 0;
  const record = (verb: string, path: string) => calls.push([verb, ...groupResource(path)]);
  const store = (body: unknown) => {
    const object = body as { metadata: { name: string } & Record<string, unknown> };
    slices.set(object.metadata.name, {
      ...object,
      metadata: { ...object.metadata, resourceVersion: String(++version) },
    });
    return Promise.resolve(slices.get(object.metadata.name));
  };
  return {
    calls,
    get: (path) => {
      record('get', path);
      return Promise.resolve({ metadata: { name: 'n', uid: 'uid-1' } });
    },
    patch: (path) => {
      record('patch', path);
      return Promise.resolve(undefined);
    },
    listEach: (path, onItem) => {
      record('list', path);
      for (const slice of slices.values()) onItem(slice);
      return Promise.resolve(String(version));
    },
    watch: (path) => {
      record('watch', path);
      return Promise.resolve();
    },
    create: (path, body) => {
      record('create', path);
      return store(body);
    },
    replace: (path, body) => {
      record('update', path);
      return store(body);
    },
    remove: (path) => {
      record('delete', path);
      slices.delete(decodeURIComponent(path.split('/').pop() ?? ''));
      return Promise.resolve();
    },
  };
}
