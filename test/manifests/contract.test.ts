import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { NodeSchema } from '../../src/k8s/index.js';
import { hookRoutes } from '../../src/server/index.js';
import { renderChain } from '../../src/sync/index.js';

interface ControllerManifest {
  kind: string;
  metadata: { name: string };
  spec: {
    hooks: Record<string, { version?: string; webhook: { url: string } }>;
    childResources?: { apiVersion: string; resource: string }[];
    resources?: { apiVersion: string; resource: string }[];
  };
}

const DIR = 'manifests/compositecontrollers';
const controllers = readdirSync(DIR).filter((f) => f.endsWith('.yaml'))
  .map((f) => parse(readFileSync(join(DIR, f), 'utf8')) as ControllerManifest);
const byName = new Map(controllers.map((c) => [c.metadata.name, c]));

// Plural resource names of the kinds we emit.
const RESOURCE_OF_KIND: Record<string, string> = {
  ResourceFlavor: 'resourceflavors', InstanceType: 'instancetypes', AdmissionCheck: 'admissionchecks',
  ClusterQueue: 'clusterqueues', LocalQueue: 'localqueues',
};
const EMITTED_BY: Record<string, string> = {
  ResourceFlavor: 'gpustack-scheduling-chain', InstanceType: 'gpustack-scheduling-chain', AdmissionCheck: 'gpustack-scheduling-chain',
  ClusterQueue: 'gpustack-instance-type', LocalQueue: 'gpustack-instance-type',
};

describe('controller manifests ↔ server contract', () => {
  it('declares the four controllers of DESIGN §4', () => {
    expect([...byName.keys()].sort()).toEqual(['gpustack-instance-type', 'gpustack-node-devices-check', 'gpustack-node-profile', 'gpustack-scheduling-chain']);
  });

  it.each(controllers.flatMap((c) => Object.entries(c.spec.hooks).map(([hook, def]) => [c.metadata.name, hook, def] as const)))(
    '%s %s hook is a v2 hook whose URL resolves to a server route', (_name, hook, def) => {
      const path = new URL(def.webhook.url).pathname;
      expect(def.version).toBe('v2');
      expect(hookRoutes()).toContain(path);
      expect(path.endsWith(`/${hook}`)).toBe(true);
    });

  it('every kind the sync functions emit is a declared child of its controller at the same apiVersion', () => {
    const nodes = (parse(readFileSync('examples/clusters/mixed.json', 'utf8')) as { items: unknown[] }).items.map((n) => NodeSchema.parse(n));
    const result = renderChain({ nodes, namespaces: ['default', 'team-a'] }, { now: '2026-01-01T00:00:00Z' });
    if (!result.ok) throw new Error(result.error.message);
    const kinds = new Set(result.objects.map((o) => `${o.apiVersion} ${o.kind}`));
    expect(kinds.size).toBe(5);
    for (const object of result.objects) {
      const controller = byName.get(EMITTED_BY[object.kind] ?? '');
      expect(controller?.spec.childResources, `${object.kind} has an emitting controller`).toBeDefined();
      expect(controller?.spec.childResources).toContainEqual(expect.objectContaining({ apiVersion: object.apiVersion, resource: RESOURCE_OF_KIND[object.kind] }));
    }
  });

  it('kustomization lists every manifest file (except the Kueue configuration, which is merged into Kueue)', () => {
    const kustomization = parse(readFileSync('manifests/kustomization.yaml', 'utf8')) as { resources: string[] };
    const files = readdirSync('manifests', { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !f.startsWith('kueue/'));
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(join('manifests', file), 'utf8'))) expect(doc.errors).toEqual([]);
    }
  });
});
