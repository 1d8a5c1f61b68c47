// The Helm chart's structure against manifests/ (no helm needed): one template per manifest file,
// the same CRD files, one version everywhere, and value enums that the binaries accept. That
// `helm template` renders the same objects is proven in test/e2e/helm.e2e.test.ts (needs helm).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MANUFACTURER_NAMES } from '../../native/index.js';
import { PUBLISH_MODES } from '../../src/agent/index.js';
import { kustomizeBuild, readKustomization } from '../support/kustomize.js';

const CHART = 'charts/gpustack-operator';
/** Templates with no manifests/ counterpart. */
const CHART_ONLY = [
  'NOTES.txt',
  '_helpers.tpl',
  'cards-cli-rbac.yaml',
  'grafana-dashboard.yaml',
  'monitors.yaml',
  'server/hook-credentials.yaml',
];
/** manifests/ files with no template: Helm installs into the release namespace (--create-namespace). */
const MANIFESTS_ONLY = ['namespace.yaml'];

const kustomization = readKustomization('manifests');
const templates = readdirSync(join(CHART, 'templates'), { recursive: true, encoding: 'utf8' }).filter((f) =>
  /\.(yaml|tpl|txt)$/.test(f),
);
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as {
  apiVersion: string;
  name: string;
  appVersion: string;
};
const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as {
  image: { repository: string; tag: string };
};
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  enum?: unknown[];
}
const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8')) as SchemaNode;
/** The image of every container, in object order. */
const imagesOf = (objects: readonly unknown[]): string[] =>
  objects.flatMap((o) => [...JSON.stringify(o).matchAll(/"image":"([^"]*)"/g)].map((m) => m[1] as string));
const at = (...keys: string[]): SchemaNode | undefined =>
  keys.reduce<SchemaNode | undefined>((node, key) => node?.properties?.[key], schema);

describe('the Helm chart mirrors manifests/', () => {
  it('has one template per manifest file, at the same path, that says which file it mirrors', () => {
    for (const file of kustomization.resources.filter((f) => !f.startsWith('crds/') && !MANIFESTS_ONLY.includes(f))) {
      expect(templates, file).toContain(file);
      expect(readFileSync(join(CHART, 'templates', file), 'utf8'), file).toContain(`# Mirrors manifests/${file}.`);
    }
  });

  it('has no template without a manifest file, except the chart-only ones', () => {
    const mirrored = new Set(kustomization.resources);
    expect(templates.filter((t) => !mirrored.has(t)).sort()).toEqual(CHART_ONLY);
  });

  it("installs the kustomization's CRD files from crds/ (byte-identical: generated.test.ts)", () => {
    const crds = kustomization.resources.filter((f) => f.startsWith('crds/')).map((f) => f.slice('crds/'.length));
    expect(readdirSync(join(CHART, 'crds')).sort()).toEqual(crds.sort());
  });

  it('is a Helm 3/4 chart (apiVersion v2) named like the image', () => {
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe('gpustack-operator');
    expect(values.image.repository).toBe('gpustack-operator');
  });
});

describe('one image, one version', () => {
  it("the chart's appVersion (the default tag) is the package version", () => {
    expect(chart.appVersion).toBe(pkg.version);
    expect(values.image.tag).toBe('');
  });

  it('the kustomization names the image every workload runs, at the package version', () => {
    expect(kustomization.images).toEqual([
      { name: 'gpustack-operator', newName: 'gpustack-operator', newTag: pkg.version },
    ]);
    expect(imagesOf(kustomizeBuild('manifests'))).toEqual(Array(3).fill(`gpustack-operator:${pkg.version}`));
  });

  it('`kustomize edit set image` rewrites every workload (the helper applies images: like kustomize)', () => {
    const rules = [{ name: 'gpustack-operator', newName: 'my-registry/gpustack-operator', newTag: '1.2.3' }];
    expect(imagesOf(kustomizeBuild('manifests', rules))).toEqual(Array(3).fill('my-registry/gpustack-operator:1.2.3'));
    const pinned = [{ name: 'gpustack-operator', digest: `sha256:${'a'.repeat(64)}` }];
    expect(imagesOf(kustomizeBuild('manifests', pinned))).toEqual(
      Array(3).fill(`gpustack-operator@sha256:${'a'.repeat(64)}`),
    );
  });
});

describe('values.schema.json accepts what the binaries accept', () => {
  it('agent.publish: the publish modes of the agent', () => {
    expect(at('agent', 'publish')?.enum).toEqual([...PUBLISH_MODES]);
  });

  it('agent.manufacturers: the manufacturers the agent detects', () => {
    expect(at('agent', 'manufacturers')?.items?.enum).toEqual([...MANUFACTURER_NAMES]);
  });

  it('every top-level key of values.yaml is declared', () => {
    const declared = Object.keys(schema.properties ?? {});
    for (const key of Object.keys(values)) expect(declared).toContain(key);
  });
});
