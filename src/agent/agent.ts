/**
 * @module The node agent loop: detect every interval, build the labels, publish only on change.
 * Nothing here crashes the process: a failed detection or API call is logged, reported on the
 * health endpoint and retried with backoff.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { DetectResult } from '../../native/index.js';
import { backoffMs, jittered, retryAfterMsOf, sendMetrics, sleep, type Logger } from '../runtime/index.js';
import { serverUnavailable } from '../api-client/index.js';
import {
  failedManufacturers,
  labelsFromDetection,
  sameLabels,
  screenDetection,
  sliceCardsOf,
  type Labels,
} from './labels.js';
import { NO_RECORDING, type AgentRecorder, type PublishResult } from './metrics.js';
import type { Publisher } from './publishers.js';
import { SlicesNotServedError, type SlicePublisher } from './slice-publisher.js';
import { draOwnedCards, type OwnerDecider, type OwnerDecisions } from './device-owners.js';
import { isManufacturer } from '../contracts/index.js';
import type { SliceCard } from '../dra/index.js';

export interface AgentOptions {
  readonly detect: () => Promise<DetectResult>;
  readonly publisher: Publisher;
  /** The node's ResourceSlices (docs/architecture.md#resourceslices), published after the labels and independently of them. */
  readonly slicePublisher?: SlicePublisher | undefined;
  /**
   * Who owns each manufacturer's cards on this node (docs/architecture.md#device-owner), asked before every slice
   * publish; without it DRA owns every card.
   */
  readonly ownerDecider?: OwnerDecider | undefined;
  readonly intervalMs: number;
  readonly logger: Logger;
  readonly clock?: () => Date;
  /** Detections and cycle results for /metrics. @default NO_RECORDING */
  readonly recorder?: AgentRecorder;
}

/** What the agent knows about itself; the health endpoint shows it. */
export interface AgentState {
  published?: Labels | undefined;
  lastDetection?: string;
  lastPublish?: string;
  /** When a cycle last ended with the labels published or confirmed unchanged. */
  lastPublished?: string;
  lastError?: string;
  failures: number;
  writes: number;
  /** ResourceSlice publishing, apart from the labels: one failing never holds the other back. */
  sliceFailures: number;
  lastSliceError?: string;
  sliceWrites: number;
  /** The last owner decision per manufacturer with cards (/healthz shows it). */
  ownerDecisions?: OwnerDecisions;
  /** The longest `Retry-After` the last cycle's failures carried: the next retry waits at least that. */
  retryAfterMs?: number;
}

export type CycleResult = PublishResult;

export function createAgentState(): AgentState {
  return { failures: 0, writes: 0, sliceFailures: 0, sliceWrites: 0 };
}

/** One detect → labels → publish pass, then the ResourceSlices of the same detection. */
export async function runCycle(state: AgentState, options: AgentOptions): Promise<CycleResult> {
  const recorder = options.recorder ?? NO_RECORDING;
  const detected: Detected = {};
  delete state.retryAfterMs;
  const result = await cycle(state, options, detected);
  recorder.publish(result);
  // An API server that did not answer the labels' request (down, 429, 5xx) would not answer the
  // slices' either: the attempt ends there, one request, not one per publisher (the fleet's load
  // during an outage, docs/operations.md#api-server-outages). A refusal of the labels alone (a 403,
  // a 422) leaves the slices to try: one failing never holds the other back.
  if (options.slicePublisher !== undefined && detected.result !== undefined && !detected.unavailable)
    recorder.slicePublish(await publishSlices(state, options, options.slicePublisher, detected.result));
  return result;
}

/** What a cycle hands on to the slices: its detection, and whether its API request found the server unavailable. */
interface Detected {
  result?: DetectResult;
  unavailable?: boolean;
}

/** Keeps the longest Retry-After of this cycle's failures. */
function noteRetryAfter(state: AgentState, error: unknown): void {
  const ms = retryAfterMsOf(error);
  if (ms !== undefined) state.retryAfterMs = Math.max(state.retryAfterMs ?? 0, ms);
}

async function publishSlices(
  state: AgentState,
  options: AgentOptions,
  publisher: SlicePublisher,
  detected: DetectResult,
): Promise<PublishResult> {
  try {
    const { cards, keep } = await ownedCards(state, options, sliceCardsOf(detected), failedManufacturers(detected));
    const outcome = await publisher.publish(cards, keep);
    for (const problem of outcome.problems) options.logger.warn({ problem }, 'resource slices: card reported');
    state.sliceFailures = 0;
    delete state.lastSliceError;
    if (outcome.result === 'published') {
      state.sliceWrites++;
      options.logger.info({ written: outcome.written, deleted: outcome.deleted }, 'published resource slices');
    }
    return outcome.result;
  } catch (error) {
    // A cluster that serves no ResourceSlices is one DRA is off in, not a failing publish: it
    // neither backs off the labels' cycle nor makes the agent unready, but is still reported.
    if (error instanceof SlicesNotServedError) state.sliceFailures = 0;
    else state.sliceFailures++;
    noteRetryAfter(state, error);
    // An ApiError's message carries the API's status and reason (422 field errors, 409 conflicts).
    state.lastSliceError = (error as Error).message;
    options.logger.error(
      { err: state.lastSliceError, failures: state.sliceFailures },
      'publishing resource slices failed; will retry',
    );
    return 'failed';
  }
}

/**
 * The cards DRA owns, to publish: a manufacturer the device plugin owns is withheld (its pool is
 * deleted, kept or not), one DRA hands over is published tainted; each change is logged.
 */
async function ownedCards(
  state: AgentState,
  options: AgentOptions,
  cards: readonly SliceCard[],
  keep: ReadonlySet<string>,
): Promise<{ cards: readonly SliceCard[]; keep: ReadonlySet<string> }> {
  if (options.ownerDecider === undefined) return { cards, keep };
  const manufacturers = [...cards.map((c) => c.manufacturer as string), ...keep].filter(isManufacturer);
  const owners = await options.ownerDecider.decide(manufacturers);
  for (const [mfr, decision] of owners) {
    const before = state.ownerDecisions?.get(mfr);
    if (before?.owner === decision.owner && before.pending === decision.pending && before.wanted === decision.wanted)
      continue;
    const fields = { manufacturer: mfr, ...decision, previous: before?.owner ?? null };
    if (decision.pending !== undefined) options.logger.warn(fields, 'device owner change waits');
    else options.logger.info(fields, 'device owner');
  }
  state.ownerDecisions = owners;
  return draOwnedCards(cards, keep, owners);
}

/** Detects, timed and recorded; a detection that throws is recorded and rethrown. */
async function timedDetect(options: AgentOptions): Promise<DetectResult> {
  const recorder = options.recorder ?? NO_RECORDING;
  const started = performance.now();
  try {
    const result = await options.detect();
    recorder.detection((performance.now() - started) / 1000, result);
    return result;
  } catch (error) {
    recorder.detection((performance.now() - started) / 1000, undefined);
    throw error;
  }
}

async function cycle(state: AgentState, options: AgentOptions, detected: Detected): Promise<PublishResult> {
  const now = () => (options.clock ?? (() => new Date()))().toISOString();
  try {
    detected.result = await timedDetect(options);
    const result = screenDetection(detected.result);
    state.lastDetection = now();
    for (const error of result.errors) {
      if (error.code !== 'LibraryNotFound') options.logger.warn({ ...error }, 'device detection error');
    }
    // After a restart, compare with what is already published instead of rewriting it.
    state.published ??= await options.publisher.read();
    const labels = labelsFromDetection(result, state.published);
    if (sameLabels(labels, state.published)) {
      state.lastPublished = now();
      state.failures = 0;
      delete state.lastError;
      return 'unchanged';
    }
    await options.publisher.write(labels);
    state.published = labels;
    state.lastPublish = now();
    state.lastPublished = state.lastPublish;
    state.writes++;
    state.failures = 0;
    delete state.lastError;
    options.logger.info(
      { mode: options.publisher.mode, devices: result.devices.length, labels: Object.keys(labels).length },
      'published labels',
    );
    return 'published';
  } catch (error) {
    state.failures++;
    state.lastError = (error as Error).message;
    detected.unavailable = serverUnavailable(error);
    noteRetryAfter(state, error);
    options.logger.error({ err: state.lastError, failures: state.failures }, 'agent cycle failed; will retry');
    return 'failed';
  }
}

/**
 * How a failed publish is retried: 1 s doubling to 30 s, as client-go's reflector does (or to the
 * interval when that is longer: a retry never comes later than the next cycle would), or the
 * server's Retry-After when that is longer; a success resets it. Each wait, the interval's too, is
 * varied by ±20 %: agents that failed together (an API server restart) spread their retries
 * instead of meeting the recovering server in lockstep, and agents started together (a DaemonSet
 * rollout) drift apart instead of sending every cycle in the same second. docs/operations.md gives
 * the load a fleet sends during an outage.
 */
export const AGENT_RETRY = { initialMs: 1000, maxMs: 30_000, jitter: 0.2 } as const;

/** The longest wait between two cycles: a retry at its cap, or the interval, with the jitter on top (a Retry-After too is held to it). */
export function longestCycleGapMs(intervalMs: number): number {
  return Math.ceil(Math.max(intervalMs, AGENT_RETRY.maxMs) * (1 + AGENT_RETRY.jitter));
}

/**
 * Delay before the next cycle: the interval, or after failures (of the labels or the slices,
 * whichever has more) the retry backoff of AGENT_RETRY or the last Retry-After, whichever is
 * longer; each jittered by `random` (in [0, 1)).
 * @example nextDelayMs({ ...state, failures: 3 }, 60_000, () => 0.5) // 4000
 */
export function nextDelayMs(state: AgentState, intervalMs: number, random: () => number = Math.random): number {
  const failures = Math.max(state.failures, state.sliceFailures);
  if (failures === 0) return jittered(intervalMs, AGENT_RETRY.jitter, random);
  const retry = backoffMs(failures, { ...AGENT_RETRY, maxMs: Math.max(intervalMs, AGENT_RETRY.maxMs) }, random);
  // At most the longest gap between cycles: a longer Retry-After would let the detection go stale
  // and the liveness probe restart an agent that is only waiting.
  return Math.min(Math.max(retry, state.retryAfterMs ?? 0), longestCycleGapMs(intervalMs));
}

/** Runs cycles until `signal` aborts (SIGTERM), then resolves. */
export async function runAgent(state: AgentState, options: AgentOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await runCycle(state, options);
    await sleep(nextDelayMs(state, options.intervalMs), signal);
  }
}

/** A detection older than this makes /healthz fail: three of the longest gaps between cycles, and 30 s to spare. */
export function detectionStaleAfterMs(intervalMs: number): number {
  return 3 * longestCycleGapMs(intervalMs) + 30_000;
}

/** Why /readyz is 503: the labels' error first (they gate everything else), then the slices'. */
function readyReason(state: AgentState): string {
  if (state.failures > 0) return state.lastError ?? 'publishing the labels failed';
  if (state.lastPublished === undefined) return 'no cycle has published the labels yet';
  return `resource slices: ${state.lastSliceError ?? 'publishing failed'}`;
}

export interface HealthServerOptions {
  /** The agent's detection interval: a detection older than detectionStaleAfterMs of it is unhealthy. */
  readonly intervalMs: number;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** Served on `GET /metrics` (Prometheus text) when given. */
  readonly metrics?: Registry;
  /** More of the process to report (the kubelet plugins' sockets): its fields join the body, and it must be healthy too. */
  readonly extra?: () => { readonly healthy: boolean; readonly fields: Readonly<Record<string, unknown>> };
}

/**
 * `GET /healthz`: 200 with the time of the last successful detection while it is recent
 * (within detectionStaleAfterMs, or the agent just started), 503 otherwise. `GET /readyz`: 200
 * once a cycle has published its labels (or found them unchanged) and neither the last labels'
 * publish nor the last slices' failed, 503 with the reason otherwise: ready says the node's cards
 * reach the cluster. `GET /metrics`: the registry, when one is given.
 *
 * Liveness is the detection alone, on purpose: an agent that cannot reach the API server (or its
 * feature file) is waiting, not stuck, and restarting it would fix nothing, so a kubelet probing
 * /healthz must not kill it for that. A cluster that serves no ResourceSlices (resource.k8s.io/v1
 * off) leaves readiness to the labels; the slices' error is shown in both bodies.
 */
export function startHealthServer(state: AgentState, options: HealthServerOptions): Promise<Server> {
  const { intervalMs, port, host = '0.0.0.0', clock = () => new Date(), metrics, extra } = options;
  const started = clock().getTime();
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/metrics' && metrics) {
      sendMetrics(metrics, res);
      return;
    }
    if (req.method === 'GET' && req.url === '/readyz') {
      const ready = state.lastPublished !== undefined && state.failures === 0 && state.sliceFailures === 0;
      const body = {
        ready,
        reason: ready ? null : readyReason(state),
        lastPublished: state.lastPublished ?? null,
        failures: state.failures,
        sliceFailures: state.sliceFailures,
        lastSliceError: state.lastSliceError ?? null,
      };
      res.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (req.method !== 'GET' || req.url !== '/healthz') {
      res.writeHead(404).end();
      return;
    }
    const last = state.lastDetection ? Date.parse(state.lastDetection) : started;
    const more = extra?.();
    const healthy = clock().getTime() - last <= detectionStaleAfterMs(intervalMs) && (more?.healthy ?? true);
    const body = {
      healthy,
      lastDetection: state.lastDetection ?? null,
      lastPublish: state.lastPublish ?? null,
      lastError: state.lastError ?? null,
      writes: state.writes,
      lastSliceError: state.lastSliceError ?? null,
      sliceWrites: state.sliceWrites,
      deviceOwners: state.ownerDecisions ? Object.fromEntries(state.ownerDecisions) : null,
      ...more?.fields,
    };
    res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
