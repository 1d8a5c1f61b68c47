/**
 * @module Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection
 * package does it, so that of several checkers (two replicas, a rolling update, a Pod on a node
 * that lost its network while its replacement started) one decides and writes at a time.
 *
 * The holder renews the Lease every retry period; another candidate takes it over once it has seen
 * the same Lease unchanged for the holder's lease duration — measured on its own monotonic clock
 * from when it saw that version, never by comparing the holder's renewTime with its own clock, so
 * neither skew between nodes nor a step of a node's wall clock (NTP, a VM resumed) matters: the
 * renewTime is written for people and tools, and no decision reads it. A holder that has not
 * renewed within the renew deadline (shorter than the lease duration), on its own monotonic clock,
 * stops counting itself leader before anyone else may take over. Every write carries the
 * resourceVersion it read: two candidates racing for a free Lease get one 409.
 *
 * A try that fails (the API server down or shedding load) is retried every retry period while
 * this process leads (it must renew within the deadline); otherwise after a backoff from the retry
 * period up to the lease duration, or the server's Retry-After when that is longer.
 */
import { z } from 'zod';
import { ApiError, type KubeApi } from '../api-client/index.js';
import { jittered, retryDelayMs, type Logger } from '../runtime/index.js';

export const LEASE_API = '/apis/coordination.k8s.io/v1';

/** client-go's defaults (and kube-scheduler's, kube-controller-manager's): 15 s, 10 s, 2 s. */
export const DEFAULT_LEASE_DURATION_MS = 15_000;
export const DEFAULT_RENEW_DEADLINE_MS = 10_000;
export const DEFAULT_RETRY_PERIOD_MS = 2_000;

const ReceivedLeaseSchema = z
  .object({
    metadata: z.object({ resourceVersion: z.string() }).loose(),
    spec: z
      .object({
        holderIdentity: z.string().nullish(),
        leaseDurationSeconds: z.number().int().nullish(),
        acquireTime: z.string().nullish(),
        leaseTransitions: z.number().int().nullish(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type ReceivedLease = z.infer<typeof ReceivedLeaseSchema>;

/** A MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
export function microTime(now: Date): string {
  return now.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** What a candidate does after reading the Lease. */
export type LeaseStep =
  { readonly kind: 'create' | 'replace'; readonly body: object } | { readonly kind: 'follow'; readonly holder: string };

export interface LeaseStepInput {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** The Lease as read; undefined when there is none. */
  readonly lease: ReceivedLease | undefined;
  /** Whether this candidate has seen the same version of the Lease for the holder's whole lease duration. */
  readonly expired: boolean;
  readonly durationSeconds: number;
  readonly now: Date;
}

/**
 * Create the Lease, take it (free, expired, or ours to renew) with the resourceVersion read, or
 * follow its live holder. A takeover counts a transition; a renewal keeps the acquire time.
 */
export function nextLeaseStep(input: LeaseStepInput): LeaseStep {
  const { identity, lease, now } = input;
  const spec = {
    holderIdentity: identity,
    leaseDurationSeconds: input.durationSeconds,
    renewTime: microTime(now),
  };
  const metadata = { name: input.name, namespace: input.namespace };
  if (lease === undefined) {
    return {
      kind: 'create',
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata,
        spec: { ...spec, acquireTime: microTime(now), leaseTransitions: 0 },
      },
    };
  }
  const holder = lease.spec?.holderIdentity ?? '';
  if (holder !== '' && holder !== identity && !input.expired) return { kind: 'follow', holder };
  const ours = holder === identity;
  const transitions = lease.spec?.leaseTransitions ?? 0;
  return {
    kind: 'replace',
    body: {
      ...lease,
      metadata: { ...lease.metadata, ...metadata },
      spec: {
        ...lease.spec,
        ...spec,
        acquireTime: ours ? (lease.spec?.acquireTime ?? microTime(now)) : microTime(now),
        leaseTransitions: ours ? transitions : transitions + 1,
      },
    },
  };
}

/** The Lease a holder leaves on a clean stop: no holder, so the next candidate takes it at once. */
export function releasedLease(lease: ReceivedLease, now: Date): object {
  return {
    ...lease,
    spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now) },
  };
}

/** Whether this process may act as the one writer right now. */
export interface Leadership {
  leading(): boolean;
}

/** A process that is the only candidate: always leading (`--leader-elect=false`). */
export const SOLE_WRITER: Leadership = { leading: () => true };

export interface LeaderElectionOptions {
  readonly api: KubeApi;
  readonly namespace: string;
  readonly name: string;
  /** Unique per process: the Pod's name and a random part. */
  readonly identity: string;
  readonly logger: Logger;
  /** @default DEFAULT_LEASE_DURATION_MS */
  readonly leaseDurationMs?: number;
  /** @default DEFAULT_RENEW_DEADLINE_MS */
  readonly renewDeadlineMs?: number;
  /** @default DEFAULT_RETRY_PERIOD_MS */
  readonly retryPeriodMs?: number;
  /** Wall time, for the Lease's acquireTime and renewTime (read by people and tools, never for a decision). */
  readonly clock?: () => Date;
  /**
   * Milliseconds on a clock that never steps (performance.now()): every duration — the renew
   * deadline, how long a Lease version has been seen — is measured on it. @default performance.now
   */
  readonly monotonic?: () => number;
  /** Called when this process starts or stops leading. */
  readonly onChange?: (leading: boolean) => void;
}

/**
 * The wait before the next try: the retry period after a success (a follower's varied by ±20 %, so
 * that candidates started together do not read in step; a leader renews on time); after failures
 * the retry period again while this process leads, else a backoff from the retry period doubling
 * up to the lease duration; never sooner than the server's Retry-After.
 * @example leaseRetryDelayMs({ failures: 3, leading: false, retryPeriodMs: 2000, leaseDurationMs: 15_000 }, () => 0.5) // 8000
 */
export function leaseRetryDelayMs(
  state: {
    readonly failures: number;
    readonly leading: boolean;
    readonly retryPeriodMs: number;
    readonly leaseDurationMs: number;
    readonly error?: unknown;
  },
  random: () => number = Math.random,
): number {
  const { failures, leading, retryPeriodMs, leaseDurationMs, error } = state;
  if (failures === 0) return leading ? retryPeriodMs : jittered(retryPeriodMs, LEASE_JITTER, random);
  const backoff = {
    initialMs: retryPeriodMs,
    maxMs: leading ? retryPeriodMs : Math.max(retryPeriodMs, leaseDurationMs),
    jitter: leading ? 0 : LEASE_JITTER,
  };
  return retryDelayMs(failures, backoff, error, random);
}

const LEASE_JITTER = 0.2;

/** Tries for the Lease every retry period until stopped; `leading()` says whether it holds it now. */
export class LeaderElector implements Leadership {
  readonly #options: LeaderElectionOptions;
  readonly #clock: () => Date;
  readonly #monotonic: () => number;
  readonly #path: string;
  /** The version of the Lease last seen, and when (the monotonic clock) it was first seen. */
  #observed: { resourceVersion: string; at: number } | undefined;
  /** When (the monotonic clock) this process last read the Lease before a renewal that succeeded. */
  #lastRenew: number | undefined;
  /** Consecutive failed tries, and the last one's error (its Retry-After). */
  #failures = 0;
  #lastError: unknown;
  #leading = false;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #stopped = false;
  #lastRefusal: string | undefined;

  constructor(options: LeaderElectionOptions) {
    this.#options = options;
    this.#clock = options.clock ?? (() => new Date());
    this.#monotonic = options.monotonic ?? (() => performance.now());
    this.#path = `${LEASE_API}/namespaces/${encodeURIComponent(options.namespace)}/leases/${encodeURIComponent(options.name)}`;
  }

  start(): void {
    this.#schedule(0);
  }

  leading(): boolean {
    const renewDeadline = this.#options.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS;
    return this.#leading && this.#lastRenew !== undefined && this.#monotonic() - this.#lastRenew < renewDeadline;
  }

  /** Stops trying and, when holding the Lease, hands it back so that another candidate leads at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    await this.#tick;
    if (!this.#leading) return;
    this.#setLeading(false);
    try {
      const lease = ReceivedLeaseSchema.parse(await this.#options.api.get(this.#path));
      if (lease.spec?.holderIdentity === this.#options.identity)
        await this.#options.api.replace(this.#path, releasedLease(lease, this.#clock()));
    } catch (error) {
      this.#options.logger.warn({ err: (error as Error).message }, 'could not release the leader Lease');
    }
  }

  /** One try: read the Lease, then create, renew, take over or follow it. */
  async tryOnce(): Promise<void> {
    const { api, logger } = this.#options;
    const now = this.#clock();
    // Taken before the read: the renewal counts from before its request was sent, never later.
    const started = this.#monotonic();
    try {
      const raw = await api.get(this.#path);
      const lease = raw === undefined ? undefined : ReceivedLeaseSchema.parse(raw);
      const step = nextLeaseStep({
        namespace: this.#options.namespace,
        name: this.#options.name,
        identity: this.#options.identity,
        lease,
        // Seen now, after the read returned: a later observation can only delay a takeover.
        expired: this.#expired(lease, this.#monotonic()),
        durationSeconds: Math.ceil((this.#options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS) / 1000),
        now,
      });
      this.#failures = 0;
      if (step.kind === 'follow') {
        if (this.#leading) logger.warn({ holder: step.holder }, 'another checker holds the leader Lease');
        this.#setLeading(false);
        return;
      }
      if (step.kind === 'create')
        await api.create(`${LEASE_API}/namespaces/${encodeURIComponent(this.#options.namespace)}/leases`, step.body);
      else await api.replace(this.#path, step.body);
      this.#lastRenew = started;
      this.#setLeading(true);
    } catch (error) {
      // 409 is an answer (another candidate wrote first), not a failure to back off from.
      if (!(error instanceof ApiError && error.status === 409)) {
        this.#failures++;
        this.#lastError = error;
      }
      // 409: another candidate wrote first; it leads, or the next try sees who does.
      if (error instanceof ApiError && error.status === 403) this.#forbidden(error);
      else if (!(error instanceof ApiError && error.status === 409))
        logger.warn({ err: (error as Error).message }, 'leader Lease: read or write failed; trying again');
      if (this.#leading && !this.leading()) {
        logger.error({}, 'leader Lease not renewed within the renew deadline: no longer deciding');
        this.#setLeading(false);
      }
    }
  }

  /**
   * No RBAC for the Lease: this checker would never decide, and say nothing a probe sees. One error
   * naming what is missing, again only if the refusal changes (no line every retry period).
   */
  #forbidden(error: ApiError): void {
    if (this.#lastRefusal === error.message) return;
    this.#lastRefusal = error.message;
    const { namespace, name } = this.#options;
    this.#options.logger.error(
      { err: error.message, namespace, lease: name },
      `leader Lease refused: the checker decides nothing until its account may create leases and get and update the lease ${name} in namespace ${namespace} (the chart's Role gpustack-admission-leader), or it runs with --leader-elect false`,
    );
  }

  /** Expired: the holder's lease duration has passed since this process first saw this version of it. */
  /** The wait before the next try ({@link leaseRetryDelayMs}). */
  nextDelayMs(random: () => number = Math.random): number {
    return leaseRetryDelayMs(
      {
        failures: this.#failures,
        leading: this.leading(),
        retryPeriodMs: this.#options.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
        leaseDurationMs: this.#options.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
        error: this.#lastError,
      },
      random,
    );
  }

  #expired(lease: ReceivedLease | undefined, now: number): boolean {
    if (lease === undefined) return false;
    const version = lease.metadata.resourceVersion;
    if (this.#observed?.resourceVersion !== version) this.#observed = { resourceVersion: version, at: now };
    const seconds = lease.spec?.leaseDurationSeconds ?? DEFAULT_LEASE_DURATION_MS / 1000;
    return now - this.#observed.at >= seconds * 1000;
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.#options.logger.info({ identity: this.#options.identity, leading }, leading ? 'leading' : 'not leading');
    this.#options.onChange?.(leading);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.tryOnce().finally(() => {
        this.#tick = undefined;
        this.#schedule(this.nextDelayMs());
      });
    }, delayMs);
  }
}
