/**
 * @module The node agent loop: detect every interval, build the labels, publish only on change.
 * Nothing here crashes the process: a failed detection or API call is logged, reported on the
 * health endpoint and retried with backoff.
 */
import { createServer, type Server } from 'node:http';
import type { DetectResult } from '../../native/index.js';
import { labelsFromDetection, sameLabels, screenDetection, type Labels } from './labels.js';
import type { Publisher } from './publishers.js';

export interface AgentLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface AgentOptions {
  readonly detect: () => Promise<DetectResult>;
  readonly publisher: Publisher;
  readonly intervalMs: number;
  readonly logger: AgentLogger;
  readonly clock?: () => Date;
}

/** What the agent knows about itself; the health endpoint shows it. */
export interface AgentState {
  published?: Labels;
  lastDetection?: string;
  lastPublish?: string;
  lastError?: string;
  failures: number;
  writes: number;
}

export type CycleResult = 'published' | 'unchanged' | 'failed';

export function createAgentState(): AgentState {
  return { failures: 0, writes: 0 };
}

/** One detect → labels → publish pass. */
export async function runCycle(state: AgentState, options: AgentOptions): Promise<CycleResult> {
  const now = () => (options.clock ?? (() => new Date()))().toISOString();
  try {
    const result = screenDetection(await options.detect());
    state.lastDetection = now();
    for (const error of result.errors) {
      if (error.code !== 'LibraryNotFound') options.logger.warn({ ...error }, 'device detection error');
    }
    // After a restart, compare with what is already published instead of rewriting it.
    state.published ??= await options.publisher.read();
    const labels = labelsFromDetection(result, state.published);
    if (sameLabels(labels, state.published)) {
      state.failures = 0;
      delete state.lastError;
      return 'unchanged';
    }
    await options.publisher.write(labels);
    state.published = labels;
    state.lastPublish = now();
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
    options.logger.error({ err: state.lastError, failures: state.failures }, 'agent cycle failed; will retry');
    return 'failed';
  }
}

/** Delay before the next cycle: the interval, or an exponential backoff (1 s, 2 s, 4 s …) after failures. */
export function nextDelayMs(state: AgentState, intervalMs: number): number {
  if (state.failures === 0) return intervalMs;
  return Math.min(intervalMs, 1000 * 2 ** Math.min(state.failures - 1, 20));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    // The listener goes with the timer: one left behind per cycle would pile up on the signal for good.
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs cycles until `signal` aborts (SIGTERM), then resolves. */
export async function runAgent(state: AgentState, options: AgentOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await runCycle(state, options);
    await sleep(nextDelayMs(state, options.intervalMs), signal);
  }
}

export interface HealthServerOptions {
  /** The agent's detection interval: a detection older than three of them is unhealthy. */
  readonly intervalMs: number;
  /** 0 picks a free port (tests). */
  readonly port: number;
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** @default () => new Date() */
  readonly clock?: () => Date;
}

/**
 * `GET /healthz`: 200 with the time of the last successful detection while it is recent
 * (within three intervals, or the agent just started), 503 otherwise.
 */
export function startHealthServer(state: AgentState, options: HealthServerOptions): Promise<Server> {
  const { intervalMs, port, host = '0.0.0.0', clock = () => new Date() } = options;
  const started = clock().getTime();
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/healthz') {
      res.writeHead(404).end();
      return;
    }
    const last = state.lastDetection ? Date.parse(state.lastDetection) : started;
    const healthy = clock().getTime() - last <= 3 * intervalMs + 30_000;
    const body = {
      healthy,
      lastDetection: state.lastDetection ?? null,
      lastPublish: state.lastPublish ?? null,
      lastError: state.lastError ?? null,
      writes: state.writes,
    };
    res.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
