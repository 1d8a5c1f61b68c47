// Smoke test of the e2e harness itself: etcd + kube-apiserver (+ controller manager)
// from the cache, Kueue's v1beta2 ResourceFlavor CRD, Metacontroller out-of-cluster.
// Run: npx vitest run --config test/e2e/support/vitest.smoke.config.ts
import path from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { KubeObject } from './apply.js';
import { waitFor } from './apply.js';
import { describeComponents, ensureCrds } from './components.js';
import { startControlPlane, startMetacontroller, type ControlPlane } from './control-plane.js';

describe('e2e harness smoke', () => {
  let plane: ControlPlane | undefined;
  let failed = false;

  beforeAll(async () => {
    plane = await startControlPlane();
    process.stderr.write(
      `${describeComponents({
        etcd: plane.components.etcd,
        'kube-apiserver': plane.components.kubeApiserver,
        ...(plane.components.kubeControllerManager
          ? { 'kube-controller-manager': plane.components.kubeControllerManager }
          : {}),
      })}\n`,
    );
  });
  afterEach((context) => {
    if (context.task.result?.state === 'fail') failed = true;
  });
  afterAll(async () => {
    await plane?.stop({ failed });
  });

  it('serves the API with the version it was built as', async () => {
    const { client, components } = plane!;
    const version = await client.request<{ gitVersion: string; major: string; minor: string }>('GET', '/version');
    expect(version.gitVersion).toBe(components.kubeApiserver.version);
    expect(version.major).toBe('1');
    const namespaces = await client.list('v1', 'Namespace');
    expect(namespaces.map((n) => n.metadata.name)).toEqual(expect.arrayContaining(['default', 'kube-system']));
  });

  it('installs the Kueue v1beta2 ResourceFlavor CRD and creates a ResourceFlavor', async () => {
    const { client } = plane!;
    const kueue = ensureCrds('kueue');
    const names = await client.installCrds([path.join(kueue.dir, 'kueue.x-k8s.io_resourceflavors.yaml')]);
    expect(names).toEqual(['resourceflavors.kueue.x-k8s.io']);
    await client.apply(`
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: smoke-h100
spec:
  nodeLabels:
    gpustack.ai/instance-type: smoke-h100
`);
    const flavor = await client.get<KubeObject & { spec: { nodeLabels: Record<string, string> } }>(
      'kueue.x-k8s.io/v1beta2',
      'ResourceFlavor',
      'smoke-h100',
    );
    expect(flavor?.spec.nodeLabels).toEqual({ 'gpustack.ai/instance-type': 'smoke-h100' });
    // Server-side dry-run rejects what the schema forbids.
    await expect(
      client.apply(
        [
          {
            apiVersion: 'kueue.x-k8s.io/v1beta2',
            kind: 'ResourceFlavor',
            metadata: { name: 'smoke-bad' },
            spec: { nodeLabels: 'not-a-map' },
          },
        ],
        { dryRun: true },
      ),
    ).rejects.toThrow(/nodeLabels/);
    expect(await client.delete('kueue.x-k8s.io/v1beta2', 'ResourceFlavor', 'smoke-h100')).toBe(true);
    await waitFor(
      async () => (await client.get('kueue.x-k8s.io/v1beta2', 'ResourceFlavor', 'smoke-h100')) === undefined,
      10_000,
      'ResourceFlavor smoke-h100 still exists after delete',
    );
  });

  it('runs Metacontroller against the control plane', async () => {
    const p = plane!;
    const mc = await startMetacontroller({ kubeconfig: p.kubeconfig, logsDir: p.logsDir, plane: p });
    process.stderr.write(`metacontroller ${mc.component.version} (${mc.component.module}) ${mc.component.binary}\n`);
    for (const kind of ['CompositeController', 'DecoratorController']) {
      expect(await p.client.list('metacontroller.k8s.io/v1alpha1', kind)).toEqual([]);
    }
    // Still running after its start-up (API probe, discovery, informers).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(mc.process.running(), mc.process.tail()).toBe(true);
  });
});
