// The Helm chart with the real helm (v4, built from the Go module proxy like the other components):
// lint, `helm template` against the kustomization (one source of truth) and with other values, then
// `helm install`/`upgrade`/`uninstall` on a real control plane (etcd + kube-apiserver +
// kube-controller-manager), where Metacontroller and our hook server run the chain from the chart's
// controllers. Run with `npm run build && npx vitest run --config vitest.e2e.config.ts test/e2e/helm.e2e.test.ts`.
//
// Workloads are created for real here (helm applies them like any object): with no kubelet,
// scheduler or Deployment controller nothing runs them, so the API server's validation and
// defaulting is what they prove, as the dry-run of chain.ts does for manifests/.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';

import { kustomizeBuild, type KustomizeImage } from '../support/kustomize.js';
import { parseManifests, waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { createNode, exampleNodes, subsetDiff, waitForRender } from '../../harness/e2e/chain.js';
import { describeComponents, ensureComponents } from '../../harness/e2e/components.js';
import type { Metacontroller } from '../../harness/e2e/control-plane.js';
import {
  CHART,
  HELM_LABELS,
  MANIFESTS,
  NAMESPACE,
  RELEASE,
  byId,
  createHelm,
  firstContainer,
  imagesById,
  objectId,
  monitorCrds,
  withoutHelmLabels,
  type Helm,
} from '../../harness/e2e/helm.js';
import { CLI, type HookServer } from '../../harness/e2e/hook-server.js';
import { log } from '../../harness/e2e/log.js';
import { monitorTargets } from '../../harness/e2e/monitors.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const CONVERGE_MS = 120_000;
const WORKLOADS = ['Deployment', 'DaemonSet'];
/** What admission.enabled=false leaves out. */
const CHECKER = [
  'apps/v1 Deployment gpustack-system/gpustack-admission',
  'v1 ServiceAccount gpustack-system/gpustack-admission',
  'rbac.authorization.k8s.io/v1 ClusterRole gpustack-admission',
  'rbac.authorization.k8s.io/v1 ClusterRoleBinding gpustack-admission',
  // Its leader Lease, in the release namespace.
  'rbac.authorization.k8s.io/v1 Role gpustack-system/gpustack-admission-leader',
  'rbac.authorization.k8s.io/v1 RoleBinding gpustack-system/gpustack-admission-leader',
  'networking.k8s.io/v1 NetworkPolicy gpustack-system/gpustack-admission',
];
/**
 * What the chart makes that the kustomization leaves to the user (docs/install.md#hook-credentials):
 * the hooks' CA, serving certificate and token, random per render.
 */
const CHART_MADE = [
  'v1 Secret gpustack-system/gpustack-operator-hooks-ca',
  'v1 Secret gpustack-system/gpustack-operator-hooks-tls',
  'v1 Secret gpustack-system/gpustack-operator-hooks-token',
];
const isChartMade = (o: KubeObject): boolean => CHART_MADE.includes(objectId(o));

let helm: Helm;

const kustomized = (images?: readonly KustomizeImage[]): KubeObject[] =>
  kustomizeBuild(MANIFESTS, images) as unknown as KubeObject[];
/** What `kubectl apply -k manifests/` creates that the chart leaves to `--create-namespace`. */
const isNamespace = (o: KubeObject): boolean => o.kind === 'Namespace';

beforeAll(() => {
  const { helm: component } = ensureComponents(['helm']);
  helm = createHelm(component);
  log(describeComponents({ helm: component }));
}, 3_600_000);

const scratchDirs: string[] = [];
function helmScratch(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-kueue-chart-'));
  scratchDirs.push(dir);
  return dir;
}

afterAll(() => {
  helm?.dispose();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

describe(`the Helm chart with the real helm (helm lint, helm template)`, () => {
  it('passes helm lint --strict, with default values and with every optional part switched', () => {
    for (const values of [
      [],
      ['--set', 'admission.enabled=false', '--set', 'server.podDisruptionBudget.enabled=false'],
      ['--set', 'serviceMonitor.enabled=true', '--set', 'agent.publish=feature-file', '--set', 'logLevel=debug'],
      ['--set', 'grafanaDashboard.enabled=true', '--set', 'cardsCli.enabled=true'],
      ['--set', 'hooks.tls.source=cert-manager', '--set', 'hooks.auth.clientCertificate=true'],
      [
        '--set',
        'hooks.tls.enabled=false',
        '--set',
        'hooks.auth.bearerToken=false',
        '--set',
        'networkPolicy.enabled=false',
      ],
    ]) {
      const out = helm.run(['lint', '--strict', CHART, ...values]);
      expect(out, values.join(' ')).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    }
  });

  it('with default values renders exactly the objects of the kustomization (after its images:), less its Namespace, plus Helm labels', () => {
    const fromKustomize = kustomized();
    expect(fromKustomize.filter(isNamespace).map(objectId)).toEqual([`v1 Namespace ${NAMESPACE}`]);
    const rendered = helm.template();
    expect(rendered.filter(isChartMade).map(objectId).sort()).toEqual(CHART_MADE);
    // Parsed objects, not text: Helm's standard labels are the only difference allowed.
    expect(byId(rendered.filter((o) => !isChartMade(o)).map(withoutHelmLabels))).toEqual(
      byId(fromKustomize.filter((o) => !isNamespace(o))),
    );
    for (const object of rendered.filter((o) => o.kind !== 'CustomResourceDefinition'))
      expect(Object.keys(object.metadata.labels ?? {}), objectId(object)).toEqual(
        expect.arrayContaining([...HELM_LABELS]),
      );
  });

  it('the kustomization helper builds what the real kustomize (kubectl kustomize) builds', () => {
    const { kubectl } = ensureComponents(['kubectl']);
    const out = spawnSync(kubectl.binary, ['kustomize', MANIFESTS], { encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(out.status, out.stderr).toBe(0);
    expect(byId(parseManifests(out.stdout))).toEqual(byId(kustomized()));
  });

  it('image.repository and image.tag: every workload runs them, as after `kustomize edit set image`', () => {
    const rendered = helm.template({
      set: { 'image.repository': 'my-registry/gpustack-operator', 'image.tag': '1.2.3' },
    });
    const images = imagesById(rendered);
    expect(Object.keys(images).sort()).toEqual(
      [
        'apps/v1 DaemonSet gpustack-system/gpustack-agent',
        'apps/v1 Deployment gpustack-system/gpustack-admission',
        'apps/v1 Deployment gpustack-system/gpustack-operator',
      ].sort(),
    );
    for (const list of Object.values(images)) expect(list).toEqual(['my-registry/gpustack-operator:1.2.3']);
    const edited = kustomized([
      { name: 'gpustack-operator', newName: 'my-registry/gpustack-operator', newTag: '1.2.3' },
    ]);
    expect(byId(rendered.filter((o) => !isChartMade(o)).map(withoutHelmLabels))).toEqual(
      byId(edited.filter((o) => !isNamespace(o))),
    );
  });

  it('image.digest pins every workload by digest; image.pullPolicy and imagePullSecrets reach every Pod', () => {
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    const rendered = helm.template({
      set: { 'image.digest': digest, 'image.pullPolicy': 'Always' },
      setJson: { imagePullSecrets: [{ name: 'my-registry' }] },
    });
    const workloads = rendered.filter((o) => WORKLOADS.includes(o.kind));
    expect(workloads).toHaveLength(3);
    for (const workload of workloads) {
      expect(firstContainer(workload)).toMatchObject({
        image: `gpustack-operator@${digest}`,
        imagePullPolicy: 'Always',
      });
      expect((workload['spec'] as { template: { spec: unknown } }).template.spec).toMatchObject({
        imagePullSecrets: [{ name: 'my-registry' }],
      });
    }
  });

  it('admission.enabled=false: no checker objects, and the default SchedulingChain turns the check off', () => {
    const all = byId(helm.template());
    const rendered = byId(helm.template({ set: { 'admission.enabled': 'false' } }));
    expect(
      Object.keys(all)
        .filter((id) => !(id in rendered))
        .sort(),
    ).toEqual([...CHECKER].sort());
    expect(Object.keys(rendered).filter((id) => !(id in all))).toEqual([]);
    expect(rendered[`${GPUSTACK} SchedulingChain default`]?.['spec']).toMatchObject({ admissionCheck: 'Disabled' });
    // An explicit setting wins (e.g. `serve --admission` runs the checker in the hook server).
    const explicit = byId(
      helm.template({ set: { 'admission.enabled': 'false', 'schedulingChain.spec.admissionCheck': 'Enabled' } }),
    );
    expect(explicit[`${GPUSTACK} SchedulingChain default`]?.['spec']).toMatchObject({ admissionCheck: 'Enabled' });
  });

  it('serviceMonitor.enabled=true: a monitor for every process shipped, each resolving to its workload port and /metrics', () => {
    const rendered = helm.template({
      set: { 'serviceMonitor.enabled': 'true', 'serviceMonitor.labels.release': 'prom' },
    });
    const monitors = rendered.filter((o) => o.kind === 'ServiceMonitor' || o.kind === 'PodMonitor');
    expect(monitors.map(objectId).sort()).toEqual([
      `monitoring.coreos.com/v1 PodMonitor ${NAMESPACE}/gpustack-admission`,
      `monitoring.coreos.com/v1 PodMonitor ${NAMESPACE}/gpustack-agent`,
      `monitoring.coreos.com/v1 ServiceMonitor ${NAMESPACE}/gpustack-operator`,
    ]);
    for (const monitor of monitors)
      expect(monitor.metadata.labels, objectId(monitor)).toMatchObject({ release: 'prom' });
    // Each monitor's selector, port name and path resolve against the chart's own workloads.
    expect(
      monitorTargets(rendered)
        .map((t) => `${t.job} ${t.workload} ${t.portName}:${t.port}${t.path}`)
        .sort(),
    ).toEqual([
      'PodMonitor/gpustack-admission Deployment/gpustack-admission health:8082/metrics',
      'PodMonitor/gpustack-agent DaemonSet/gpustack-agent health:8081/metrics',
      'ServiceMonitor/gpustack-operator Deployment/gpustack-operator http:8080/metrics',
    ]);
    // The checker's monitor goes with the checker.
    const without = helm.template({ set: { 'serviceMonitor.enabled': 'true', 'admission.enabled': 'false' } });
    expect(without.filter((o) => o.kind === 'PodMonitor').map((o) => o.metadata.name)).toEqual(['gpustack-agent']);
    expect(helm.template().filter((o) => o.kind === 'ServiceMonitor' || o.kind === 'PodMonitor')).toEqual([]);
  });

  it('grafanaDashboard and cardsCli (off by default): the dashboard ConfigMap for the sidecar, the cards CLI ClusterRole and its binding', () => {
    const rendered = helm.template({
      set: {
        'grafanaDashboard.enabled': 'true',
        'grafanaDashboard.folder': 'GPU',
        'cardsCli.enabled': 'true',
        'cardsCli.subjects[0].kind': 'Group',
        'cardsCli.subjects[0].name': 'gpu-admins',
        'cardsCli.subjects[0].apiGroup': 'rbac.authorization.k8s.io',
      },
    });
    const dashboard = rendered.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'gpustack-cards-dashboard');
    expect(dashboard?.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(dashboard?.metadata.annotations).toEqual({ grafana_folder: 'GPU' });
    const json = (dashboard?.['data'] as Record<string, string>)['gpustack-cards.json'] as string;
    expect(JSON.parse(json)).toEqual(
      JSON.parse(readFileSync(path.join(CHART, 'dashboards', 'gpustack-cards.json'), 'utf8')),
    );
    const role = rendered.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'gpustack-cards-cli') as
      (KubeObject & { rules: { resources: string[]; verbs: string[] }[] }) | undefined;
    expect(role?.rules.find((r) => r.resources.includes('devicetaintrules'))?.verbs).toEqual([
      'get',
      'list',
      'create',
      'delete',
    ]);
    const binding = rendered.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'gpustack-cards-cli');
    expect(binding?.['subjects']).toEqual([
      { kind: 'Group', name: 'gpu-admins', apiGroup: 'rbac.authorization.k8s.io' },
    ]);
    const defaults = helm.template();
    expect(
      defaults.filter(
        (o) => o.metadata.name === 'gpustack-cards-dashboard' || o.metadata.name === 'gpustack-cards-cli',
      ),
    ).toEqual([]);
  });

  it('another release namespace: every namespaced object, RBAC subject, hook URL and the systemNamespace follow it', () => {
    const rendered = helm.template({ namespace: 'ops' });
    const text = JSON.stringify(rendered.filter((o) => o.kind !== 'CustomResourceDefinition'));
    expect(text).not.toContain(NAMESPACE);
    for (const object of rendered) {
      if (
        ['Deployment', 'DaemonSet', 'Service', 'PodDisruptionBudget', 'ServiceAccount', 'Role', 'RoleBinding'].includes(
          object.kind,
        )
      )
        expect(object.metadata.namespace, objectId(object)).toBe('ops');
    }
    const urls = [...text.matchAll(/"url":"([^"]*)"/g)].map((m) => new URL(m[1] as string).host);
    // Five controllers, each with a customize and a sync hook.
    expect(urls.length).toBe(10);
    expect(new Set(urls)).toEqual(new Set(['gpustack-operator.ops.svc:8443']));
    expect(byId(rendered)[`${GPUSTACK} SchedulingChain default`]?.['spec']).toMatchObject({ systemNamespace: 'ops' });
  });

  it('agent and process values: publish mode, interval, manufacturers, the feature-file mount, log level everywhere', () => {
    const rendered = byId(
      helm.template({
        set: {
          'agent.publish': 'feature-file',
          'agent.interval': '5m',
          'agent.manufacturers': '{nvidia,amd}',
          logLevel: 'debug',
          'agent.nodeSelector.gpu': 'yes',
          'server.replicas': '3',
        },
      }),
    );
    const agent = rendered[`apps/v1 DaemonSet ${NAMESPACE}/gpustack-agent`] as KubeObject;
    expect(firstContainer(agent).args).toEqual([
      'agent',
      '--publish',
      'feature-file',
      '--interval',
      '5m',
      '--host-root',
      '/host',
      '--manufacturers',
      'nvidia,amd',
      '--features-dir',
      '/etc/kubernetes/node-feature-discovery/features.d',
      '--log-level',
      'debug',
      '--kubelet-plugin',
    ]);
    const pod = (agent['spec'] as { template: { spec: Record<string, unknown> } }).template.spec;
    expect(pod['nodeSelector']).toEqual({ gpu: 'yes' });
    expect(pod['volumes']).toContainEqual({
      name: 'features-d',
      hostPath: { path: '/etc/kubernetes/node-feature-discovery/features.d', type: 'DirectoryOrCreate' },
    });
    for (const id of [
      `apps/v1 Deployment ${NAMESPACE}/gpustack-operator`,
      `apps/v1 Deployment ${NAMESPACE}/gpustack-admission`,
    ])
      expect(firstContainer(rendered[id] as KubeObject).args.slice(-2)).toEqual(['--log-level', 'debug']);
    expect(rendered[`apps/v1 Deployment ${NAMESPACE}/gpustack-operator`]?.['spec']).toMatchObject({ replicas: 3 });
  });

  it('agent.kubeletPlugin: other folders become flags and mounts; switched off, no plugin, mounts or root', () => {
    const moved = byId(
      helm.template({
        set: {
          'agent.kubeletPlugin.registryDir': '/data/kubelet/plugins_registry',
          'agent.kubeletPlugin.pluginsDir': '/data/kubelet/plugins',
          'agent.kubeletPlugin.cdiDir': '/etc/cdi',
        },
      }),
    );
    const agent = moved[`apps/v1 DaemonSet ${NAMESPACE}/gpustack-agent`] as KubeObject;
    expect(firstContainer(agent).args.slice(-7)).toEqual([
      '--kubelet-plugin',
      '--kubelet-registry-dir',
      '/data/kubelet/plugins_registry',
      '--kubelet-plugins-dir',
      '/data/kubelet/plugins',
      '--cdi-dir',
      '/etc/cdi',
    ]);
    const mounts = (firstContainer(agent) as unknown as { volumeMounts: { mountPath: string }[] }).volumeMounts;
    expect(mounts.map((m) => m.mountPath)).toEqual(
      expect.arrayContaining(['/data/kubelet/plugins_registry', '/data/kubelet/plugins', '/etc/cdi']),
    );

    const off = byId(helm.template({ set: { 'agent.kubeletPlugin.enabled': 'false' } }));
    const plain = firstContainer(off[`apps/v1 DaemonSet ${NAMESPACE}/gpustack-agent`] as KubeObject) as unknown as {
      args: string[];
      volumeMounts: { mountPath: string }[];
      securityContext: Record<string, unknown>;
    };
    expect(plain.args).not.toContain('--kubelet-plugin');
    expect(plain.volumeMounts.map((m) => m.mountPath)).not.toContain('/var/lib/kubelet/plugins');
    expect(plain.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
    const role = off['rbac.authorization.k8s.io/v1 ClusterRole gpustack-agent'] as KubeObject & {
      rules: { resources: string[]; verbs: string[] }[];
    };
    // The owner decision lists claims with or without the plugin; only the plugin reads one (get).
    expect(role.rules.find((r) => r.resources.includes('resourceclaims'))?.verbs).toEqual(['list']);
  });

  it.each([
    ['agent.publish=nodefeatures', /agent\.publish|publish/],
    ['agent.manufacturers={intel}', /manufacturers/],
    ['logLevel=verbose', /logLevel/],
    ['image.pullPolicy=Sometimes', /pullPolicy/],
    ['agent.interval=soon', /interval/],
    ['serever.replicas=3', /serever/],
    ['hooks.tls.source=vault', /source/],
    ['networkPolicy.monitoringNamespace=Not_A_Namespace', /monitoringNamespace/],
  ])('refuses %s by values.schema.json, naming the value', (value, message) => {
    let error: unknown;
    try {
      helm.run(['template', RELEASE, CHART, '--set', value]);
    } catch (e) {
      error = e;
    }
    expect(String(error)).toMatch(message);
  });
});

describe("Kueue's own Helm chart takes our configuration as a value (kueue-config --merge of its values)", () => {
  it('helm template of the chart with the merged values gives kueue-manager-config the configuration a direct merge gives', () => {
    const { kueue } = ensureComponents(['kueue']);
    // build-components.sh keeps the chart of the Kueue it built next to its CRDs.
    const chart = process.env['E2E_KUEUE_CHART'] ?? path.join(path.dirname(kueue.crds ?? '.'), 'chart');
    expect(existsSync(path.join(chart, 'Chart.yaml')), `Kueue's chart at ${chart} (E2E_KUEUE_CHART)`).toBe(true);
    // The version the binary reports (a prebuilt one that does not say gets the command's default).
    const version = kueue.version === 'prebuilt' ? [] : ['--kueue-version', kueue.version];
    const kueueConfig = (input: string): string => {
      const run = spawnSync(process.execPath, [CLI, 'kueue-config', ...version, '--merge', '-'], {
        input,
        encoding: 'utf8',
      });
      expect(run.status, run.stderr).toBe(0);
      return run.stdout;
    };
    const defaults = helm.run(['show', 'values', chart]);
    const merged = parse(kueueConfig(defaults)) as { managerConfig: { controllerManagerConfigYaml: string } };
    // The rest of the chart's values come back untouched.
    const { managerConfig: _ours, ...others } = merged as Record<string, unknown>;
    const { managerConfig: _theirs, ...defaultOthers } = parse(defaults) as Record<string, unknown>;
    expect(others).toEqual(defaultOthers);

    const valuesFile = path.join(helmScratch(), 'kueue-values.yaml');
    writeFileSync(valuesFile, stringify(merged));
    const managerConfig = (values: string[]): unknown => {
      const rendered = parseManifests(helm.run(['template', 'kueue', chart, '-n', 'kueue-system', ...values]));
      const configMaps = rendered.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('manager-config'));
      expect(configMaps.map((o) => o.metadata.name)).toEqual(['kueue-manager-config']);
      const data = (configMaps[0] as unknown as { data: Record<string, string> }).data;
      return parse(data['controller_manager_config.yaml'] ?? '');
    };
    // The chart adds keys of its own (internalCertManagement, …) to the value: merging into the
    // values and then rendering gives what merging into the rendered ConfigMap gives.
    const live = managerConfig(['-f', valuesFile]);
    expect(live).toEqual(parse(kueueConfig(stringify(managerConfig([])))));
    // The point: the manager Kueue's chart deploys reads our transformations and gates.
    expect(live).toMatchObject({ featureGates: { AssignQueueLabelsForPods: false } });
    const inputs = (live as { resources: { transformations: { input: string }[] } }).resources.transformations.map(
      (t) => t.input,
    );
    expect(inputs).toEqual(expect.arrayContaining(['nvidia.com/gpu', 'nvidia.com/gpu.shared', 'huawei.com/npu']));
  });
});

describe('helm install, upgrade and uninstall on a real API server', () => {
  let client: KubeClient;
  let server: HookServer;
  /** The values every upgrade passes (helm upgrade starts again from the chart's defaults). */
  const values: Record<string, string> = {};

  const kube = (args: string[]): string => helm.run(args, { kubeconfig: cluster.kubeconfig, timeoutMs: 180_000 });
  const upgrade = (set: Record<string, string>): string => {
    Object.assign(values, set);
    return kube(['upgrade', RELEASE, CHART, '--namespace', NAMESPACE, ...helm.valueArgs({ set: values })]);
  };
  const releaseObjects = (): KubeObject[] =>
    parseManifests(kube(['get', 'manifest', RELEASE, '--namespace', NAMESPACE]));
  const live = (o: KubeObject): Promise<KubeObject | undefined> =>
    client.get(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace);

  const cluster = useCluster({
    kueue: 'crds',
    hooks: true,
    // The chart installs our controllers; the hook URL comes with an upgrade below.
    manifests: false,
    setup: async (c) => {
      client = c.client;
      server = c.hookServer as HookServer;
      // Metacontroller installs its own CRDs at start (v4: every field the chart's controllers use).
      const metacontroller = c.metacontroller as Metacontroller;
      const monitor = monitorCrds();
      await client.installCrds(monitor.files);
      log(
        `metacontroller ${metacontroller.component.version}; ` +
          `ServiceMonitor and PodMonitor CRDs from ${monitor.source}; hook server ${server.url}; logs ${c.logsDir}`,
      );
    },
  });

  it('helm install (default values, server-side apply) creates what `kubectl apply -k manifests/` would, CRDs first', async () => {
    const out = kube(['install', RELEASE, CHART, '--namespace', NAMESPACE, '--create-namespace']);
    expect(out).toMatch(/STATUS: deployed/);
    expect(await client.get('v1', 'Namespace', NAMESPACE)).toBeDefined();
    const problems: string[] = [];
    for (const want of kustomized().filter((o) => !isNamespace(o))) {
      const have = await live(want);
      if (!have) {
        problems.push(`missing ${objectId(want)}`);
        continue;
      }
      // Every field of manifests/ is on the live object (the API server adds defaults around them).
      const { metadata, ...rest } = want;
      subsetDiff(rest, have, objectId(want), problems);
      subsetDiff(metadata.labels ?? {}, have.metadata.labels ?? {}, `${objectId(want)} labels`, problems);
      if (want.kind !== 'CustomResourceDefinition') {
        const managers = (have.metadata['managedFields'] as { manager: string; operation: string }[] | undefined) ?? [];
        if (!managers.some((m) => m.manager === 'helm' && m.operation === 'Apply'))
          problems.push(
            `${objectId(want)}: not server-side applied by helm (${JSON.stringify(managers.map((m) => m.manager))})`,
          );
      }
    }
    expect(problems).toEqual([]);
    // No Pod ever: no kubelet, no scheduler, no Deployment controller here.
    expect(await client.list('v1', 'Pod', { namespace: NAMESPACE })).toEqual([]);
  });

  it("the chart's controllers run the chain: Metacontroller calls our hook server and the cluster converges to render", async () => {
    upgrade({ 'controllers.hookBaseURL': server.url });
    const controllers = releaseObjects().filter((o) => o.kind.endsWith('Controller'));
    expect(controllers.map((c) => c.metadata.name).sort()).toEqual([
      'gpustack-instance-type',
      'gpustack-node-devices-check',
      'gpustack-node-profile',
      'gpustack-node-shard',
      'gpustack-scheduling-chain',
    ]);
    for (const controller of controllers)
      expect(JSON.stringify((await live(controller))?.['spec'])).toContain(`"url":"${server.url}/hooks/`);
    const nodes = exampleNodes('reference-4-node.yaml');
    for (const node of nodes) await createNode(client, node);
    const managed = await waitForRender(client, async () => nodes, 'the live chain matches render', CONVERGE_MS);
    expect(managed).toBe(nodes.length);
  });

  it('helm upgrade --set image.tag: every workload runs the new image, the rest is unchanged', async () => {
    const before = byId(releaseObjects());
    upgrade({ 'image.tag': '0.2.0' });
    const after = byId(releaseObjects());
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    for (const [id, object] of Object.entries(after)) {
      const have = await live(object);
      if (WORKLOADS.includes(object.kind))
        expect(firstContainer(have as KubeObject).image, id).toBe('gpustack-operator:0.2.0');
      else expect(withoutHelmLabels(object), id).toEqual(withoutHelmLabels(before[id] as KubeObject));
    }
    expect(kube(['history', RELEASE, '--namespace', NAMESPACE]).trim().split('\n')).toHaveLength(4);
  });

  it('helm upgrade --set admission.enabled=false deletes the checker and its RBAC, and the chain drops the AdmissionCheck', async () => {
    upgrade({ 'admission.enabled': 'false' });
    for (const id of CHECKER) {
      const [apiVersion, kind, ref] = id.split(' ') as [string, string, string];
      const [namespace, name] = ref.includes('/') ? (ref.split('/') as [string, string]) : [undefined, ref];
      expect(await client.get(apiVersion, kind, name, namespace), id).toBeUndefined();
    }
    const chain = await client.get<KubeObject & { spec: { admissionCheck?: string } }>(
      GPUSTACK,
      'SchedulingChain',
      'default',
    );
    expect(chain?.spec.admissionCheck).toBe('Disabled');
    await waitFor(
      async () => {
        const check = await client.get(KUEUE, 'AdmissionCheck', 'gpustack-node-devices');
        const queue = await client.get<KubeObject & { spec: { admissionChecksStrategy?: unknown } }>(
          KUEUE,
          'ClusterQueue',
          'gpustack-nvidia-tesla-t4-linux-amd64',
        );
        return check === undefined && queue !== undefined && queue.spec.admissionChecksStrategy === undefined;
      },
      CONVERGE_MS,
      'the AdmissionCheck is deleted and the t4 ClusterQueue no longer lists it',
      1000,
    );
  });

  it('serviceMonitor.enabled=true: the monitors pass the real prometheus-operator CRDs and select the live Service and Pods templates', async () => {
    upgrade({ 'serviceMonitor.enabled': 'true' });
    const monitor = await client.get<KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(
      'monitoring.coreos.com/v1',
      'ServiceMonitor',
      'gpustack-operator',
      NAMESPACE,
    );
    expect(monitor).toBeDefined();
    const services = await client.list('v1', 'Service', { namespace: NAMESPACE });
    const selected = services.filter((s) =>
      Object.entries(monitor?.spec.selector.matchLabels ?? {}).every(([k, v]) => s.metadata.labels?.[k] === v),
    );
    expect(selected.map((s) => s.metadata.name)).toEqual(['gpustack-operator']);
    const podMonitors = await client.list<KubeObject & { spec: { selector: { matchLabels: Record<string, string> } } }>(
      'monitoring.coreos.com/v1',
      'PodMonitor',
      { namespace: NAMESPACE },
    );
    const workloads = [
      ...(await client.list<KubeObject & { spec: { template: { metadata: { labels: Record<string, string> } } } }>(
        'apps/v1',
        'Deployment',
        { namespace: NAMESPACE },
      )),
      ...(await client.list<KubeObject & { spec: { template: { metadata: { labels: Record<string, string> } } } }>(
        'apps/v1',
        'DaemonSet',
        { namespace: NAMESPACE },
      )),
    ];
    // One PodMonitor per checker and agent workload the release runs (this release may run no checker).
    expect(podMonitors.map((m) => m.metadata.name).sort()).toEqual(
      workloads
        .map((w) => w.metadata.name)
        .filter((n) => n === 'gpustack-admission' || n === 'gpustack-agent')
        .sort(),
    );
    expect(podMonitors.map((m) => m.metadata.name)).toContain('gpustack-agent');
    for (const m of podMonitors)
      expect(
        workloads
          .filter((w) =>
            Object.entries(m.spec.selector.matchLabels).every(([k, v]) => w.spec.template.metadata.labels[k] === v),
          )
          .map((w) => w.metadata.name),
        m.metadata.name,
      ).toEqual([m.metadata.name]);
  });

  it('uninstall as docs/install.md#uninstall says: delete the SchedulingChain while the controllers run, then helm uninstall; only the CRDs stay', async () => {
    // helm uninstall alone deletes the instance-type controller together with the chain, so the
    // InstanceTypes keep its finalizer and stay Terminating (with their queues): tear the chain down first.
    expect(await client.delete(GPUSTACK, 'SchedulingChain', 'default')).toBe(true);
    const chainObjects = async (): Promise<string[]> =>
      [
        ...(await client.list(GPUSTACK, 'InstanceType')),
        ...(await client.list(KUEUE, 'ResourceFlavor')),
        ...(await client.list(KUEUE, 'ClusterQueue')),
        ...(await client.list(KUEUE, 'LocalQueue')),
        ...(await client.list(KUEUE, 'AdmissionCheck')),
      ].map(objectId);
    let left: string[] = [];
    await waitFor(
      async () => (left = await chainObjects()).length === 0,
      CONVERGE_MS,
      'the chain is torn down (InstanceTypes finalized, queues and flavors deleted)',
      1000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; left: ${left.join(', ')}`);
    });
    const installed = releaseObjects();
    kube(['uninstall', RELEASE, '--namespace', NAMESPACE]);
    await waitFor(
      async () => {
        for (const object of installed) if (await live(object)) return false;
        return true;
      },
      60_000,
      'every object of the release is gone',
    );
    expect(await chainObjects()).toEqual([]);
    for (const name of ['schedulingchains.worker.gpustack.ai', 'instancetypes.worker.gpustack.ai'])
      expect(await client.get('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name), name).toBeDefined();
  });
});
