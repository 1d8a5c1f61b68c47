// The real Kueue manager (sigs.k8s.io/kueue/cmd/kueue, built and cached by
// scripts/e2e/build-components.sh) run out-of-cluster against the e2e control plane, with its
// kueue.x-k8s.io admission webhooks registered so the API server calls it.
//
// Out-of-cluster Kueue needs (read from the v0.17.0 sources, cmd/kueue/main.go and
// apis/config/v1beta2):
// - internal cert management off: the cert rotator would wait for a kubelet to mount its Secret;
// - a serving certificate in webhook.certDir, and one at the hard-coded
//   /etc/kueue/metrics/certs/tls.{crt,key} the metrics server loads when internal cert
//   management is off (a missing file is fatal): one self-signed pair (openssl, SAN
//   IP:127.0.0.1, DNS:localhost) serves both;
// - VisibilityOnDemand off (its API server reads certs from a hard-coded /visibility), given in
//   the configuration's featureGates only (gates on the command line as well are fatal);
// - leader election off; health, metrics and webhook servers on free 127.0.0.1 ports.
// The configuration is decoded strictly (serializer.EnableStrict): an unknown field is fatal,
// and so is an unknown feature gate. The configuration is what `gpustack-operator kueue-config`
// prints for the running version, merged into the out-of-cluster settings above.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { stringify } from 'yaml';

import { parseQuantity } from '../../src/k8s/index.js';
import { KubeError, parseManifests, sleep, waitFor, type KubeClient, type KubeObject } from './apply.js';
import { ensureComponents, type Component } from './components.js';
import type { ControlPlane, Stoppable } from './control-plane.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';
import { CLI } from './hook-server.js';
import { log } from './log.js';

export const KUEUE_API = 'kueue.x-k8s.io/v1beta2';
export const KUEUE_NAMESPACE = 'kueue-system';
/** Where Kueue's metrics server loads its certificate from when internal cert management is off. */
export const KUEUE_METRICS_CERT_DIR = '/etc/kueue/metrics/certs';
const ADMISSION_REGISTRATION = 'admissionregistration.k8s.io/v1';

export interface KueueOptions {
  plane: ControlPlane;
  /** Apply Kueue's CRDs from the cached module copy first (default true; idempotent). */
  installCrds?: boolean;
  /** Register the kueue.x-k8s.io webhooks with the API server and prove them live (default true). */
  webhooks?: boolean;
  /**
   * Also register Kueue's webhooks of these job frameworks' objects (e.g. JobSets, Pods, Deployments:
   * `{ group: '', resource: 'pods' }`), which suspend or gate them on create; with the webhooks only.
   */
  frameworkWebhooks?: readonly FrameworkResource[];
  /** Apply these CRDs (a framework's) before Kueue starts, so it sets that integration up at once. */
  frameworkCrds?: readonly string[];
  /** zap log level (default 2: reconcile decisions without every request). */
  logLevel?: number;
  /** Readiness timeout; default 120 s. */
  timeoutMs?: number;
}

export interface Kueue extends Stoppable {
  component: Component;
  /** The version the running binary logged at start (`Initializing … gitVersion`). */
  version: string;
  process: ManagedProcess;
  /** The configuration file passed with --config, and its content. */
  configFile: string;
  config: Record<string, unknown>;
  /** What was taken out of our configuration because this Kueue does not know it. */
  dropped: string[];
  ports: { health: number; metrics: number; webhook: number };
  /** PEM of the self-signed serving certificate (also the webhooks' caBundle). */
  certPem: string;
  /** `<Kind>/<name>` of the webhook configurations registered (empty when webhooks: false). */
  webhookConfigurations: string[];
  /** Names of the webhooks registered, e.g. `vclusterqueue.kb.io`. */
  webhookNames: string[];
}

/**
 * A resource list Kueue wrote (a Workload's resourceUsage, a ClusterQueue's usage), as numbers:
 * Kueue formats quantities its own way, and differently by version (3,200,000 is `3200k` from 0.17
 * and `3125Ki` from 0.19), so compare what they are, not how they are written.
 */
export function quantities(list: Record<string, string> | undefined): Record<string, number | undefined> {
  return Object.fromEntries(Object.entries(list ?? {}).map(([name, quantity]) => [name, parseQuantity(quantity)]));
}

/**
 * The configuration Kueue runs with: the out-of-cluster settings of this suite, with ours merged in
 * by the product itself — `gpustack-operator kueue-config --merge FILE --kueue-version V`, the
 * command docs/install.md#kueue-configuration runs — so Kueue starting on it proves the command's output.
 * `version` 'unknown' (a prebuilt binary) takes the command's default.
 */
export function kueueConfiguration(
  version: string,
  ports: { health: number; metrics: number; webhook: number },
  certDir: string,
): { config: Record<string, unknown>; dropped: string[] } {
  const base = {
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    namespace: KUEUE_NAMESPACE,
    internalCertManagement: { enable: false },
    leaderElection: { leaderElect: false },
    health: { healthProbeBindAddress: `127.0.0.1:${ports.health}` },
    metrics: { bindAddress: `127.0.0.1:${ports.metrics}` },
    webhook: { host: '127.0.0.1', port: ports.webhook, certDir },
    featureGates: { VisibilityOnDemand: false },
    integrations: { frameworks: ['batch/job'] },
  };
  const baseFile = path.join(certDir, 'kueue-base-config.yaml');
  writeFileSync(baseFile, stringify(base));
  const args = [CLI, 'kueue-config', '--merge', baseFile, '-o', 'json'];
  if (version !== 'unknown') args.push('--kueue-version', version);
  const run = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`gpustack-operator ${args.slice(1).join(' ')} failed: ${run.stderr}`);
  const config = JSON.parse(run.stdout) as Record<string, unknown>;
  const resources = config['resources'] as Record<string, unknown>;
  const dropped =
    'quotaCheckStrategy' in resources ? [] : ['resources.quotaCheckStrategy', 'featureGates.QuotaCheckStrategy'];
  return { config, dropped };
}

/** An object a job framework's webhooks intercept: API group (`''` for the core group) and resource. */
export interface FrameworkResource {
  group: string;
  resource: string;
}

/** A self-signed certificate for 127.0.0.1/localhost: `tls.crt` and `tls.key` in `dir` (also JobSet's and LWS's). */
export function selfSignedCert(dir: string, commonName = 'kueue-e2e'): string {
  const result = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-sha256',
      '-days',
      '2',
      '-keyout',
      path.join(dir, 'tls.key'),
      '-out',
      path.join(dir, 'tls.crt'),
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { encoding: 'utf8' },
  );
  if (result.error) throw new Error(`openssl is needed for Kueue's serving certificate: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`openssl req failed (${result.status}): ${result.stderr}`);
  return readFileSync(path.join(dir, 'tls.crt'), 'utf8');
}

// Every Kueue on this host shares that folder (CI runs its two lanes side by side): its users are
// counted under a lock (a folder made atomically), and the last one to stop removes what the first
// one created. Any valid pair serves: nothing verifies Kueue's metrics certificate.
async function withMetricsLock(target: string, body: () => void): Promise<void> {
  const lock = path.join(target, '.e2e-lock');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const created = mkdirSync(target, { recursive: true });
    if (created !== undefined) writeFileSync(path.join(target, '.e2e-created'), created);
    try {
      mkdirSync(lock);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // EEXIST: another Kueue holds it; ENOENT: the last user removed the folder meanwhile.
      if ((code === 'EEXIST' || code === 'ENOENT') && Date.now() < deadline) {
        await sleep(50);
        continue;
      }
      if (code === 'EEXIST')
        throw new Error(`${lock} held for 30 s: remove it if no e2e run is left`, { cause: error });
      throw error;
    }
    try {
      body();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
    return;
  }
}

/**
 * Puts the pair where Kueue's metrics server insists on finding it (`target`: only tests name
 * another); resolves to what gives it back.
 */
export async function placeMetricsCert(certDir: string, target = KUEUE_METRICS_CERT_DIR): Promise<() => Promise<void>> {
  const users = path.join(target, '.e2e-users');
  const createdFile = path.join(target, '.e2e-created');
  const user = path.join(users, `${process.pid}-${path.basename(certDir)}-${Date.now()}`);
  try {
    await withMetricsLock(target, () => {
      mkdirSync(users, { recursive: true });
      writeFileSync(user, '');
      // Renamed into place, so a Kueue starting beside this one never reads half a file.
      for (const file of ['tls.crt', 'tls.key']) {
        const temporary = path.join(target, `.${file}.${process.pid}`);
        writeFileSync(temporary, readFileSync(path.join(certDir, file)), { mode: 0o600 });
        renameSync(temporary, path.join(target, file));
      }
    });
  } catch (error) {
    const uid = process.getuid?.();
    throw new Error(
      `Kueue (internal cert management off) loads its metrics certificate from the hard-coded ${target}/tls.{crt,key} and exits without it; ` +
        `that folder is not writable here (uid ${uid ?? '?'}${uid === 0 ? '' : ', not root'}): ${(error as Error).message}. ` +
        `Run the e2e suite as root, or create the folder writable for this user.`,
      { cause: error },
    );
  }
  return () =>
    withMetricsLock(target, () => {
      rmSync(user, { force: true });
      if (readdirSync(users).length > 0) return;
      const created = existsSync(createdFile) ? readFileSync(createdFile, 'utf8') : '';
      // A folder made before the run (writable for a non-root user) keeps its pair, as before.
      for (const leftover of created === '' ? [users, createdFile] : [created])
        rmSync(leftover, { recursive: true, force: true });
    });
}

export interface WebhookEntry {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  rules?: { apiGroups?: string[]; resources?: string[] }[];
  [key: string]: unknown;
}

/**
 * The namespaceSelector Kueue's release puts on its framework webhooks (kube-system and kueue-system
 * left alone): the first one the kustomization's inline patches give (0.17 patches every webhook by
 * name, 0.19 patches `vpod.kb.io` and copies its selector to the others), or undefined.
 */
export function kueueReleaseNamespaceSelector(kustomizationFile: string): unknown {
  if (!existsSync(kustomizationFile)) return undefined;
  const kustomization = parseManifests(readFileSync(kustomizationFile, 'utf8'))[0] as
    (KubeObject & { patches?: { patch?: string }[] }) | undefined;
  for (const patch of kustomization?.patches ?? []) {
    if (!patch.patch) continue;
    for (const object of parseManifests(patch.patch))
      for (const webhook of (object['webhooks'] ?? []) as { namespaceSelector?: unknown }[])
        if (webhook.namespaceSelector) return webhook.namespaceSelector;
  }
  return undefined;
}

const targets = (webhook: WebhookEntry, wanted: readonly FrameworkResource[]): boolean =>
  (webhook.rules ?? []).length > 0 &&
  (webhook.rules ?? []).every((r) =>
    (r.apiGroups ?? []).every((g) =>
      (r.resources ?? []).every((res) => wanted.some((w) => w.group === g && w.resource === res)),
    ),
  );

/**
 * Kueue's Mutating/ValidatingWebhookConfiguration (config/components/webhook/manifests.yaml of the
 * module) reduced to the webhooks whose rules target only kueue.x-k8s.io (the others intercept
 * Jobs, Pods, Deployments…), each pointed at `https://127.0.0.1:<port><path>` with the certificate
 * as caBundle. Named `kueue-…` as the release kustomization names them.
 */
export function kueueWebhookConfigurations(
  manifestsFile: string,
  port: number,
  certPem: string,
  frameworks: readonly FrameworkResource[] = [],
): KubeObject[] {
  const caBundle = Buffer.from(certPem).toString('base64');
  const namespaceSelector =
    frameworks.length > 0
      ? kueueReleaseNamespaceSelector(path.join(path.dirname(manifestsFile), 'kustomization.yaml'))
      : undefined;
  const out: KubeObject[] = [];
  for (const object of parseManifests(readFileSync(manifestsFile, 'utf8'))) {
    if (object.kind !== 'MutatingWebhookConfiguration' && object.kind !== 'ValidatingWebhookConfiguration') continue;
    const webhooks = ((object['webhooks'] ?? []) as WebhookEntry[])
      .flatMap((w) => {
        const own =
          (w.rules ?? []).length > 0 &&
          (w.rules ?? []).every(
            (r) => (r.apiGroups ?? []).length > 0 && (r.apiGroups ?? []).every((g) => g === 'kueue.x-k8s.io'),
          );
        if (own) return [w];
        if (frameworks.length === 0 || !targets(w, frameworks)) return [];
        return [namespaceSelector ? { ...w, namespaceSelector } : w];
      })
      .map((w) => {
        const route = w.clientConfig.service?.path;
        if (!route) throw new Error(`${manifestsFile}: webhook ${w.name} has no clientConfig.service.path`);
        return { ...w, clientConfig: { url: `https://127.0.0.1:${port}${route}`, caBundle }, timeoutSeconds: 10 };
      });
    if (webhooks.length === 0) continue;
    out.push({
      apiVersion: ADMISSION_REGISTRATION,
      kind: object.kind,
      metadata: { name: `kueue-${object.metadata.name}` },
      webhooks,
    });
  }
  return out;
}

/**
 * Proves the registered webhooks answer: a valid ClusterQueue passes server-side dry-run (the
 * API server reached Kueue over TLS with our caBundle; failurePolicy is Fail), and one whose
 * resources are not in coveredResources order, with a negative quota — which the CRD schema
 * admits — is denied by `vclusterqueue.kb.io`. Returns Kueue's denial message.
 */
export async function proveKueueWebhooks(client: KubeClient, timeoutMs = 30_000): Promise<string> {
  const queue = (resources: { name: string; nominalQuota: string }[]): KubeObject => ({
    apiVersion: KUEUE_API,
    kind: 'ClusterQueue',
    metadata: { name: 'e2e-webhook-probe' },
    spec: {
      namespaceSelector: {},
      resourceGroups: [{ coveredResources: ['cpu', 'memory'], flavors: [{ name: 'e2e-webhook-probe', resources }] }],
    },
  });
  await client.applyObject(
    queue([
      { name: 'cpu', nominalQuota: '1' },
      { name: 'memory', nominalQuota: '1Gi' },
    ]),
    { dryRun: true },
  );
  let denial = '';
  await waitFor(
    async () => {
      try {
        await client.applyObject(
          queue([
            { name: 'memory', nominalQuota: '1Gi' },
            { name: 'cpu', nominalQuota: '-1' },
          ]),
          { dryRun: true },
        );
        return false; // the API server has not picked up the configuration yet
      } catch (error) {
        if (!(error instanceof KubeError) || !error.message.includes('vclusterqueue.kb.io')) throw error;
        denial = error.message;
        return true;
      }
    },
    timeoutMs,
    "Kueue's ClusterQueue webhook (vclusterqueue.kb.io) never denied an invalid ClusterQueue",
  );
  for (const expected of ['must match the name in coveredResources', 'must be greater than or equal to 0']) {
    if (!denial.includes(expected))
      throw new Error(`Kueue's ClusterQueue webhook denied the probe without "${expected}": ${denial}`);
  }
  return denial;
}

class KueueExit extends Error {
  constructor(
    message: string,
    readonly tail: string,
  ) {
    super(message);
    this.name = 'KueueExit';
  }
}

/** The gitVersion Kueue logs at start (`"msg":"Initializing",…,"gitVersion":"v0.17.0"`). */
function loggedVersion(logFile: string): string | undefined {
  if (!existsSync(logFile)) return undefined;
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('Initializing')) continue;
    const match = /"gitVersion"\s*:\s*"([^"]+)"/.exec(line);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * Starts the Kueue manager against the control plane and (by default) registers its
 * kueue.x-k8s.io webhooks. The plane's stop() stops it (webhook configurations removed first,
 * so nothing calls a server that is gone). Fails with the tail of Kueue's log if it exits.
 */
export async function startKueue(options: KueueOptions): Promise<Kueue> {
  const { plane } = options;
  const client = plane.client;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const { kueue: component } = ensureComponents(['kueue']);
  if (options.installCrds ?? true) {
    if (!component.crds) throw new Error('the Kueue component has no CRD folder');
    const files = readdirSync(component.crds)
      .filter((f) => f.startsWith('kueue.x-k8s.io_') && f.endsWith('.yaml'))
      .map((f) => path.join(component.crds as string, f));
    await client.installCrds(files);
  }
  if (options.frameworkCrds && options.frameworkCrds.length > 0) await client.installCrds(options.frameworkCrds);
  await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUEUE_NAMESPACE } });

  const dir = mkdtempSync(path.join(plane.dir, 'kueue-'));
  const certDir = path.join(dir, 'certs');
  mkdirSync(certDir);
  const certPem = selfSignedCert(certDir);
  const releaseMetricsCert = await placeMetricsCert(certDir);

  const [health, metrics, webhook] = (await freePorts(3)) as [number, number, number];
  const ports = { health, metrics, webhook };
  const configFile = path.join(dir, 'controller_manager_config.yaml');
  const registered: KubeObject[] = [];
  let proc: ManagedProcess | undefined;
  let stopped = false;
  const handle: Kueue = {
    name: 'kueue',
    component,
    version: component.version,
    get process() {
      return proc as ManagedProcess;
    },
    configFile,
    config: {},
    dropped: [],
    ports,
    certPem,
    webhookConfigurations: [],
    webhookNames: [],
    stop: async () => {
      if (stopped) return;
      stopped = true;
      for (const object of registered.reverse()) {
        try {
          await client.delete(object.apiVersion, object.kind, object.metadata.name);
        } catch (error) {
          log(`removing ${object.kind} ${object.metadata.name}: ${String(error)}`);
        }
      }
      await proc?.stop();
      await releaseMetricsCert();
    },
  };
  plane.adopt(handle);

  /** Writes the configuration, starts Kueue and waits for /readyz; rejects with its log tail if it exits. */
  // A prebuilt binary whose build info does not say its version (components.ts): decide by what it
  // refuses, below.
  const knownVersion = component.version === 'prebuilt' ? 'unknown' : component.version;
  const launch = async (attempt: number, dropQuotaCheckStrategy: boolean): Promise<void> => {
    const { config, dropped } = kueueConfiguration(dropQuotaCheckStrategy ? '0.17' : knownVersion, ports, certDir);
    if (dropped.length > 0)
      log(
        `Kueue ${component.version} does not know ${dropped.join(', ')}: kueue-config leaves them out for this version`,
      );
    handle.config = config;
    handle.dropped = dropped;
    writeFileSync(configFile, stringify(config));
    const args = ['--config', configFile, '--kubeconfig', plane.kubeconfig, `--zap-log-level=${options.logLevel ?? 2}`];
    const readyz = async (): Promise<boolean> => {
      const response = await fetch(`http://127.0.0.1:${health}/readyz`, { signal: AbortSignal.timeout(2000) });
      return response.ok;
    };
    // restart() (same configuration, ports and certificates) waits for the same /readyz.
    const current = startProcess(attempt === 1 ? 'kueue' : `kueue-${attempt}`, component.binary, args, plane.logsDir, {
      ready: readyz,
      readyTimeoutMs: timeoutMs,
    });
    proc = current;
    const exitedEarly = current.exited.then(({ code, signal }) => {
      throw new KueueExit(
        `Kueue exited during start-up (code ${code}, signal ${signal}); last lines of ${current.logFile}:\n${current.tail(60)}`,
        current.tail(60),
      );
    });
    const ready = waitFor(
      readyz,
      timeoutMs,
      `Kueue did not become ready on 127.0.0.1:${health}/readyz; see ${current.logFile}`,
      500,
    );
    try {
      await Promise.race([ready, exitedEarly]);
    } finally {
      exitedEarly.catch(() => undefined); // exits after start-up are the scenarios' business
    }
  };
  try {
    try {
      await launch(1, false);
    } catch (error) {
      // A Kueue whose version we could not tell (a prebuilt binary) and that predates
      // quotaCheckStrategy refuses it at load time (strict decoding / unknown gate): once more without.
      if (
        !(error instanceof KueueExit) ||
        !/unknown field \\?"resources\.quotaCheckStrategy|unrecognized feature gate: QuotaCheckStrategy/.test(
          error.tail,
        ) ||
        handle.dropped.length > 0
      )
        throw error;
      log('Kueue refused resources.quotaCheckStrategy / the QuotaCheckStrategy gate: starting it again without them');
      await launch(2, true);
    }
  } catch (error) {
    await handle.stop();
    if (error instanceof Error && proc && !error.message.includes(proc.logFile))
      error.message += `\nlast lines of ${proc.logFile}:\n${proc.tail(60)}`;
    throw error;
  }
  const running = proc as ManagedProcess;
  handle.version = loggedVersion(running.logFile) ?? component.version;

  if (options.webhooks ?? true) {
    const manifests = path.join(path.dirname(component.crds ?? ''), 'webhook', 'manifests.yaml');
    if (!component.crds || !existsSync(manifests))
      throw new Error(
        `no Kueue webhook manifests at ${manifests} (scripts/e2e/build-components.sh copies config/components/webhook)`,
      );
    for (const object of kueueWebhookConfigurations(manifests, webhook, certPem, options.frameworkWebhooks)) {
      await client.applyObject(object);
      registered.push(object);
      handle.webhookConfigurations.push(`${object.kind}/${object.metadata.name}`);
      handle.webhookNames.push(...(object['webhooks'] as WebhookEntry[]).map((w) => w.name));
    }
    const denial = await proveKueueWebhooks(client);
    log(
      `Kueue webhooks live (${handle.webhookNames.join(', ')}); probe denied: ${denial.replace(/^.*denied the request: /, '')}`,
    );
  }
  log(
    `Kueue ${handle.version} manager running (${(options.webhooks ?? true) ? 'webhooks registered' : 'no webhooks'}); ` +
      `pid ${running.pid}, ${component.module}, health 127.0.0.1:${health}, metrics :${metrics}, webhook :${webhook}, config ${configFile}`,
  );
  return handle;
}

/** Waits a little and checks Kueue is still up (for assertions after a scenario). */
export async function assertKueueRunning(kueue: Kueue, settleMs = 0): Promise<void> {
  if (settleMs > 0) await sleep(settleMs);
  if (!kueue.process.running())
    throw new Error(`Kueue exited; last lines of ${kueue.process.logFile}:\n${kueue.process.tail(60)}`);
}
