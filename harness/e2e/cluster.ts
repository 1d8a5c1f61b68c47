// The one e2e fixture: starts the cluster a scenario asks for — control plane (+ scheduler, + the
// DRA claim controller), Kueue (manager or only its CRDs), our hook server, Metacontroller with our
// manifests, the admission checker — sets what the running versions need (versions.ts), prints
// every component's version and source once, and stops it all (last started first).
//
// Every process it starts is a ManagedProcess: `kill(signal)` and `restart()` (same arguments,
// ports and data dirs; etcd's data survives an API server restart). `cluster.process(name)` finds
// one by name (`etcd`, `kube-apiserver`, `kube-controller-manager`, `kube-scheduler`,
// `metacontroller`, `kueue`, `jobset`, `lws`, `hook-server`, `admission-checker`, `agent-<node>`).
import { readdirSync } from 'node:fs';
import path from 'node:path';

import { nvidiaMachine, startFakeAgent, type FakeAgent } from './agent.js';
import { waitFor, type KubeClient } from './apply.js';
import { installOurManifests, type ManifestOptions } from './chain.js';
import { describeComponents, ensureComponents, ensureCrds, type Component, type ComponentName } from './components.js';
import {
  DRA_CONTROLLERS,
  planeComponents,
  startControlPlane,
  startMetacontroller,
  type ControlPlane,
  type Metacontroller,
} from './control-plane.js';
import { CLI, startHookServer, type HookServer, type HookServerOptions } from './hook-server.js';
import { startKueue, type FrameworkResource, type Kueue } from './kueue.js';
import {
  startWorkloadController,
  workloadCrdFiles,
  type WorkloadController,
  type WorkloadControllerName,
} from './workload-controllers.js';
import { log } from './log.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';
import { controlPlaneFlags, deviceTaintRuleApi, type DeviceTaintRuleApi } from './versions.js';
import type { FakeMachine } from '../native/fake-machine.js';

export interface ClusterOptions {
  /** kube-controller-manager (namespace + garbage collection); default true (E2E_CONTROLLER_MANAGER=0: false). */
  controllerManager?: boolean;
  /** kube-scheduler; default false (Pods stay unbound). */
  scheduler?: boolean;
  /** The resource claim controller (a Pod's claims from its templates); default: with the scheduler. */
  dra?: boolean;
  /** More kube-controller-manager controllers (e.g. `deployment`, `daemonset` for a chart's workloads). */
  controllers?: readonly string[];
  /** More kube-controller-manager flags (e.g. `--node-monitor-grace-period=10s`). */
  controllerManagerArgs?: readonly string[];
  /**
   * true: serve DeviceTaintRule (1.37: as is; 1.36: gate + runtime-config); false: serve none (1.37:
   * the resource turned off); default the version's own. `cluster.deviceTaintRules` says where.
   */
  deviceTaintRules?: boolean;
  /** More feature gates, on the API server, controller manager and scheduler alike. */
  gates?: Readonly<Record<string, boolean>>;
  /** More kube-apiserver flags. */
  apiserverArgs?: readonly string[];
  /** Keep the ServiceAccount admission plugin (in-cluster clients). */
  serviceAccountTokens?: boolean;
  /** Kueue: `true` the manager with its webhooks, `'crds'` only its CRDs (the chain's objects), default none. */
  kueue?: boolean | 'crds';
  /**
   * Job frameworks Kueue manages here beyond Jobs, with Kueue's webhooks for them registered (with
   * `kueue: true`): `jobset` and `lws` also start the JobSet / LeaderWorkerSet manager (their CRDs
   * applied before Kueue starts); `pod` and `deployment` need the `deployment`/`replicaset` controllers.
   */
  frameworks?: readonly KueueFramework[];
  /** Our hook server: `true` or its options (extra args/env, URL scheme, probe). Default false. */
  hooks?: boolean | HookServerOptions;
  /** Metacontroller: `true` or its options; default: with the hooks. */
  metacontroller?: boolean | { args?: readonly string[]; env?: Readonly<Record<string, string>>; logLevel?: number };
  /** Apply our manifests (CRDs, controllers pointed at the hook server); default: with the hooks. */
  manifests?: boolean | ManifestOptions;
  /** The admission checker (`gpustack-operator admission`); default false. */
  checker?: boolean | { args?: readonly string[]; env?: Readonly<Record<string, string>> };
  /** More components to locate (built if missing) and print, e.g. `kubectl`, `helm`. */
  components?: readonly ComponentName[];
  /** Where the logs go (default a new temp dir, removed unless a test failed). */
  logsDir?: string;
}

export interface Checker {
  process: ManagedProcess;
  /** `http://127.0.0.1:<port>`: `/healthz`, `/metrics`. */
  url: string;
}

export type KueueFramework = WorkloadControllerName | 'pod' | 'deployment';

/** What Kueue's webhooks of each framework intercept. */
const FRAMEWORK_RESOURCES: Record<KueueFramework, FrameworkResource> = {
  jobset: { group: 'jobset.x-k8s.io', resource: 'jobsets' },
  lws: { group: 'leaderworkerset.x-k8s.io', resource: 'leaderworkersets' },
  pod: { group: '', resource: 'pods' },
  deployment: { group: 'apps', resource: 'deployments' },
};

export interface Cluster {
  plane: ControlPlane;
  client: KubeClient;
  kubeconfig: string;
  logsDir: string;
  hookServer?: HookServer;
  metacontroller?: Metacontroller;
  kueue?: Kueue;
  /** The JobSet / LeaderWorkerSet managers started for `frameworks`. */
  workloadControllers: Partial<Record<WorkloadControllerName, WorkloadController>>;
  checker?: Checker;
  /** Every component located, by name (the plane's and the ones asked for). */
  components: Partial<Record<ComponentName, Component>>;
  /** The running versions: `kubernetes` (kube-apiserver), `kueue`, `metacontroller` when started. */
  versions: { kubernetes: string; kueue?: string; metacontroller?: string };
  /** Where DeviceTaintRule is served (1.37: always; 1.36: when asked for with `deviceTaintRules`); undefined where it is not. */
  deviceTaintRules?: DeviceTaintRuleApi;
  /** Every managed process started so far, by name (agents included). */
  processes(): Map<string, ManagedProcess>;
  /** One managed process by name; throws naming the ones there are. */
  process(name: string): ManagedProcess;
  /**
   * Starts a node agent on the fake libraries (stopped with the cluster); `agent.process` restarts.
   * `healthPort`: where its /healthz and /metrics listen (a free port by default).
   */
  startAgent(node: string, machine?: FakeMachine, options?: { healthPort?: number }): Promise<FakeAgent>;
  /** Runs `fn` when the cluster stops, before its processes. */
  onStop(name: string, fn: () => Promise<void>): void;
  /** Adds a process a scenario started (kubelet, containerd…): listed by processes(), stopped with the cluster. */
  manage(proc: ManagedProcess, stop?: () => Promise<void>): ManagedProcess;
  /** Stops everything; `failed` keeps and prints the logs. Idempotent. */
  stop(options?: { failed?: boolean }): Promise<void>;
}

const option = <T extends object>(value: boolean | T | undefined, fallback: boolean): T | undefined =>
  value === undefined
    ? fallback
      ? ({} as T)
      : undefined
    : value === false
      ? undefined
      : value === true
        ? ({} as T)
        : value;

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const scheduler = options.scheduler ?? false;
  const hooks = option(options.hooks, false);
  const metacontrollerOptions = option(options.metacontroller, hooks !== undefined);
  const manifests = option(options.manifests, hooks !== undefined);
  const checkerOptions = option(options.checker, false);
  if (manifests && !hooks) throw new Error('startCluster: manifests need the hook server (hooks: true)');
  if (!options.kueue && (options.frameworks ?? []).length > 0)
    throw new Error('startCluster: frameworks need the Kueue manager (kueue: true)');

  const began = Date.now();
  const { 'kube-apiserver': apiserver } = ensureComponents(['kube-apiserver']);
  const flags = controlPlaneFlags(apiserver.version, {
    ...(options.deviceTaintRules === undefined ? {} : { deviceTaintRules: options.deviceTaintRules }),
    ...(options.gates ? { gates: options.gates } : {}),
    ...(options.apiserverArgs ? { apiserverArgs: options.apiserverArgs } : {}),
  });
  const plane = await startControlPlane({
    ...(options.controllerManager === undefined ? {} : { controllerManager: options.controllerManager }),
    ...(options.logsDir ? { logsDir: options.logsDir } : {}),
    scheduler,
    extraControllers: [...(options.controllers ?? []), ...((options.dra ?? scheduler) ? DRA_CONTROLLERS : [])],
    ...(options.controllerManagerArgs ? { controllerManagerArgs: options.controllerManagerArgs } : {}),
    featureGates: flags.featureGates,
    apiserverArgs: flags.apiserverArgs,
    ...(options.serviceAccountTokens ? { serviceAccountTokens: true } : {}),
  });
  const extra: ManagedProcess[] = [];
  const agents: FakeAgent[] = [];
  const components: Partial<Record<ComponentName, Component>> = { ...planeComponents(plane) };
  const cluster: Cluster = {
    plane,
    client: plane.client,
    kubeconfig: plane.kubeconfig,
    logsDir: plane.logsDir,
    workloadControllers: {},
    components,
    versions: { kubernetes: plane.components.kubeApiserver.version },
    processes: () => {
      const all = [
        ...plane.processes,
        ...extra,
        ...(cluster.metacontroller ? [cluster.metacontroller.process] : []),
        ...(cluster.kueue ? [cluster.kueue.process] : []),
        ...Object.values(cluster.workloadControllers).map((c) => c.process),
        ...(cluster.hookServer ? [cluster.hookServer.process()] : []),
        ...agents.map((a) => a.process),
      ];
      return new Map(all.map((p) => [p.name, p]));
    },
    process: (name) => {
      const found = cluster.processes().get(name);
      if (!found)
        throw new Error(`no process "${name}" in this cluster (${[...cluster.processes().keys()].join(', ')})`);
      return found;
    },
    startAgent: async (node, machine = nvidiaMachine('NVIDIA H100 80GB HBM3', 2), agentOptions = {}) => {
      const agent = await startFakeAgent(plane, node, machine, agentOptions);
      agents.push(agent);
      return agent;
    },
    onStop: (name, fn) => plane.adopt({ name, stop: fn }),
    manage: (proc, stop) => {
      extra.push(proc);
      plane.adopt({ name: proc.name, stop: stop ?? (() => proc.stop()) });
      return proc;
    },
    stop: (stopOptions) => plane.stop(stopOptions),
  };
  // Kueue (then its workload controllers), our hook server and Metacontroller need only the API
  // server and not each other (Metacontroller rediscovers CRDs every second; our manifests, which
  // name Kueue's kinds, are applied once all three run): they start side by side.
  const phases: string[] = [`control plane ${(plane.startupMs / 1000).toFixed(1)} s`];
  const timed = async (name: string, start: () => Promise<void>): Promise<void> => {
    const at = Date.now();
    await start();
    phases.push(`${name} ${((Date.now() - at) / 1000).toFixed(1)} s`);
  };
  const startKueueAndControllers = async (): Promise<void> => {
    if (options.kueue === 'crds') {
      // The CRDs only (the chain's objects, the checker's Workloads): copied even where the binary did not build.
      const crds = ensureCrds('kueue');
      const files = readdirSync(crds.dir)
        .filter((f) => f.startsWith('kueue.x-k8s.io_') && f.endsWith('.yaml'))
        .map((f) => path.join(crds.dir, f));
      await plane.client.installCrds(files);
      cluster.versions.kueue = crds.version;
      log(`kueue CRDs ${crds.version} (${files.length} files, no manager)`);
    } else if (options.kueue) {
      const frameworks = options.frameworks ?? [];
      const controllers = frameworks.filter((f): f is WorkloadControllerName => f === 'jobset' || f === 'lws');
      const located = ensureComponents(controllers);
      cluster.kueue = await startKueue({
        plane,
        frameworkWebhooks: frameworks.map((f) => FRAMEWORK_RESOURCES[f]),
        frameworkCrds: controllers.flatMap((c) => workloadCrdFiles(located[c])),
      });
      components.kueue = cluster.kueue.component;
      cluster.versions.kueue = cluster.kueue.version;
      const started = await Promise.all(controllers.map((name) => startWorkloadController(plane, name)));
      controllers.forEach((name, i) => {
        const controller = started[i] as WorkloadController;
        cluster.workloadControllers[name] = controller;
        components[name] = controller.component;
      });
    }
  };
  const startHooks = async (): Promise<void> => {
    if (!hooks) return;
    cluster.hookServer = await startHookServer(plane.logsDir, hooks);
    plane.adopt(cluster.hookServer);
  };
  const startOurMetacontroller = async (): Promise<void> => {
    if (!metacontrollerOptions) return;
    cluster.metacontroller = await startMetacontroller({
      kubeconfig: plane.kubeconfig,
      logsDir: plane.logsDir,
      plane,
      ...metacontrollerOptions,
    });
    components.metacontroller = cluster.metacontroller.component;
    cluster.versions.metacontroller = cluster.metacontroller.component.version;
  };
  try {
    for (const [name, component] of Object.entries(ensureComponents(options.components ?? [])))
      components[name as ComponentName] = component;
    // Settled, not raced: a failed start stops the plane only once the others have adopted what they started.
    const starts = await Promise.allSettled([
      timed(options.kueue === 'crds' ? 'kueue CRDs' : 'kueue', startKueueAndControllers),
      timed('hook server', startHooks),
      timed('metacontroller', startOurMetacontroller),
    ]);
    const failure = starts.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failure) throw failure.reason;
    log(describeComponents(components));
    if (manifests && cluster.hookServer) {
      if (!cluster.metacontroller) throw new Error('startCluster: our manifests need Metacontroller');
      const hookServer = cluster.hookServer;
      await timed('manifests', async () => {
        const installed = await installOurManifests(plane.client, hookServer.url, manifests);
        log(`applied ${installed.applied.join(', ')}; server-side dry-run ${installed.dryRun.join(', ')}`);
      });
    }
    if (checkerOptions) {
      await timed('checker', async () => {
        cluster.checker = await startChecker(plane, checkerOptions);
        extra.push(cluster.checker.process);
      });
    }
    const served = await servedDeviceTaintRules(plane.client);
    if (options.deviceTaintRules && !served)
      throw new Error(
        `the control plane (Kubernetes ${cluster.versions.kubernetes}) serves no DeviceTaintRule although the scenario asked for it (expected ${flags.deviceTaintRules?.path ?? '?'})`,
      );
    if (options.deviceTaintRules === false && served)
      throw new Error(
        `the control plane serves DeviceTaintRule at ${served.path} although the scenario asked for none`,
      );
    if (served) cluster.deviceTaintRules = served;
    log(`cluster up in ${((Date.now() - began) / 1000).toFixed(1)} s (${phases.join(', ')})`);
  } catch (error) {
    await plane.stop({ failed: true });
    throw error;
  }
  return cluster;
}

/**
 * The checker, its health and metrics on a free port; ready once its port answers (`/healthz` is 503
 * until every watch is live, and some watch Kueue's CRDs, which not every scenario installs).
 */
async function startChecker(
  plane: ControlPlane,
  options: { args?: readonly string[]; env?: Readonly<Record<string, string>> },
): Promise<Checker> {
  const [port] = (await freePorts(1)) as [number];
  const url = `http://127.0.0.1:${port}`;
  const healthy = async (): Promise<boolean> => {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    return true;
  };
  const proc = startProcess(
    'admission-checker',
    process.execPath,
    [CLI, 'admission', '--kubeconfig', plane.kubeconfig, '--health-port', String(port), ...(options.args ?? [])],
    plane.logsDir,
    { env: { ...process.env, ...options.env }, ready: healthy },
  );
  plane.adopt({ name: 'admission-checker', stop: () => proc.stop() });
  await waitFor(
    async () => {
      if (!proc.running()) throw new Error(`the admission checker exited: ${proc.tail()}`);
      return healthy();
    },
    120_000,
    `the admission checker did not answer on ${url}/healthz; see ${proc.logFile}`,
    500,
  );
  return { process: proc, url };
}

/** Where the API server serves DeviceTaintRule (discovery, newest first), or undefined when it does not. */
async function servedDeviceTaintRules(client: KubeClient): Promise<DeviceTaintRuleApi | undefined> {
  for (const groupVersion of ['resource.k8s.io/v1', 'resource.k8s.io/v1beta2']) {
    const response = await client.raw('GET', `/apis/${groupVersion}`);
    if (response.status !== 200) continue;
    const list = response.body as { resources?: { name: string }[] };
    if ((list.resources ?? []).some((r) => r.name === 'devicetaintrules')) return deviceTaintRuleApi(groupVersion);
  }
  return undefined;
}
