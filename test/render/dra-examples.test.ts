/**
 * The DRA examples of docs/dra.md (examples/dra/) against the DeviceClasses `render` produces: every class a
 * claim names exists, CEL selectors read our driver's attributes and capacities, a capacity request
 * goes to a shared class, an extended resource is one a class serves, and a Job's queue exists.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ATTRIBUTE, CAPACITY, DeviceClassSchema, type DeviceClass } from '../../src/dra/index.js';
import { renderChain } from '../../src/render/index.js';
import { repoPath } from '../support/fixtures.js';
import { NOW } from '../support/hooks.js';
import { loadClusterNodes } from '../support/nodes.js';

const DIR = 'examples/dra';
const FILES = readdirSync(repoPath(DIR))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

type Doc = { kind: string; metadata: { name: string; labels?: Record<string, string> }; spec: Record<string, unknown> };
type ExactRequest = {
  deviceClassName: string;
  allocationMode?: string;
  count?: number;
  selectors?: { cel: { expression: string } }[];
  capacity?: { requests: Record<string, string> };
};
type PodSpec = {
  resourceClaims?: { name: string; resourceClaimTemplateName?: string }[];
  containers: {
    resources?: { claims?: { name: string }[]; limits?: Record<string, string>; requests?: Record<string, string> };
  }[];
};

function docs(file: string): Doc[] {
  return parseAllDocuments(readFileSync(repoPath(`${DIR}/${file}`), 'utf8')).map((d) => d.toJS() as Doc);
}

// The H100 node dump: the model class of the whole-card example and the queue of its Job.
const rendered = renderChain({ nodes: loadClusterNodes('h100-8x.yaml'), namespaces: ['default'] }, { now: NOW });
if (!rendered.ok) throw new Error(rendered.error.message);
const classes = new Map<string, DeviceClass>(
  rendered.objects
    .filter((o) => o.kind === 'DeviceClass')
    .map((o) => DeviceClassSchema.parse(o))
    .map((c) => [c.metadata.name, c]),
);
const localQueues = new Set(rendered.objects.filter((o) => o.kind === 'LocalQueue').map((o) => o.metadata.name));
const OUR_NAMES = new Set<string>([...Object.values(ATTRIBUTE), ...Object.values(CAPACITY)]);

function podSpecOf(doc: Doc): PodSpec | undefined {
  if (doc.kind === 'Pod') return doc.spec as unknown as PodSpec;
  if (doc.kind === 'Job') return (doc.spec as { template: { spec: PodSpec } }).template.spec;
  return undefined;
}

describe('examples/dra', () => {
  it('holds the four examples docs/dra.md shows', () => {
    expect(FILES).toEqual(['extended-resource.yaml', 'memory-80gi.yaml', 'share-20gi.yaml', 'whole-card.yaml']);
    const doc = readFileSync(repoPath('docs/dra.md'), 'utf8');
    for (const file of FILES) expect(doc, file).toContain(`${DIR}/${file}`);
  });

  it.each(FILES)('%s names only classes, attributes and resources that render produces', (file) => {
    const all = docs(file);
    const templates = new Map<string, ExactRequest[]>();
    for (const doc of all.filter((d) => d.kind === 'ResourceClaimTemplate')) {
      const requests = (doc.spec as { spec: { devices: { requests: { exactly: ExactRequest }[] } } }).spec.devices
        .requests;
      templates.set(
        doc.metadata.name,
        requests.map((r) => r.exactly),
      );
    }
    for (const request of [...templates.values()].flat()) {
      const deviceClass = classes.get(request.deviceClassName);
      expect(deviceClass, `${file}: class ${request.deviceClassName}`).toBeDefined();
      // Kueue counts only ExactCount requests.
      expect(request.allocationMode).toBe('ExactCount');
      for (const selector of request.selectors ?? []) {
        const references = [...selector.cel.expression.matchAll(/device\.(attributes|capacity)\['([^']+)'\]\.(\w+)/g)];
        expect(references.length, `${file}: ${selector.cel.expression}`).toBeGreaterThan(0);
        for (const [, , domain, name] of references) {
          expect(domain).toBe('nvidia.gpustack.ai');
          expect(OUR_NAMES.has(name as string), `${file}: ${name} is one of our attributes or capacities`).toBe(true);
        }
      }
      if (request.capacity !== undefined) {
        // A capacity request needs a multi-allocatable device: the shared class.
        expect(deviceClass?.metadata.labels['resource.gpustack.ai/device-mode']).toBe('shared');
        for (const name of Object.keys(request.capacity.requests))
          expect(Object.values(CAPACITY) as string[]).toContain(name);
      }
    }
    for (const doc of all) {
      const pod = podSpecOf(doc);
      if (pod === undefined) continue;
      const claimNames = new Set((pod.resourceClaims ?? []).map((c) => c.name));
      for (const claim of pod.resourceClaims ?? [])
        expect(templates.has(claim.resourceClaimTemplateName ?? ''), `${file}: ${claim.name}`).toBe(true);
      for (const container of pod.containers) {
        for (const claim of container.resources?.claims ?? []) expect(claimNames.has(claim.name)).toBe(true);
        const resources = { ...container.resources?.requests, ...container.resources?.limits };
        for (const resource of Object.keys(resources).filter((r) => r.includes('/'))) {
          const served = [...classes.values()].filter((c) => c.spec.extendedResourceName === resource);
          expect(
            served.map((c) => c.metadata.name),
            `${file}: ${resource}`,
          ).toEqual(['gpustack-nvidia-shared']);
        }
      }
      const queue = doc.metadata.labels?.['kueue.x-k8s.io/queue-name'];
      if (queue !== undefined) expect(localQueues.has(queue), `${file}: LocalQueue ${queue}`).toBe(true);
    }
  });
});
