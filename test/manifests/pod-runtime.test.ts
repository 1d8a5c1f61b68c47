// What the kubelet and runc need of the Pods we ship, beyond what the API server validates: each
// rule is a way the chart's Pods failed on the real kubelet in the image e2e
// (test/e2e/image.e2e.test.ts) while the same processes ran fine as host processes. The chart's
// default render is the kustomization's (test/e2e/helm.e2e.test.ts), so manifests/ stands for both.
import { describe, expect, it } from 'vitest';

import { kustomizeBuild } from '../support/kustomize.js';

interface Container {
  name: string;
  terminationMessagePath?: string;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}
interface Workload {
  kind: string;
  metadata: { name: string };
  spec: { template: { spec: { containers: Container[] } } };
}

const workloads = (kustomizeBuild('manifests') as unknown as Workload[]).filter((o) =>
  ['Deployment', 'DaemonSet'].includes(o.kind),
);
const containers = workloads.flatMap((w) =>
  w.spec.template.spec.containers.map((c) => ({ id: `${w.kind} ${w.metadata.name}/${c.name}`, container: c })),
);
const under = (file: string, folder: string): boolean =>
  file === folder || file.startsWith(`${folder.replace(/\/$/, '')}/`);

describe('the Pods we ship, as the kubelet runs them', () => {
  it('covers the three workloads', () => {
    expect(containers.map((c) => c.id).sort()).toEqual([
      'DaemonSet gpustack-agent/agent',
      'Deployment gpustack-admission/admission',
      'Deployment gpustack-operator/server',
    ]);
  });

  it('never puts the termination message file under a read-only mount (runc cannot create its mountpoint there)', () => {
    for (const { id, container } of containers) {
      const file = container.terminationMessagePath ?? '/dev/termination-log';
      const readOnly = (container.volumeMounts ?? []).filter((m) => m.readOnly === true && under(file, m.mountPath));
      expect(
        readOnly.map((m) => m.mountPath),
        `${id}: ${file}`,
      ).toEqual([]);
    }
  });

  it('the agent mounts the host /dev read-only and keeps its termination message outside it', () => {
    const agent = containers.find((c) => c.id === 'DaemonSet gpustack-agent/agent')?.container;
    expect(agent?.volumeMounts).toContainEqual({ name: 'dev', mountPath: '/dev', readOnly: true });
    expect(agent?.terminationMessagePath).toBe('/tmp/termination-log');
  });
});
