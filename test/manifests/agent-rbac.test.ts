import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { resourceSlicePublisher } from '../../src/agent/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import type { KubeApi } from '../../src/kube/index.js';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const docs = parseAllDocuments(readFileSync('manifests/agent/rbac.yaml', 'utf8')).map(
  (d) => d.toJS() as { kind: string; rules?: PolicyRule[] },
);
const rules = docs.find((d) => d.kind === 'ClusterRole')?.rules ?? [];

/** `/apis/<group>/<version>/<resource>[/name]` or `/api/v1/<resource>[/name]` → group and resource. */
function groupResource(path: string): [string, string] {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  return parts[0] === 'api' ? ['', parts[2] ?? ''] : [parts[1] ?? '', parts[3] ?? ''];
}

/** An in-memory API that records the RBAC verb of every call the publisher makes. */
function recordingApi(): KubeApi & { calls: [string, string, string][] } {
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

const card = (index: number): SliceCard => ({
  manufacturer: 'nvidia',
  index,
  product: 'NVIDIA H200',
  memoryMiB: 143771,
});

describe('agent RBAC ↔ the ResourceSlice publisher', () => {
  it('allows every call the publisher makes (create, list, update, delete slices; get the Node), and no more on slices', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n');
    await publisher.publish([card(0), card(1)], new Set());
    await publisher.publish([card(0)], new Set());
    await publisher.publish(
      Array.from({ length: 40 }, (_, i) => card(i)),
      new Set(),
    );
    await publisher.publish([], new Set());
    const used = new Set(api.calls.map((c) => c.join(' ')));
    expect([...used].sort()).toEqual([
      'create resource.k8s.io resourceslices',
      'delete resource.k8s.io resourceslices',
      'get  nodes',
      'list resource.k8s.io resourceslices',
      'update resource.k8s.io resourceslices',
    ]);
    for (const [verb, group, resource] of api.calls)
      expect(
        rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb)),
        `${verb} ${group}/${resource}`,
      ).toBe(true);
    const sliceVerbs = rules.filter((r) => r.resources.includes('resourceslices')).flatMap((r) => r.verbs);
    expect(sliceVerbs.sort()).toEqual(['create', 'delete', 'get', 'list', 'update', 'watch']);
  });

  it('the chart grants the agent the same ResourceSlice rule', () => {
    const chart = readFileSync('charts/gpustack-operator/templates/agent/rbac.yaml', 'utf8');
    expect(chart).toContain(
      '  - apiGroups: ["resource.k8s.io"]\n    resources: ["resourceslices"]\n' +
        '    verbs: ["get", "list", "watch", "create", "update", "delete"]\n',
    );
  });
});
