import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  NODES,
  PODS,
  RESOURCE_FLAVORS,
  SCHEDULING_CHAINS,
  RESOURCE_SLICES,
  RESOURCE_CLAIMS,
  RESOURCE_CLAIM_TEMPLATES,
  INSTANCE_TYPES,
  WORKLOADS,
  instanceTypePath,
  workloadStatusPath,
} from '../../src/admission/index.js';
import { ADMISSION_FLAGS } from '../../src/cli/admission-flags.js';
import { AGENT_FLAGS } from '../../src/cli/agent-flags.js';
import { NodeSchema } from '../../src/k8s/index.js';
import { hookRoutes } from '../../src/server/index.js';
import { renderChain } from '../../src/render/index.js';

interface ControllerManifest {
  kind: string;
  metadata: { name: string };
  spec: {
    hooks: Record<string, { version?: string; webhook: { url: string } }>;
    childResources?: { apiVersion: string; resource: string }[];
    attachments?: { apiVersion: string; resource: string }[];
    resources?: { apiVersion: string; resource: string; ignoreStatusChanges?: boolean }[];
  };
}

const DIR = 'manifests/compositecontrollers';
const controllers = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => parse(readFileSync(join(DIR, f), 'utf8')) as ControllerManifest);
const byName = new Map(controllers.map((c) => [c.metadata.name, c]));

// Plural resource names of the kinds we emit.
const RESOURCE_OF_KIND: Record<string, string> = {
  ResourceFlavor: 'resourceflavors',
  InstanceType: 'instancetypes',
  AdmissionCheck: 'admissionchecks',
  ClusterQueue: 'clusterqueues',
  LocalQueue: 'localqueues',
  ChainSettings: 'chainsettings',
  DeviceClass: 'deviceclasses',
  NodeProfile: 'nodeprofiles',
  NodeShard: 'nodeshards',
};
const EMITTED_BY: Record<string, string> = {
  ResourceFlavor: 'gpustack-scheduling-chain',
  InstanceType: 'gpustack-scheduling-chain',
  AdmissionCheck: 'gpustack-scheduling-chain',
  ChainSettings: 'gpustack-scheduling-chain',
  DeviceClass: 'gpustack-scheduling-chain',
  ClusterQueue: 'gpustack-instance-type',
  LocalQueue: 'gpustack-instance-type',
  NodeProfile: 'gpustack-node-profile',
  NodeShard: 'gpustack-scheduling-chain',
};

describe('controller manifests ↔ server contract', () => {
  it('declares the five controllers of docs/architecture.md#controllers', () => {
    expect([...byName.keys()].sort()).toEqual([
      'gpustack-instance-type',
      'gpustack-node-devices-check',
      'gpustack-node-profile',
      'gpustack-node-shard',
      'gpustack-scheduling-chain',
    ]);
  });

  it.each(
    controllers.flatMap((c) =>
      Object.entries(c.spec.hooks).map(([hook, def]) => [c.metadata.name, hook, def] as const),
    ),
  )('%s %s hook is a v2 hook whose URL resolves to a server route', (_name, hook, def) => {
    const path = new URL(def.webhook.url).pathname;
    expect(def.version).toBe('v2');
    expect(hookRoutes()).toContain(path);
    expect(path.endsWith(`/${hook}`)).toBe(true);
  });

  it('every kind the sync functions emit is a declared child of its controller at the same apiVersion', () => {
    const nodes = (parse(readFileSync('examples/clusters/mixed.json', 'utf8')) as { items: unknown[] }).items.map((n) =>
      NodeSchema.parse(n),
    );
    const result = renderChain({ nodes, namespaces: ['default', 'team-a'] }, { now: '2026-01-01T00:00:00Z' });
    if (!result.ok) throw new Error(result.error.message);
    const kinds = new Set(result.objects.map((o) => `${o.apiVersion} ${o.kind}`));
    expect(kinds.size).toBe(9);
    for (const object of result.objects) {
      const controller = byName.get(EMITTED_BY[object.kind] ?? '');
      // A DecoratorController's children are its attachments.
      const children = controller?.spec.childResources ?? controller?.spec.attachments;
      expect(children, `${object.kind} has an emitting controller`).toBeDefined();
      expect(children).toContainEqual(
        expect.objectContaining({ apiVersion: object.apiVersion, resource: RESOURCE_OF_KIND[object.kind] }),
      );
    }
  });

  it('node-profile is synced on Node status writes: it reads status.capacity (Metacontroller v4 skips them under ignoreStatusChanges)', () => {
    const nodes = byName.get('gpustack-node-profile')?.spec.resources?.find((r) => r.resource === 'nodes');
    expect(nodes?.ignoreStatusChanges).toBe(false);
    const template = readFileSync('charts/gpustack-operator/templates/compositecontrollers/node-profile.yaml', 'utf8');
    expect(template).toMatch(/^ {6}ignoreStatusChanges: false$/m);
    expect(template).not.toMatch(/ignoreStatusChanges: true/);
  });

  it('kustomization lists every manifest file (except the Kueue configuration, which is merged into Kueue)', () => {
    const kustomization = parse(readFileSync('manifests/kustomization.yaml', 'utf8')) as { resources: string[] };
    const files = readdirSync('manifests', { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !f.startsWith('kueue/'),
    );
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const file of files) {
      for (const doc of parseAllDocuments(readFileSync(join('manifests', file), 'utf8')))
        expect(doc.errors).toEqual([]);
    }
  });
});

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  name: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources: { limits?: Record<string, string> };
  securityContext: { allowPrivilegeEscalation: boolean; readOnlyRootFilesystem: boolean };
}
interface Deployment {
  spec: {
    replicas: number;
    template: {
      spec: { serviceAccountName: string; securityContext: { runAsNonRoot: boolean }; containers: Container[] };
    };
  };
}

describe('admission checker manifests ↔ the checker', () => {
  const docs = ['manifests/admission/rbac.yaml', 'manifests/admission/deployment.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8')).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } } & Record<string, unknown>,
    ),
  );
  const ofKind = (kind: string) => docs.filter((d) => d.kind === kind);
  const rules = (ofKind('ClusterRole')[0]?.['rules'] ?? []) as PolicyRule[];
  const deployment = ofKind('Deployment')[0] as unknown as Deployment;
  const container = deployment.spec.template.spec.containers[0] as Container;
  const flag = (name: string) => container.args[container.args.indexOf(name) + 1];

  /** `/apis/<group>/<version>/<resource>` or `/api/v1/<resource>` (query dropped) → group and resource. */
  function groupResource(path: string): [string, string] {
    const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
    return parts[0] === 'api' ? ['', parts[2] ?? ''] : [parts[1] ?? '', parts.slice(3).join('/')];
  }
  function allows(group: string, resource: string, verb: string): boolean {
    return rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
  }

  it.each(
    [
      WORKLOADS,
      RESOURCE_FLAVORS,
      NODES,
      PODS,
      SCHEDULING_CHAINS,
      RESOURCE_SLICES,
      RESOURCE_CLAIMS,
      RESOURCE_CLAIM_TEMPLATES,
      INSTANCE_TYPES,
    ].map((r) => [r.name, r.path] as const),
  )('RBAC lets it list and watch %s (%s)', (_name, path) => {
    const [group, resource] = groupResource(path);
    for (const verb of ['get', 'list', 'watch'])
      expect(allows(group, resource, verb), `${verb} ${group}/${resource}`).toBe(true);
  });

  it('RBAC lets it patch the Workload status subresource it writes, and nothing else of the Workload', () => {
    // apis / <group> / <version> / namespaces / ns / <resource> / w / <subresource>
    const parts =
      workloadStatusPath({ namespace: 'ns', name: 'w' }, 'gpustack-node-devices')
        .split('?')[0]
        ?.split('/')
        .filter(Boolean) ?? [];
    const [group, resource] = [parts[1] ?? '', `${parts[5]}/${parts[7]}`];
    expect([group, resource]).toEqual(['kueue.x-k8s.io', 'workloads/status']);
    expect(allows(group, resource, 'patch')).toBe(true);
    expect(
      rules
        .flatMap((r) => r.verbs)
        .filter((v) => !['get', 'list', 'watch'].includes(v))
        .sort(),
    ).toEqual(['create', 'patch', 'patch', 'update']);
  });

  it('RBAC lets it patch InstanceTypes, where it applies the ledger count annotation, and nothing else', () => {
    const parts =
      instanceTypePath('gpustack-nvidia-h100-linux-amd64', 'gpustack-node-devices')
        .split('?')[0]
        ?.split('/')
        .filter(Boolean) ?? [];
    expect([parts[1], parts[3]]).toEqual(['worker.gpustack.ai', 'instancetypes']);
    expect(allows('worker.gpustack.ai', 'instancetypes', 'patch')).toBe(true);
    const writers = rules.filter((r) => r.verbs.some((v) => !['get', 'list', 'watch'].includes(v)));
    expect(writers.flatMap((r) => r.resources).sort()).toEqual(['events', 'instancetypes', 'workloads/status']);
  });

  it('RBAC lets it create the Warning Events of an over-committed card (issue 46), and only create them', () => {
    expect(allows('events.k8s.io', 'events', 'create')).toBe(true);
    expect(rules.filter((r) => r.resources.includes('events'))).toEqual([
      expect.objectContaining({ apiGroups: ['events.k8s.io'], verbs: ['create'] }),
    ]);
  });

  it('the ServiceAccount the Deployment runs as is the one the ClusterRoleBinding binds', () => {
    const binding = ofKind('ClusterRoleBinding')[0] as unknown as {
      roleRef: { name: string };
      subjects: { name: string; namespace: string }[];
    };
    const account = ofKind('ServiceAccount')[0];
    expect(binding.roleRef.name).toBe(ofKind('ClusterRole')[0]?.metadata.name);
    expect(binding.subjects).toEqual([
      {
        kind: 'ServiceAccount',
        name: deployment.spec.template.spec.serviceAccountName,
        namespace: account?.metadata.namespace,
      },
    ]);
    expect(account?.metadata.name).toBe(deployment.spec.template.spec.serviceAccountName);
  });

  it('runs a real CLI subcommand with flags the subcommand knows', () => {
    expect(container.args[0]).toBe('admission');
    // The command table of src/cli/main.ts names it.
    expect(readFileSync('src/cli/main.ts', 'utf8')).toMatch(/\n {2}admission: async \(args\) =>/);
    const known = [...Object.keys(ADMISSION_FLAGS), 'log-level'];
    for (const arg of container.args.slice(1).filter((a) => a.startsWith('--'))) expect(known).toContain(arg.slice(2));
  });

  it('writes the entry of the AdmissionCheck the chain emits', () => {
    const nodes = (parse(readFileSync('examples/clusters/mixed.json', 'utf8')) as { items: unknown[] }).items.map((n) =>
      NodeSchema.parse(n),
    );
    const result = renderChain({ nodes, namespaces: ['default'] }, { now: '2026-01-01T00:00:00Z' });
    if (!result.ok) throw new Error(result.error.message);
    const checks = result.objects.filter((o) => o.kind === 'AdmissionCheck').map((o) => o.metadata.name);
    expect(checks).toEqual([flag('--check-name') ?? ADMISSION_FLAGS['check-name'].default]);
  });

  it('every probe hits /healthz on the port given by --health-port', () => {
    const port = container.ports.find((p) => p.name === 'health');
    expect(port?.containerPort).toBe(Number(flag('--health-port') ?? ADMISSION_FLAGS['health-port'].default));
    const probes = [container.livenessProbe, container.readinessProbe, container.startupProbe];
    for (const probe of probes) expect(probe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
  });

  it('runs as non-root on a read-only root filesystem with a memory limit, like the hook server', () => {
    expect(deployment.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    expect(container.resources.limits?.['memory']).toBeDefined();
    // One is enough; the leader Lease covers the times two run (docs/operations.md#leader-election).
    expect(deployment.spec.replicas).toBe(1);
  });
});

interface AgentDaemonSet {
  spec: {
    template: {
      spec: {
        containers: {
          args: string[];
          env?: { name: string; value?: string }[];
          volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
          securityContext?: Record<string, unknown>;
          ports?: { name: string; containerPort: number }[];
          livenessProbe?: Probe;
          readinessProbe?: Probe;
        }[];
        volumes: { name: string; hostPath?: { path: string } }[];
      };
    };
  };
}

describe('agent DaemonSet ↔ the agent', () => {
  const pod = (parse(readFileSync('manifests/agent/daemonset.yaml', 'utf8')) as AgentDaemonSet).spec.template.spec;
  const container = pod.containers[0] as AgentDaemonSet['spec']['template']['spec']['containers'][number];
  const hostRoot = container.args[container.args.indexOf('--host-root') + 1] ?? '';
  const hostPathOf = (volume: string) => pod.volumes.find((v) => v.name === volume)?.hostPath?.path;

  it('runs `agent` with flags the agent knows', () => {
    expect(container.args[0]).toBe('agent');
    for (const arg of container.args.slice(1).filter((a) => a.startsWith('--')))
      expect(Object.keys(AGENT_FLAGS)).toContain(arg.slice(2));
  });

  it('is live while it detects (/healthz) and ready while its publishes reach the API server (/readyz), on --health-port', () => {
    const port = container.ports?.find((p) => p.name === 'health')?.containerPort;
    const at = container.args.indexOf('--health-port');
    const flag = at < 0 ? AGENT_FLAGS['health-port'].default : container.args[at + 1];
    expect(port).toBe(Number(flag));
    expect(container.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
  });

  it('sets no LD_* variable: the dynamic loader would hand the host libraries to Node itself', () => {
    expect((container.env ?? []).map((e) => e.name).filter((name) => name.startsWith('LD_'))).toEqual([]);
  });

  it('passes --host-root, and mounts each host folder read-only at the host root plus its host path', () => {
    expect(hostRoot).toMatch(/^\/[^/]/);
    const underRoot = container.volumeMounts.filter((m) => m.mountPath.startsWith(`${hostRoot}/`));
    expect(underRoot.map((m) => hostPathOf(m.name))).toEqual(['/usr/lib64', '/usr/lib', '/usr/local', '/opt']);
    for (const mount of underRoot) {
      expect(mount.mountPath).toBe(`${hostRoot}${hostPathOf(mount.name)}`);
      expect(mount.readOnly).toBe(true);
    }
    // Every other host folder is mounted at its own path: the device nodes, which the vendor libraries
    // open at /dev, and the kubelet plugin's folders (sockets, checkpoint, CDI specs: written).
    const elsewhere = container.volumeMounts.filter((m) => !underRoot.includes(m));
    expect(elsewhere.map((m) => [m.mountPath, hostPathOf(m.name), m.readOnly])).toEqual([
      ['/dev', '/dev', true],
      ['/var/lib/kubelet/plugins_registry', '/var/lib/kubelet/plugins_registry', undefined],
      ['/var/lib/kubelet/plugins', '/var/lib/kubelet/plugins', undefined],
      ['/var/run/cdi', '/var/run/cdi', undefined],
    ]);
  });

  it('serves the kubelet plugin on the folders it mounts, as root without capabilities', () => {
    expect(container.args).toContain('--kubelet-plugin');
    // No folder flag: the defaults are the kubelet's, and the mounts above are those paths.
    const mounted = container.volumeMounts.map((m) => m.mountPath);
    for (const flag of ['kubelet-registry-dir', 'kubelet-plugins-dir', 'cdi-dir'] as const) {
      expect(container.args).not.toContain(`--${flag}`);
      expect(mounted).toContain(AGENT_FLAGS[flag].default);
    }
    expect(container.securityContext).toEqual({
      runAsUser: 0,
      runAsGroup: 0,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });
});
