// A throwaway Kubernetes control plane on 127.0.0.1 for the e2e suite: etcd +
// kube-apiserver (+ kube-controller-manager for garbage collection and namespace
// deletion, + kube-scheduler on request), then Metacontroller out-of-cluster.
// No kubelet runs: Pods the scheduler binds stay Pending with spec.nodeName set.
//
// Everything lives in one temp dir (removed by stop()); every component logs to one
// file in logsDir, which stop({ failed: true }) keeps and prints (E2E_KEEP_LOGS=1
// keeps it always).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { KubeClient, waitFor } from './apply.js';
import { ensureComponents, hasFlag, helpText, type Component, type ComponentName } from './components.js';
import { assertRunning, freePorts, startProcess, type ManagedProcess } from './processes.js';
import { log } from './log.js';

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

export interface ControlPlane {
  /** Kubeconfig file (token user, CA of the API server) for every client. */
  kubeconfig: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** Static bearer token of user `admin` in group `system:masters`. */
  token: string;
  /** PEM bundle that verifies the API server's serving certificate. */
  caFile: string;
  /** Temp dir holding etcd data, certs, kubeconfig (removed by stop()). */
  dir: string;
  /** One `<component>.log` per process. */
  logsDir: string;
  /** Client for the admin user. */
  client: KubeClient;
  components: {
    etcd: Component;
    kubeApiserver: Component;
    kubeControllerManager?: Component;
    kubeScheduler?: Component;
  };
  /** Milliseconds from the first spawn to a ready API server (and controller manager). */
  startupMs: number;
  processes: ManagedProcess[];
  /** Registers something stop() must stop first (Metacontroller, our server, Kueue…). */
  adopt(thing: Stoppable): void;
  /** Stops every process (last started first) and removes the temp dir; idempotent. */
  stop(options?: { failed?: boolean }): Promise<void>;
}

export interface ControlPlaneOptions {
  /**
   * Run kube-controller-manager (namespace + garbagecollector controllers); default
   * true unless E2E_CONTROLLER_MANAGER=0.
   */
  controllerManager?: boolean;
  /** Where the logs go; default a new temp dir `gpustack-e2e-logs-*`. */
  logsDir?: string;
  /** How long to wait for readiness; default 180 s (first start on 2 cores is slow). */
  timeoutMs?: number;
  /** Extra kube-apiserver flags (`--flag=value`). */
  apiserverArgs?: readonly string[];
  /**
   * Controllers kube-controller-manager runs besides namespace and garbage collection, e.g.
   * DRA_CONTROLLERS (ignored without the controller manager).
   */
  extraControllers?: readonly string[];
  /** Extra kube-controller-manager flags (`--flag=value`), e.g. the node monitor's periods. */
  controllerManagerArgs?: readonly string[];
  /** Run kube-scheduler (default false): Pods with no nodeName get bound, DRA claims allocated. */
  scheduler?: boolean;
  /**
   * `--feature-gates` for kube-apiserver, kube-controller-manager and kube-scheduler alike (a gate
   * on one and not the others splits what the API accepts from what gets allocated). Default none:
   * what DRA needs is on by default in 1.36 (see DRA_CONTROLLERS).
   */
  featureGates?: Readonly<Record<string, boolean>>;
  /**
   * Keep the ServiceAccount admission plugin (default false: it is disabled, so that Pods need no
   * ServiceAccount objects): Pods then get their token volume, as in-cluster clients need. Run the
   * controller manager's serviceaccount and root-ca-cert-publisher controllers with it.
   */
  serviceAccountTokens?: boolean;
}

/**
 * What DRA needs from kube-controller-manager (k8s.io/kubernetes v1.36.3
 * cmd/kube-controller-manager/names): the resource claim controller creates a Pod's claims from
 * its ResourceClaimTemplates, drops a deleted Pod from `reservedFor` and deletes the claims it
 * generated. The gates DRA part 1 relies on are all on by default in 1.36
 * (pkg/features/kube_features.go): DynamicResourceAllocation (GA, locked), DRAConsumableCapacity,
 * DRAExtendedResource, DRAPartitionableDevices and DRADeviceTaints (beta, on), DRAPrioritizedList
 * (GA). So no --feature-gates are set.
 */
export const DRA_CONTROLLERS = ['resourceclaim-controller'] as const;

async function etcdHealthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    const body = (await response.json()) as { health?: string };
    return response.ok && body.health === 'true';
  } catch {
    return false;
  }
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const wantControllerManager = options.controllerManager ?? process.env.E2E_CONTROLLER_MANAGER !== '0';
  const wantScheduler = options.scheduler ?? false;
  const timeoutMs = options.timeoutMs ?? 180_000;
  const built: Partial<Record<ComponentName, Component>> = ensureComponents([
    'etcd',
    'kube-apiserver',
    ...(wantControllerManager ? (['kube-controller-manager'] as const) : []),
    ...(wantScheduler ? (['kube-scheduler'] as const) : []),
  ]);
  const components: ControlPlane['components'] = {
    etcd: built.etcd as Component,
    kubeApiserver: built['kube-apiserver'] as Component,
    ...(built['kube-controller-manager'] ? { kubeControllerManager: built['kube-controller-manager'] } : {}),
    ...(built['kube-scheduler'] ? { kubeScheduler: built['kube-scheduler'] } : {}),
  };
  const gates = Object.entries(options.featureGates ?? {});
  const featureGateArgs = gates.length > 0 ? [`--feature-gates=${gates.map(([k, v]) => `${k}=${v}`).join(',')}`] : [];

  const dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-'));
  const ownLogs = options.logsDir === undefined;
  const logsDir = options.logsDir ?? mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-logs-'));
  mkdirSync(logsDir, { recursive: true });
  const processes: ManagedProcess[] = [];
  const adopted: Stoppable[] = [];
  let stopped = false;
  let client: KubeClient | undefined;

  const removeDir = (): void => rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  process.on('exit', removeDir);

  const stop = async (stopOptions: { failed?: boolean } = {}): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const began = Date.now();
    // Where a file's teardown goes (the e2e lanes' time is ~half set-up and teardown): the slow stops.
    const slow: string[] = [];
    const timed = async (name: string, stopOne: () => Promise<void>): Promise<void> => {
      const at = Date.now();
      await stopOne();
      const ms = Date.now() - at;
      if (ms >= 1000) slow.push(`${name} ${(ms / 1000).toFixed(1)} s`);
    };
    for (const thing of adopted.reverse()) {
      try {
        await timed(thing.name, () => thing.stop());
      } catch (error) {
        log(`stopping ${thing.name}: ${String(error)}`);
      }
    }
    for (const proc of [...processes].reverse()) await timed(proc.name, () => proc.stop());
    log(`stopped in ${((Date.now() - began) / 1000).toFixed(1)} s${slow.length > 0 ? ` (${slow.join(', ')})` : ''}`);
    client?.close();
    removeDir();
    process.off('exit', removeDir);
    if (stopOptions.failed || process.env.E2E_KEEP_LOGS === '1') {
      log(`logs of every component: ${logsDir}`);
    } else if (ownLogs) {
      rmSync(logsDir, { recursive: true, force: true });
    }
  };

  const started = Date.now();
  try {
    const [etcdClient, etcdPeer, apiserverPort] = (await freePorts(3)) as [number, number, number];

    // etcd: single member, loopback only, no fsync (test data).
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    const etcd = startProcess(
      'etcd',
      components.etcd.binary,
      [
        `--name=default`,
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=default=${peerUrl}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      logsDir,
      { ready: () => etcdHealthy(etcdUrl) },
    );
    processes.push(etcd);
    await waitFor(
      async () => {
        assertRunning(etcd);
        return etcdHealthy(etcdUrl);
      },
      timeoutMs,
      `etcd did not become healthy at ${etcdUrl}; see ${etcd.logFile}`,
    );

    // kube-apiserver: static token of a system:masters user, self-signed serving cert
    // generated into --cert-dir, a fresh service-account signing key.
    const token = randomBytes(24).toString('hex');
    const certDir = path.join(dir, 'certs');
    mkdirSync(certDir);
    const tokensFile = path.join(dir, 'tokens.csv');
    writeFileSync(tokensFile, `${token},admin,admin,"system:masters"\n`, { mode: 0o600 });
    const saKey = path.join(dir, 'sa.key');
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    writeFileSync(saKey, privateKey, { mode: 0o600 });

    const server = `https://127.0.0.1:${apiserverPort}`;
    const apiserver = startProcess(
      'kube-apiserver',
      components.kubeApiserver.binary,
      [
        `--etcd-servers=${etcdUrl}`,
        `--cert-dir=${certDir}`,
        `--secure-port=${apiserverPort}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        // The `kubernetes` Service endpoints would point at a loopback IP, which validation rejects.
        '--endpoint-reconciler-type=none',
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${saKey}`,
        `--service-account-signing-key-file=${saKey}`,
        `--token-auth-file=${tokensFile}`,
        '--authorization-mode=RBAC',
        '--service-cluster-ip-range=10.0.0.0/24',
        ...(options.serviceAccountTokens ? [] : ['--disable-admission-plugins=ServiceAccount']),
        '--allow-privileged=true',
        '--profiling=false',
        ...featureGateArgs,
        ...(options.apiserverArgs ?? []),
      ],
      logsDir,
      // A restart (same flags, same etcd) is ready once /readyz answers; the cert in --cert-dir is reused.
      { ready: () => componentReady(apiserverPort) },
    );
    processes.push(apiserver);

    // Ready = /readyz 200 (checked without trusting the cert yet: it is generated at start).
    const insecure = new KubeClient({ server, token });
    try {
      await waitFor(
        async () => {
          assertRunning(apiserver);
          const response = await insecure.raw('GET', '/readyz');
          return response.status === 200;
        },
        timeoutMs,
        `kube-apiserver did not become ready at ${server}; see ${apiserver.logFile}`,
        500,
      );
    } finally {
      insecure.close();
    }
    // apiserver.crt = serving cert followed by its self-signed CA: a valid trust bundle.
    const caFile = path.join(certDir, 'apiserver.crt');
    if (!existsSync(caFile)) throw new Error(`kube-apiserver wrote no ${caFile}`);

    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: e2e',
        '  cluster:',
        `    server: ${server}`,
        `    certificate-authority: ${caFile}`,
        'users:',
        '- name: admin',
        '  user:',
        `    token: ${token}`,
        'contexts:',
        '- name: e2e',
        '  context: { cluster: e2e, user: admin }',
        'current-context: e2e',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    client = KubeClient.fromKubeconfig(kubeconfig);
    const version = await client.request<{ gitVersion: string }>('GET', '/version');
    log(`kube-apiserver ${version.gitVersion} ready at ${server} (etcd ${components.etcd.version})`);

    if (components.kubeControllerManager) {
      const kcm = startProcess(
        'kube-controller-manager',
        components.kubeControllerManager.binary,
        [
          `--kubeconfig=${kubeconfig}`,
          `--service-account-private-key-file=${saKey}`,
          `--root-ca-file=${caFile}`,
          `--controllers=${['namespace', 'garbagecollector', ...(options.extraControllers ?? [])].join(',')}`,
          '--leader-elect=false',
          '--secure-port=0',
          '--concurrent-gc-syncs=5',
          ...featureGateArgs,
          ...(options.controllerManagerArgs ?? []),
        ],
        logsDir,
      );
      processes.push(kcm);
    }
    // The scheduler starts while the controller manager, which has no probe without a serving
    // port, shows it survives its start-up checks.
    const survived = new Promise((resolve) => setTimeout(resolve, components.kubeControllerManager ? 1500 : 0));
    if (components.kubeScheduler) {
      processes.push(
        await startScheduler(components.kubeScheduler, { dir, logsDir, kubeconfig, featureGateArgs, timeoutMs }),
      );
    }
    await survived;
    const kcm = processes.find((p) => p.name === 'kube-controller-manager');
    if (kcm) assertRunning(kcm);

    const startupMs = Date.now() - started;
    log(`control plane up in ${(startupMs / 1000).toFixed(1)} s; logs: ${logsDir}`);
    return {
      kubeconfig,
      server,
      token,
      caFile,
      dir,
      logsDir,
      client,
      components,
      startupMs,
      processes,
      adopt: (thing) => adopted.push(thing),
      stop,
    };
  } catch (error) {
    await stop({ failed: true });
    throw error;
  }
}

/** GET https://127.0.0.1:<port>/readyz of a component serving a self-signed certificate, anonymously. */
function componentReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = https.get(
      { host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false, timeout: 2000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/**
 * kube-scheduler from a KubeSchedulerConfiguration (its --kubeconfig and --leader-elect flags are
 * deprecated): the default profile, no leader election, HTTPS only for the /readyz probe on a free
 * loopback port (anonymous: /readyz is in the default always-allow paths). `-v=2` logs every bind
 * ("Successfully bound pod to node") and every unschedulable verdict.
 */
async function startScheduler(
  component: Component,
  context: { dir: string; logsDir: string; kubeconfig: string; featureGateArgs: string[]; timeoutMs: number },
): Promise<ManagedProcess> {
  const [port] = (await freePorts(1)) as [number];
  const config = path.join(context.dir, 'kube-scheduler.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: kubescheduler.config.k8s.io/v1',
      'kind: KubeSchedulerConfiguration',
      'clientConnection:',
      `  kubeconfig: ${context.kubeconfig}`,
      'leaderElection:',
      '  leaderElect: false',
      '',
    ].join('\n'),
  );
  const scheduler = startProcess(
    'kube-scheduler',
    component.binary,
    [
      `--config=${config}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      '--authentication-skip-lookup',
      '-v=2',
      ...context.featureGateArgs,
    ],
    context.logsDir,
    { ready: () => componentReady(port) },
  );
  await waitFor(
    async () => {
      assertRunning(scheduler);
      return componentReady(port);
    },
    context.timeoutMs,
    `kube-scheduler did not become ready on https://127.0.0.1:${port}/readyz; see ${scheduler.logFile}`,
    500,
  );
  log(`kube-scheduler ${component.version} ready (pid ${scheduler.pid})`);
  return scheduler;
}

export interface Metacontroller extends Stoppable {
  process: ManagedProcess;
  component: Component;
  args: string[];
}

export interface MetacontrollerOptions {
  kubeconfig: string;
  logsDir: string;
  /** When given, the control plane's stop() stops Metacontroller first. */
  plane?: ControlPlane;
  /** Default `1s` (Metacontroller does not see a new CRD until its next discovery refresh). */
  discoveryInterval?: string;
  /** zap log level (4: API interaction, 5+: hooks, 6: webhook bodies); default 4. */
  logLevel?: number;
  /** Extra flags, e.g. `--apply-strategy=server-side-apply`. */
  args?: readonly string[];
  /** Extra environment (e.g. a client credential for HTTPS hooks), over this process's. */
  env?: Readonly<Record<string, string>>;
  timeoutMs?: number;
}

/**
 * Installs Metacontroller's CRDs (from the copy the build cached) and runs the binary
 * out-of-cluster against the kubeconfig: short discovery interval, no leader
 * election, metrics off, health probes on a free loopback port. Flags are passed only
 * if the binary's --help lists them (they changed between releases).
 */
export async function startMetacontroller(options: MetacontrollerOptions): Promise<Metacontroller> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const { metacontroller: component } = ensureComponents(['metacontroller']);
  const crdFile = component.crds && path.join(component.crds, 'metacontroller-crds-v1.yaml');
  if (!crdFile || !existsSync(crdFile))
    throw new Error(`no metacontroller-crds-v1.yaml in ${component.crds ?? '(no CRD folder)'}`);
  const client = KubeClient.fromKubeconfig(options.kubeconfig);
  try {
    await client.installCrds([crdFile]);
  } finally {
    client.close();
  }

  const help = helpText(component.binary);
  const [probePort, debugPort] = (await freePorts(2)) as [number, number];
  const args: string[] = [];
  const flag = (name: string, value: string): void => {
    if (hasFlag(help, name)) args.push(`--${name}=${value}`);
  };
  flag('kubeconfig', options.kubeconfig);
  flag('discovery-interval', options.discoveryInterval ?? '1s');
  flag('leader-election', 'false');
  flag('metrics-address', '0');
  flag('health-probe-bind-address', `127.0.0.1:${probePort}`);
  flag('debug-addr', `127.0.0.1:${debugPort}`); // v1 line: metrics server address
  flag('client-go-qps', '100');
  flag('client-go-burst', '200');
  if (hasFlag(help, 'zap-log-level')) args.push(`--zap-log-level=${options.logLevel ?? 4}`);
  else if (hasFlag(help, 'v')) args.push(`-v=${options.logLevel ?? 4}`);
  args.push(...(options.args ?? []));

  // KUBECONFIG too: the v1 line clobbers --kubeconfig with its deprecated flag's value.
  const probe = hasFlag(help, 'health-probe-bind-address')
    ? `http://127.0.0.1:${probePort}/readyz`
    : hasFlag(help, 'debug-addr')
      ? `http://127.0.0.1:${debugPort}/metrics`
      : undefined;
  const ready = async (): Promise<boolean> => {
    if (!probe) return true;
    const response = await fetch(probe, { signal: AbortSignal.timeout(2000) });
    return response.ok;
  };
  const proc = startProcess('metacontroller', component.binary, args, options.logsDir, {
    env: { ...process.env, ...options.env, KUBECONFIG: options.kubeconfig },
    ready,
  });
  const handle: Metacontroller = {
    name: 'metacontroller',
    process: proc,
    component,
    args,
    stop: () => proc.stop(),
  };
  options.plane?.adopt(handle);
  try {
    await waitFor(
      async () => {
        assertRunning(proc);
        return ready();
      },
      timeoutMs,
      `metacontroller did not become ready (${probe ?? 'no probe'}); see ${proc.logFile}`,
    );
  } catch (error) {
    await proc.stop();
    throw error;
  }
  log(`metacontroller ${component.version} running (pid ${proc.pid}): ${args.join(' ')}`);
  return handle;
}

/** The plane's components keyed by name, for describeComponents. */
export function planeComponents(plane: ControlPlane): Partial<Record<ComponentName, Component>> {
  const { etcd, kubeApiserver, kubeControllerManager, kubeScheduler } = plane.components;
  return {
    etcd,
    'kube-apiserver': kubeApiserver,
    ...(kubeControllerManager ? { 'kube-controller-manager': kubeControllerManager } : {}),
    ...(kubeScheduler ? { 'kube-scheduler': kubeScheduler } : {}),
  };
}

/** Reads a component log (for assertions on what a component reported). */
export function readLog(plane: { logsDir: string }, name: string): string {
  const file = path.join(plane.logsDir, `${name}.log`);
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
