/** An in-memory API server for the ResourceSlice publisher: slices by name, with resourceVersions. */
import { ApiError, type KubeApi } from '../../src/api-client/index.js';

/** `/apis/<group>/<version>/<resource>[/name]` or `/api/v1/<resource>[/name]` → group and resource. */
export function groupResource(path: string): [string, string] {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  return parts[0] === 'api' ? ['', parts[2] ?? ''] : [parts[1] ?? '', parts[3] ?? ''];
}

/** `spec.nodeName=n,metadata.name=x` of a list path → whether `object` matches it. */
function selects(path: string, object: Record<string, unknown>): boolean {
  const selector = new URLSearchParams(path.split('?')[1] ?? '').get('fieldSelector') ?? '';
  return selector
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [field = '', value] = term.split('=');
      const found = field.split('.').reduce<unknown>((at, key) => (at as Record<string, unknown>)?.[key], object);
      return found === value;
    });
}

/**
 * An in-memory API that records the RBAC verb of every call the publisher makes. Like the API
 * server: a create of a name that exists is refused with 409, `generateName` makes a name, and a
 * list honours its field selector.
 */
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
  let generated = 0;
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
      for (const slice of slices.values()) if (selects(path, slice)) onItem(slice);
      return Promise.resolve(String(version));
    },
    watch: (path) => {
      record('watch', path);
      return Promise.resolve();
    },
    create: (path, body) => {
      record('create', path);
      const { metadata } = body as { metadata: { name?: string; generateName?: string } };
      const name = metadata.name ?? `${metadata.generateName ?? ''}g${++generated}`;
      if (slices.has(name)) return Promise.reject(new ApiError(409, 'POST', path, `"${name}" already exists`));
      return store({ ...(body as object), metadata: { ...metadata, name } });
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
