import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { apiDeviceOwnerSource, resourceSlicePublisher } from '../../src/agent/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import { recordingApi } from '../agent/fake-slice-api.js';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const docs = parseAllDocuments(readFileSync('manifests/agent/rbac.yaml', 'utf8')).map(
  (d) => d.toJS() as { kind: string; rules?: PolicyRule[] },
);
const rules = docs.find((d) => d.kind === 'ClusterRole')?.rules ?? [];

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
    expect(sliceVerbs.sort()).toEqual(['create', 'delete', 'list', 'update']);
  });

  it('allows every call the owner decision makes: the Node, the ChainSettings, claims and the node’s Pods', async () => {
    const api = recordingApi();
    const withSettings = {
      ...api,
      get: (path: string) =>
        path.includes('/chainsettings/')
          ? api.get(path).then(() => ({ spec: { deviceOwners: { nvidia: 'DevicePlugin' } } }))
          : api.get(path),
    };
    await apiDeviceOwnerSource(withSettings, 'n').decide(['nvidia', 'amd']);
    const used = new Set(api.calls.map((c) => c.join(' ')));
    expect([...used].sort()).toEqual([
      'get  nodes',
      'get worker.gpustack.ai chainsettings',
      'list  pods',
      'list resource.k8s.io resourceclaims',
    ]);
    for (const [verb, group, resource] of api.calls)
      expect(
        rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb)),
        `${verb} ${group}/${resource}`,
      ).toBe(true);
    const chart = readFileSync('charts/gpustack-operator/templates/agent/rbac.yaml', 'utf8');
    for (const rule of ['resources: ["chainsettings"]\n    verbs: ["get"]', 'resources: ["pods"]\n    verbs: ["list"]'])
      expect(chart).toContain(rule);
  });

  it('the chart grants the agent the same ResourceSlice rule', () => {
    const chart = readFileSync('charts/gpustack-operator/templates/agent/rbac.yaml', 'utf8');
    expect(chart).toContain(
      '  - apiGroups: ["resource.k8s.io"]\n    resources: ["resourceslices"]\n' +
        '    verbs: ["list", "create", "update", "delete"]\n',
    );
  });
});
