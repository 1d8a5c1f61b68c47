/**
 * @module The checker process: five informers feed the stores (the fifth, the SchedulingChain
 * `default`, for its resource names), three more the card ledger (ResourceSlices, ResourceClaims,
 * ResourceClaimTemplates); any change schedules a reconcile pass a little later
 * (events coalesce), a periodic resync re-decides even without events (a `Retry` whose blocking
 * pods went away while Kueue backed off), and failed writes are retried with a backoff. Nothing
 * is decided until every store has listed once: a Workload decided before the Pods are known
 * would see every node empty, one decided before the chain would count the wrong resource. The
 * ledger's three stores get their first list before the first pass, but one that fails (no
 * resource.k8s.io/v1, no RBAC for it) holds nothing back: only Workloads using claims wait for it.
 */
import type { KubeApi } from '../api-client/index.js';
import { healthReport, type HealthReport } from './health.js';
import { backoffMs, type BackoffOptions, type Logger } from '../runtime/index.js';
import { DEFAULT_BACKOFF, Informer } from './informer.js';
import { NO_RECORDING, type AdmissionRecorder } from './metrics.js';
import { Reconciler, type PassResult } from './reconcile.js';
import {
  INSTANCE_TYPES,
  NODES,
  PODS,
  RESOURCE_CLAIMS,
  RESOURCE_CLAIM_TEMPLATES,
  RESOURCE_FLAVORS,
  RESOURCE_SLICES,
  SCHEDULING_CHAINS,
  WORKLOADS,
} from './resources.js';
import { SettingsTracker } from './settings.js';
import { kubeCheckWriter, type CheckWriter } from './writer.js';

export const DEFAULT_CHECK_NAME = 'gpustack-node-devices';
/** Events arrive in bursts (a Job's pods, a node's relabel): one pass for the burst, not one per event. */
export const DEFAULT_DEBOUNCE_MS = 150;
/** Re-decide without events too: a `Retry` whose blocking pods went away while Kueue backed off. */
export const DEFAULT_RESYNC_MS = 30_000;
/** Longer than a watch's normal reconnect gap, so /healthz does not flap on a routine relist. */
export const DEFAULT_WATCH_GRACE_MS = 60_000;

export interface CheckerOptions {
  readonly api: KubeApi;
  readonly logger: Logger;
  /** Our entry in `status.admissionChecks`, also the field manager of the apply. @default 'gpustack-node-devices' */
  readonly checkName?: string;
  /** @default server-side apply through `api` */
  readonly writer?: CheckWriter;
  /** How long events coalesce before a pass. @default DEFAULT_DEBOUNCE_MS */
  readonly debounceMs?: number;
  /** A pass at least this often, events or not. @default DEFAULT_RESYNC_MS */
  readonly resyncMs?: number;
  /** For watches and for failed writes. @default 1 s doubling up to 30 s */
  readonly backoff?: BackoffOptions;
  /** How long a watch may be without its stream and still count as live. @default DEFAULT_WATCH_GRACE_MS */
  readonly graceMs?: number;
  /** @default 300 */
  readonly watchTimeoutSeconds?: number;
  readonly clock?: () => Date;
  /** Pass times, writes and watch restarts for /metrics. @default NO_RECORDING */
  readonly recorder?: AdmissionRecorder;
  /** Called after each pass (tests and diagnostics). */
  readonly onPass?: (result: PassResult) => void;
}

export interface Checker {
  health(): HealthReport;
  /** Resolves after the first pass that ran with every store listed (and settings to decide with). */
  readonly firstPass: Promise<void>;
  /** Stops the watches and timers and waits for a running pass. */
  stop(): Promise<void>;
}

export function startChecker(options: CheckerOptions): Checker {
  const checkName = options.checkName ?? DEFAULT_CHECK_NAME;
  const debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
  const clock = options.clock ?? (() => new Date());
  const stop = new AbortController();
  const recorder = options.recorder ?? NO_RECORDING;
  const informerOptions = {
    logger: options.logger,
    onRestart: (resource: string) => recorder.watchRestart(resource),
    onChange: () => schedule(debounceMs),
    clock: () => clock().getTime(),
    backoff: options.backoff,
    watchTimeoutSeconds: options.watchTimeoutSeconds,
  };
  const workloads = new Informer(options.api, WORKLOADS, informerOptions);
  const flavors = new Informer(options.api, RESOURCE_FLAVORS, informerOptions);
  const nodes = new Informer(options.api, NODES, informerOptions);
  const pods = new Informer(options.api, PODS, informerOptions);
  const chains = new Informer(options.api, SCHEDULING_CHAINS, informerOptions);
  const informers = [workloads, flavors, nodes, pods, chains];
  // The card ledger (and the InstanceTypes it annotates with their pool's count). Not required
  // for a pass and not part of /healthz: a cluster without resource.k8s.io/v1 (or RBAC for it)
  // still gets verdicts for device-plugin Workloads, and a Workload whose pods use claims is
  // answered Retry until the three have listed.
  const slices = new Informer(options.api, RESOURCE_SLICES, informerOptions);
  const claims = new Informer(options.api, RESOURCE_CLAIMS, informerOptions);
  const templates = new Informer(options.api, RESOURCE_CLAIM_TEMPLATES, informerOptions);
  const instanceTypes = new Informer(options.api, INSTANCE_TYPES, informerOptions);
  const draInformers = [slices, claims, templates, instanceTypes];
  const settings = new SettingsTracker(options.logger);
  const reconciler = new Reconciler({
    writer: options.writer ?? kubeCheckWriter(options.api, checkName),
    checkName,
    logger: options.logger,
    clock,
    recorder,
  });

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let pending = false;
  let writeFailures = 0;
  let firstPassDone: () => void = () => undefined;
  const firstPass = new Promise<void>((resolve) => {
    firstPassDone = resolve;
  });

  function schedule(delayMs: number): void {
    if (stop.signal.aborted || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void runPass();
    }, delayMs);
  }

  async function runPass(): Promise<void> {
    if (!informers.every((i) => i.status.synced)) return;
    // The ledger's lists get their first try before the first pass (no Retry written only to be
    // replaced a moment later); one that fails does not hold the device-plugin verdicts back.
    if (!draInformers.every((i) => i.status.synced || i.status.failures > 0)) return;
    // One pass at a time; changes during a pass get one more pass after it.
    if (running) {
      pending = true;
      return;
    }
    running = passOnce().catch((error: unknown) => {
      options.logger.error(
        { err: (error as Error).message },
        'reconcile pass failed; will retry on the next change or resync',
      );
    });
    await running;
    running = undefined;
    if (pending) {
      pending = false;
      schedule(debounceMs);
    }
  }

  async function passOnce(): Promise<void> {
    // Invalid settings and none valid before: skip (warned once); the fix arrives as a watch event.
    const current = settings.resolve(chains.store);
    if (current === undefined) return;
    const flavorsByName = Object.fromEntries([...flavors.store.values()].map((f) => [f.metadata.name, f]));
    const started = performance.now();
    const result = await reconciler.pass({
      workloads: workloads.store.values(),
      flavors: flavorsByName,
      nodes: [...nodes.store.values()],
      pods: [...pods.store.values()],
      settings: current,
      ...([slices, claims, templates].every((i) => i.status.synced)
        ? { dra: { slices: slices.store, claims: claims.store, templates: templates.store } }
        : {}),
      ...(instanceTypes.status.synced ? { instanceTypes: instanceTypes.store.values() } : {}),
    });
    recorder.pass((performance.now() - started) / 1000);
    firstPassDone();
    options.onPass?.(result);
    writeFailures = result.failed > 0 ? writeFailures + 1 : 0;
    if (writeFailures > 0)
      setTimeout(() => schedule(0), backoffMs(writeFailures, options.backoff ?? DEFAULT_BACKOFF)).unref();
  }

  const resync = setInterval(() => schedule(0), options.resyncMs ?? DEFAULT_RESYNC_MS);
  const runs = [...informers, ...draInformers].map((i) => i.run(stop.signal));
  return {
    health: () =>
      healthReport(
        informers.map((i) => i.status),
        clock().getTime(),
        options.graceMs ?? DEFAULT_WATCH_GRACE_MS,
      ),
    firstPass,
    async stop() {
      stop.abort();
      clearInterval(resync);
      if (timer !== undefined) clearTimeout(timer);
      await Promise.all(runs);
      await running;
    },
  };
}
