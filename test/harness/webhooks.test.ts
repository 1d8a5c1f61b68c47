// The webhook configurations the e2e harness registers for Kueue's job frameworks and for the JobSet and
// LeaderWorkerSet managers, from upstream manifests shaped like the releases' (written here, small).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { kueueReleaseNamespaceSelector, kueueWebhookConfigurations } from '../../harness/e2e/kueue.js';
import { workloadWebhookConfigurations } from '../../harness/e2e/workload-controllers.js';

const CERT = '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n';
const hook = (name: string, route: string, apiGroups: string[], resources: string[]) => ({
  name,
  admissionReviewVersions: ['v1'],
  clientConfig: { service: { name: 'webhook-service', namespace: 'system', path: route } },
  failurePolicy: 'Fail',
  sideEffects: 'None',
  rules: [{ apiGroups, apiVersions: ['v1'], operations: ['CREATE'], resources }],
});
const manifests = (webhooks: unknown[]) =>
  stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'mutating-webhook-configuration' },
    webhooks,
  });
const SELECTOR = {
  matchExpressions: [
    { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kueue-system'] },
  ],
};

function kueueDir(kustomizationPatchWebhook: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kueue-webhook-'));
  writeFileSync(
    path.join(dir, 'manifests.yaml'),
    manifests([
      hook('mclusterqueue.kb.io', '/mutate-cq', ['kueue.x-k8s.io'], ['clusterqueues']),
      hook('mjobset.kb.io', '/mutate-jobset', ['jobset.x-k8s.io'], ['jobsets']),
      hook('mpod.kb.io', '/mutate--v1-pod', [''], ['pods']),
      hook('mstatefulset.kb.io', '/mutate-sts', ['apps'], ['statefulsets']),
      hook('mdeployment.kb.io', '/mutate-deploy', ['apps'], ['deployments']),
    ]),
  );
  const patch = stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: 'validating-webhook-configuration' },
    webhooks: [{ name: kustomizationPatchWebhook, namespaceSelector: SELECTOR }],
  });
  writeFileSync(
    path.join(dir, 'kustomization.yaml'),
    stringify({ resources: ['manifests.yaml'], patches: [{ patch }] }),
  );
  return dir;
}

describe("Kueue's webhooks", () => {
  it('only the kueue.x-k8s.io ones without frameworks; with them, also the ones of exactly those objects, with the release namespaceSelector', () => {
    const dir = kueueDir('vpod.kb.io');
    const names = (objects: ReturnType<typeof kueueWebhookConfigurations>) =>
      objects.flatMap((o) => (o['webhooks'] as { name: string }[]).map((w) => w.name));
    expect(names(kueueWebhookConfigurations(path.join(dir, 'manifests.yaml'), 9443, CERT))).toEqual([
      'mclusterqueue.kb.io',
    ]);
    const [config] = kueueWebhookConfigurations(path.join(dir, 'manifests.yaml'), 9443, CERT, [
      { group: 'jobset.x-k8s.io', resource: 'jobsets' },
      { group: '', resource: 'pods' },
      { group: 'apps', resource: 'deployments' },
    ]);
    const webhooks = config?.['webhooks'] as { name: string; namespaceSelector?: unknown; clientConfig: unknown }[];
    expect(webhooks.map((w) => w.name)).toEqual([
      'mclusterqueue.kb.io',
      'mjobset.kb.io',
      'mpod.kb.io',
      'mdeployment.kb.io',
    ]);
    expect(webhooks[0]?.namespaceSelector).toBeUndefined();
    for (const w of webhooks.slice(1)) expect(w.namespaceSelector, w.name).toEqual(SELECTOR);
    expect(webhooks[2]?.clientConfig).toEqual({
      url: 'https://127.0.0.1:9443/mutate--v1-pod',
      caBundle: Buffer.from(CERT).toString('base64'),
    });
  });

  it("reads the namespaceSelector from either release's kustomization (0.17 patches mpod, 0.19 vpod)", () => {
    for (const name of ['mpod.kb.io', 'vpod.kb.io'])
      expect(kueueReleaseNamespaceSelector(path.join(kueueDir(name), 'kustomization.yaml'))).toEqual(SELECTOR);
    expect(kueueReleaseNamespaceSelector('/nonexistent/kustomization.yaml')).toBeUndefined();
  });
});

describe("JobSet's and LeaderWorkerSet's webhooks", () => {
  const webhookDir = (patch: unknown): string => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'jobset-webhook-'));
    writeFileSync(
      path.join(dir, 'manifests.yaml'),
      manifests([
        hook('mjobset.kb.io', '/mutate-jobset', ['jobset.x-k8s.io'], ['jobsets']),
        hook('mpod.kb.io', '/mutate--v1-pod', [''], ['pods']),
      ]),
    );
    mkdirSync(path.join(dir, 'patches'));
    writeFileSync(path.join(dir, 'patches', 'mutating-patch.yaml'), stringify(patch));
    return dir;
  };

  it("applies the release's replace patch (the Pod webhook's objectSelector) and points every webhook at 127.0.0.1", () => {
    const selected = {
      ...hook('mpod.kb.io', '/mutate--v1-pod', [''], ['pods']),
      objectSelector: { matchExpressions: [{ key: 'jobset.sigs.k8s.io/jobset-name', operator: 'Exists' }] },
    };
    const [config] = workloadWebhookConfigurations(
      webhookDir([{ op: 'replace', path: '/webhooks/1', value: selected }]),
      'jobset',
      9444,
      CERT,
    );
    expect(config?.metadata.name).toBe('jobset-mutating-webhook-configuration');
    const webhooks = config?.['webhooks'] as {
      name: string;
      objectSelector?: unknown;
      clientConfig: { url: string };
    }[];
    expect(webhooks.map((w) => [w.name, w.clientConfig.url])).toEqual([
      ['mjobset.kb.io', 'https://127.0.0.1:9444/mutate-jobset'],
      ['mpod.kb.io', 'https://127.0.0.1:9444/mutate--v1-pod'],
    ]);
    expect(webhooks[0]?.objectSelector).toBeUndefined();
    expect(webhooks[1]?.objectSelector).toEqual(selected.objectSelector);
  });

  it('refuses a patch it cannot apply rather than register the Pod webhook for every Pod', () => {
    expect(() =>
      workloadWebhookConfigurations(
        webhookDir([{ op: 'add', path: '/webhooks/1/objectSelector', value: {} }]),
        'lws',
        9444,
        CERT,
      ),
    ).toThrow(/a patch the harness cannot apply/);
  });
});
