/**
 * @module The checker process: five informers feed the stores (the fifth, the SchedulingChain
 * `default`, for its resource names), three more the card ledger (ResourceSlices, ResourceClaims,
 * ResourceClaimTemplates, and DeviceTaintRules where served); any change schedules a reconcile pass a little later
 * (events coalesce), a periodic resync re-decides even without events (a `Retry` whose blocking
 * pods went away while Kueue backed off), and failed writes are retried with a backoff. Nothing
 * is decided until every store has listed once: a Workload decided before the Pods are known
 * would see every node empty, one decided before the chain would count the wrong resource. The
 * ledger's three stores get their first list before the first pass, but one that fails (no
 * resource.k8s.io/v1, no RBAC for it) holds nothing back: only Workloads using claims wait for it.
 */
import { hostname } from 'node:os';
import type { KubeApi } from '../api-client/index.js';
import type { Settings } from '../k8s/index.js';
import { healthReport, type HealthReport } from './health.js';
import { LeaderElector, SOLE_WRITER, type LeaderElectionOptions, type Leadership } from './leader-election.js';
import { retryDelayMs, type BackoffOptions, type Logger } from '../runtime/index.js';
import { DEFAULT_BACKOFF, Informer, type InformerOptions, type InformerStatus } from './informer.js';
import { NO_RECORDING, type AdmissionRecorder } from './metrics.js';
import { Reconciler, type PassResult, type Snapshot } from './reconcile.js';
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
  type WatchedResource,
} from './resources.js';
import { SettingsTracker } from './settings.js';
import { TaintRuleWatch } from './taint-rules.js';
import { kubeCheckWriter, type CheckWriter } from './writer.js';
import { kubeEventSink } from './events.js';

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
  /**
   * Decide and write only while holding this Lease (several checkers at once: one leads, the
   * others keep their stores listed and take over when its Lease expires). @default none: always decide
   */
  readonly leaderElection?: Omit<LeaderElectionOptions, 'api' | 'logger' | 'onChange' | 'clock'>;
}

export interface Checker {
  /** The watches' health, and whether this checker leads (decides and writes) now. */
  health(): HealthReport & { readonly leading: boolean };
  /** Resolves after the first pass that ran with every store listed (and settings to decide with). */
  readonly firstPass: Promise<void>;
  /** Stops the watches and timers and waits for a running pass. */
  stop(): Promise<void>;
}

export function startChecker(options: CheckerOptions): Checker {
  return new RunningChecker(options);
}

/** What the checker needs of an informer besides its store: where its watch stands, and its loop. */
interface Watch {
  readonly status: InformerStatus;
  run(signal: AbortSignal): Promise<void>;
}

type InformerOf<R> = R extends WatchedResource<infer T> ? Informer<T> : never;

/** The checker's informers: the five every pass needs, and the card ledger's four. */
class CheckerInformers {
  readonly workloads: InformerOf<typeof WORKLOADS>;
  readonly flavors: InformerOf<typeof RESOURCE_FLAVORS>;
  readonly nodes: InformerOf<typeof NODES>;
  readonly pods: InformerOf<typeof PODS>;
  readonly chains: InformerOf<typeof SCHEDULING_CHAINS>;
  // The card ledger (and the InstanceTypes it annotates with their pool's count). Not required
  // for a pass and not part of /healthz: a cluster without resource.k8s.io/v1 (or RBAC for it)
  // still gets verdicts for device-plugin Workloads, and a Workload whose pods use claims is
  // answered Retry until the three have listed.
  readonly slices: InformerOf<typeof RESOURCE_SLICES>;
  readonly claims: InformerOf<typeof RESOURCE_CLAIMS>;
  readonly templates: InformerOf<typeof RESOURCE_CLAIM_TEMPLATES>;
  readonly instanceTypes: InformerOf<typeof INSTANCE_TYPES>;
  /** DeviceTaintRules, at the version discovery finds; none where the cluster serves none. */
  readonly taintRules: TaintRuleWatch;

  constructor(api: KubeApi, options: InformerOptions) {
    this.workloads = new Informer(api, WORKLOADS, options);
    this.flavors = new Informer(api, RESOURCE_FLAVORS, options);
    this.nodes = new Informer(api, NODES, options);
    this.pods = new Informer(api, PODS, options);
    this.chains = new Informer(api, SCHEDULING_CHAINS, options);
    this.slices = new Informer(api, RESOURCE_SLICES, options);
    this.claims = new Informer(api, RESOURCE_CLAIMS, options);
    this.templates = new Informer(api, RESOURCE_CLAIM_TEMPLATES, options);
    this.instanceTypes = new Informer(api, INSTANCE_TYPES, options);
    this.taintRules = new TaintRuleWatch(api, options);
  }

  /** The informers every pass needs listed; /healthz reports them. */
  get required(): readonly Watch[] {
    return [this.workloads, this.flavors, this.nodes, this.pods, this.chains];
  }

  get ledger(): readonly Watch[] {
    return [this.slices, this.claims, this.templates, this.instanceTypes, this.taintRules];
  }

  /** Lists and watches every store until `signal` aborts. */
  run(signal: AbortSignal): Promise<void>[] {
    return [...this.required, ...this.ledger].map((i) => i.run(signal));
  }

  /** Whether a pass may run: every required store has listed. */
  listed(): boolean {
    if (!this.required.every((i) => i.status.synced)) return false;
    // The ledger's lists get their first try before the first pass (no Retry written only to be
    // replaced a moment later); one that fails does not hold the device-plugin verdicts back.
    return this.ledger.every((i) => i.status.synced || i.status.failures > 0);
  }

  /** The stores as a pass reads them; the ledger's only once listed. */
  snapshot(settings: Settings): Snapshot {
    const { slices, claims, templates, instanceTypes } = this;
    return {
      workloads: this.workloads.store.values(),
      flavors: Object.fromEntries([...this.flavors.store.values()].map((f) => [f.metadata.name, f])),
      nodes: [...this.nodes.store.values()],
      pods: [...this.pods.store.values()],
      settings,
      // The rules, once listed: until then (or while their list fails) no card counts as cordoned.
      ...([slices, claims, templates].every((i) => i.status.synced)
        ? {
            dra: {
              slices: slices.store,
              claims: claims.store,
              templates: templates.store,
              taintRules: this.taintRules.store,
            },
          }
        : {}),
      ...(instanceTypes.status.synced ? { instanceTypes: instanceTypes.store.values() } : {}),
    };
  }
}

class RunningChecker implements Checker {
  readonly firstPass: Promise<void>;
  readonly #options: CheckerOptions;
  readonly #debounceMs: number;
  readonly #clock: () => Date;
  readonly #recorder: AdmissionRecorder;
  readonly #stop = new AbortController();
  readonly #informers: CheckerInformers;
  readonly #settings: SettingsTracker;
  readonly #reconciler: Reconciler;
  readonly #elector: LeaderElector | undefined;
  readonly #leadership: Leadership;
  readonly #resync: NodeJS.Timeout;
  readonly #runs: Promise<void>[];
  /** The next pass, when one is scheduled. */
  #timer: NodeJS.Timeout | undefined;
  /** The pass under way, and whether a change arrived while it ran. */
  #running: Promise<void> | undefined;
  #pending = false;
  /** Passes in a row with a failed write; the retry waits longer with each. */
  #writeFailures = 0;
  #firstPassDone: () => void = () => undefined;

  constructor(options: CheckerOptions) {
    this.#options = options;
    this.#debounceMs = options.debounceMs ?? DEFAULT_DEBOUNCE_MS;
    this.#clock = options.clock ?? (() => new Date());
    this.#recorder = options.recorder ?? NO_RECORDING;
    this.#informers = new CheckerInformers(options.api, {
      logger: options.logger,
      onRestart: (resource: string) => this.#recorder.watchRestart(resource),
      onChange: () => this.#schedule(this.#debounceMs),
      clock: () => this.#clock().getTime(),
      backoff: options.backoff,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
    });
    this.#settings = new SettingsTracker(options.logger);
    this.#elector =
      options.leaderElection === undefined
        ? undefined
        : new LeaderElector({
            ...options.leaderElection,
            api: options.api,
            logger: options.logger,
            clock: this.#clock,
            onChange: (leading) => {
              this.#recorder.leading?.(leading);
              // Taking over: decide at once from the stores already listed, not at the next event.
              if (leading) this.#schedule(0);
            },
          });
    this.#leadership = this.#elector ?? SOLE_WRITER;
    this.#recorder.leading?.(this.#elector === undefined);
    this.#reconciler = createReconciler(options, this.#clock, this.#recorder, () => this.#leadership.leading());
    this.firstPass = new Promise<void>((resolve) => {
      this.#firstPassDone = resolve;
    });
    this.#resync = setInterval(() => this.#schedule(0), options.resyncMs ?? DEFAULT_RESYNC_MS);
    this.#runs = this.#informers.run(this.#stop.signal);
    this.#elector?.start();
  }

  health(): HealthReport & { readonly leading: boolean } {
    const graceMs = this.#options.graceMs ?? DEFAULT_WATCH_GRACE_MS;
    const report = healthReport(
      this.#informers.required.map((i) => i.status),
      this.#clock().getTime(),
      graceMs,
    );
    return { ...report, leading: this.#leadership.leading() };
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#resync);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await Promise.all(this.#runs);
    await this.#running;
    // After the last pass: the Lease goes back only once nothing more is written.
    await this.#elector?.stop();
  }

  #schedule(delayMs: number): void {
    if (this.#stop.signal.aborted || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#runPass();
    }, delayMs);
  }

  async #runPass(): Promise<void> {
    // A follower keeps its stores listed and decides nothing: the leader writes.
    if (!this.#informers.listed() || !this.#leadership.leading()) return;
    // One pass at a time; changes during a pass get one more pass after it.
    if (this.#running) {
      this.#pending = true;
      return;
    }
    this.#running = this.#passOnce().catch((error: unknown) => {
      this.#options.logger.error(
        { err: (error as Error).message },
        'reconcile pass failed; will retry on the next change or resync',
      );
    });
    await this.#running;
    this.#running = undefined;
    if (this.#pending) {
      this.#pending = false;
      this.#schedule(this.#debounceMs);
    }
  }

  async #passOnce(): Promise<void> {
    // Invalid settings and none valid before: skip (warned once); the fix arrives as a watch event.
    const settings = this.#settings.resolve(this.#informers.chains.store);
    if (settings === undefined) return;
    const started = performance.now();
    const result = await this.#reconciler.pass(this.#informers.snapshot(settings));
    this.#recorder.pass((performance.now() - started) / 1000);
    this.#firstPassDone();
    this.#options.onPass?.(result);
    this.#retryFailedWrites(result);
  }

  /**
   * A pass with a failed write is followed by another after a backoff that grows while they keep
   * failing, or after the longest Retry-After the failed writes carried when that is longer (up to the backoff's cap).
   */
  #retryFailedWrites(result: PassResult): void {
    this.#writeFailures = result.failed > 0 ? this.#writeFailures + 1 : 0;
    if (this.#writeFailures === 0) return;
    const delayMs = retryDelayMs(this.#writeFailures, this.#options.backoff ?? DEFAULT_BACKOFF, result);
    setTimeout(() => this.#schedule(0), delayMs).unref();
  }
}

function createReconciler(
  options: CheckerOptions,
  clock: () => Date,
  recorder: AdmissionRecorder,
  mayWrite: () => boolean,
): Reconciler {
  const checkName = options.checkName ?? DEFAULT_CHECK_NAME;
  return new Reconciler({
    writer: options.writer ?? kubeCheckWriter(options.api, checkName),
    checkName,
    logger: options.logger,
    clock,
    recorder,
    mayWrite,
    events: kubeEventSink(options.api, hostname(), clock),
  });
}
