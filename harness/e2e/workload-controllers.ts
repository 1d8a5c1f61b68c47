// The real JobSet and LeaderWorkerSet managers (sigs.k8s.io/jobset, sigs.k8s.io/lws; built and cached by
// scripts/e2e/build-components.sh) run out-of-cluster against the e2e control plane like Kueue
// (kueue.ts), with their webhooks registered: JobSet's and LWS's defaulting and validation, and their
// Pod webhooks, which label each Pod with its place in the gang or group.
//
// Out-of-cluster needs (read from jobset v0.10.1 main.go and lws v0.7.0 cmd/main.go, both decode their
// Configuration strictly):
// - internal cert management off (the cert rotator would wait for a Secret mounted by a kubelet): the
//   webhook server reads `tls.crt`/`tls.key` from webhook.certDir, one self-signed pair for
//   127.0.0.1 (kueue.ts's), also the webhooks' caBundle;
// - leader election off (LWS's flag defaults to on and wins over the file: given as a flag too);
// - the metrics server off (bindAddress "0"; it would serve TLS with authn/authz nobody reads here);
// - health and webhook servers on free 127.0.0.1 ports; ready once /readyz answers, which both gate
//   on the webhook server having started.
// The release's kustomize patches of the webhooks (an objectSelector on the Pod webhooks, so they see
// only their own Pods) are applied as the release applies them.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { parse, stringify } from 'yaml';

import { parseManifests, waitFor, type KubeObject } from './apply.js';
import { ensureComponents, type Component } from './components.js';
import type { ControlPlane, Stoppable } from './control-plane.js';
import { selfSignedCert, type WebhookEntry } from './kueue.js';
import { log } from './log.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';

export type WorkloadControllerName = 'jobset' | 'lws';

const CONFIG_API: Record<WorkloadControllerName, string> = {
  jobset: 'config.jobset.x-k8s.io/v1alpha1',
  lws: 'config.lws.x-k8s.io/v1alpha1',
};

export interface WorkloadController extends Stoppable {
  component: Component;
  process: ManagedProcess;
  /** `<Kind>/<name>` of the webhook configurations registered. */
  webhookConfigurations: string[];
}

/** The CRD files a controller's component ships (applied before Kueue starts, see kueue.ts frameworkCrds). */
export function workloadCrdFiles(component: Component): string[] {
  const dir = component.crds;
  if (!dir) throw new Error(`the ${component.name} component has no CRD folder`);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => path.join(dir, f));
}

type JsonPatch = { op: string; path: string; value?: unknown };

/**
 * The controller's Mutating/ValidatingWebhookConfiguration (its config's webhook/manifests.yaml) with the
 * release's JSON patches (webhook/patches/{mutating,validating}-patch.yaml, `replace /webhooks/<i>` only)
 * applied, each webhook pointed at `https://127.0.0.1:<port><path>` with `certPem` as caBundle, named
 * `<prefix>-<name>`.
 */
export function workloadWebhookConfigurations(
  webhookDir: string,
  prefix: string,
  port: number,
  certPem: string,
): KubeObject[] {
  const caBundle = Buffer.from(certPem).toString('base64');
  const manifests = path.join(webhookDir, 'manifests.yaml');
  if (!existsSync(manifests))
    throw new Error(`no webhook manifests at ${manifests} (scripts/e2e/build-components.sh copies them)`);
  const patchOf = (kind: string): JsonPatch[] => {
    const file = path.join(
      webhookDir,
      'patches',
      kind === 'MutatingWebhookConfiguration' ? 'mutating-patch.yaml' : 'validating-patch.yaml',
    );
    if (!existsSync(file)) return [];
    const patches: unknown = parse(readFileSync(file, 'utf8'));
    if (!Array.isArray(patches)) throw new Error(`${file}: not a list of JSON patch operations`);
    return patches as JsonPatch[];
  };
  const out: KubeObject[] = [];
  for (const object of parseManifests(readFileSync(manifests, 'utf8'))) {
    if (object.kind !== 'MutatingWebhookConfiguration' && object.kind !== 'ValidatingWebhookConfiguration') continue;
    const webhooks = [...((object['webhooks'] ?? []) as WebhookEntry[])];
    for (const patch of patchOf(object.kind)) {
      const index = /^\/webhooks\/(\d+)$/.exec(patch.path);
      if (patch.op !== 'replace' || !index || Number(index[1]) >= webhooks.length)
        throw new Error(`${webhookDir}: a patch the harness cannot apply: ${JSON.stringify(patch).slice(0, 200)}`);
      webhooks[Number(index[1])] = patch.value as WebhookEntry;
    }
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: object.kind,
      metadata: { name: `${prefix}-${object.metadata.name}` },
      webhooks: webhooks.map((w) => {
        const route = w.clientConfig.service?.path;
        if (!route) throw new Error(`${manifests}: webhook ${w.name} has no clientConfig.service.path`);
        return { ...w, clientConfig: { url: `https://127.0.0.1:${port}${route}`, caBundle }, timeoutSeconds: 10 };
      }),
    });
  }
  if (out.length === 0) throw new Error(`${manifests}: no webhook configuration`);
  return out;
}

/**
 * Starts the JobSet or LeaderWorkerSet manager against the control plane: its CRDs applied (idempotent),
 * its webhooks registered once it is ready. The plane's stop() stops it, the webhook configurations
 * removed first. Fails with the tail of its log if it exits or never gets ready.
 */
export async function startWorkloadController(
  plane: ControlPlane,
  name: WorkloadControllerName,
  options: { timeoutMs?: number } = {},
): Promise<WorkloadController> {
  const client = plane.client;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const component = ensureComponents([name])[name];
  await client.installCrds(workloadCrdFiles(component));
  const dir = mkdtempSync(path.join(plane.dir, `${name}-`));
  const certDir = path.join(dir, 'certs');
  mkdirSync(certDir);
  const certPem = selfSignedCert(certDir, `${name}-e2e`);
  const [health, webhook] = (await freePorts(2)) as [number, number];
  const configFile = path.join(dir, 'controller_manager_config.yaml');
  writeFileSync(
    configFile,
    stringify({
      apiVersion: CONFIG_API[name],
      kind: 'Configuration',
      internalCertManagement: { enable: false },
      leaderElection: { leaderElect: false },
      health: { healthProbeBindAddress: `127.0.0.1:${health}` },
      metrics: { bindAddress: '0' },
      webhook: { host: '127.0.0.1', port: webhook, certDir },
    }),
  );
  const readyz = async (): Promise<boolean> =>
    (await fetch(`http://127.0.0.1:${health}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
  const proc = startProcess(
    name,
    component.binary,
    ['--config', configFile, '--kubeconfig', plane.kubeconfig, '--leader-elect=false', '--zap-log-level=2'],
    plane.logsDir,
    { ready: readyz, readyTimeoutMs: timeoutMs },
  );
  const registered: KubeObject[] = [];
  let stopped = false;
  const handle: WorkloadController = {
    name,
    component,
    process: proc,
    webhookConfigurations: [],
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
      await proc.stop();
    },
  };
  plane.adopt(handle);
  try {
    await waitFor(
      async () => {
        if (!proc.running())
          throw new Error(`${name} exited during start-up; last lines of ${proc.logFile}:\n${proc.tail(60)}`);
        return readyz().catch(() => false);
      },
      timeoutMs,
      `${name} did not become ready on 127.0.0.1:${health}/readyz; see ${proc.logFile}`,
      500,
    );
    for (const object of workloadWebhookConfigurations(
      path.join(path.dirname(component.crds ?? ''), 'webhook'),
      name,
      webhook,
      certPem,
    )) {
      await client.applyObject(object);
      registered.push(object);
      handle.webhookConfigurations.push(`${object.kind}/${object.metadata.name}`);
    }
  } catch (error) {
    await handle.stop();
    if (error instanceof Error && !error.message.includes(proc.logFile))
      error.message += `\nlast lines of ${proc.logFile}:\n${proc.tail(60)}`;
    throw error;
  }
  log(
    `${name} ${component.version} manager running (${handle.webhookConfigurations.join(', ')}); pid ${proc.pid}, ` +
      `${component.module}, health 127.0.0.1:${health}, webhook :${webhook}`,
  );
  return handle;
}
