/**
 * @module The hono app: one POST route per hook of the hook table, health and metrics routes.
 * Handlers only parse, call the pure sync function and serialise — no business logic here. Each
 * concern has its file: the body's cost (body-gate.ts), one-at-a-time processing (serial.ts), the
 * request time (request-time.ts), a route's metrics (route-metrics.ts), the caller check
 * (caller-check.ts), a hook call (hook-handler.ts) and its pacing (join-pacing.ts).
 */
import { Hono, type Context } from 'hono';
import { SILENT_LOGGER, type Logger } from '../runtime/index.js';
import { sendError, type AppEnv, type CallRecord } from './app-env.js';
import { BodyGate, notPlainJson } from './body-gate.js';
import { callerCheck } from './caller-check.js';
import type { CallerRequirements } from './credentials.js';
import { errorBody } from './errors.js';
import { handleHook, type HookHandler } from './hook-handler.js';
import { hookTable } from './hooks.js';
import type { JoinPacing } from './join-pacing.js';
import type { HookMetrics } from './metrics.js';
import { RequestTime } from './request-time.js';
import { RouteMetrics } from './route-metrics.js';
import { Serial } from './serial.js';

export interface AppOptions {
  /** Largest accepted request body in bytes; bigger → 413. @default 256 MiB */
  readonly maxBodyBytes?: number;
  /**
   * Bytes of request bodies read and processed at once; a request past it → 429 + Retry-After
   * (a request alone is always taken, up to `maxBodyBytes`). @default the budget of a 2 GiB container
   */
  readonly maxInflightBytes?: number;
  readonly logger?: Logger;
  readonly metrics?: HookMetrics;
  /** The request time handed to sync functions as `now`. @default the system clock */
  readonly clock?: () => Date;
  /**
   * What every caller must show (read on each request: the credentials are reloaded when their
   * files change); a caller without it gets 401 on every path. @default anyone may call
   */
  readonly callers?: () => CallerRequirements;
  /** Serve /healthz, /readyz and /metrics here too. @default true (false: they have their own port, {@link createServiceApp}) */
  readonly serviceRoutes?: boolean;
  /** Holds shard and chain syncs while Nodes join in numbers (src/server/join-pacing.ts). @default none: every hook answered at once */
  readonly pacing?: JoinPacing;
}

/** What every hook route of one app shares. */
interface RouteShared {
  readonly logger: Logger;
  readonly gate: BodyGate;
  readonly internalError: (error: Error, c: Context<AppEnv>) => Response;
}

/** The route of one hook: checks, answer, then its metrics and its log line. */
function createHookRoute(
  controller: string,
  hook: string,
  handle: HookHandler,
  metrics: RouteMetrics,
  shared: RouteShared,
) {
  return async function hookRoute(c: Context<AppEnv>): Promise<Response> {
    const started = performance.now();
    const call: CallRecord = { controller, hook };
    let response: Response;
    try {
      response = await checked(c, shared.gate, metrics.busy, () => handle(c, call));
    } catch (error) {
      if (!(error instanceof Error)) throw error;
      response = shared.internalError(error, c);
    }
    const seconds = (performance.now() - started) / 1000;
    metrics.answered(response.status, seconds);
    logCall(shared.logger, call, response.status, seconds, c.get('problem'));
    return response;
  };
}

/**
 * One handler, not a chain of middleware: the checks run in one fixed order (media type,
 * in-flight budget, size limit, then the hook), without a dispatch and a promise per link.
 */
function checked(
  c: Context<AppEnv>,
  gate: BodyGate,
  busy: (() => void) | undefined,
  answer: () => Promise<Response>,
): Promise<Response> | Response {
  const problem = notPlainJson(c.req.header('content-type'), c.req.header('content-encoding'));
  if (problem !== undefined) return sendError(c, 'UnsupportedMediaType', errorBody('UnsupportedMediaType', problem));
  // The budget before the limit: a chunked body is read whole there, and must count while it is read.
  return gate.budgeted(c, busy, () => gate.limited(c, answer));
}

function logCall(
  logger: Logger,
  call: CallRecord,
  status: number,
  seconds: number,
  problem: AppEnv['Variables']['problem'] | undefined,
): void {
  const durationMs = Math.round(seconds * 1e6) / 1e3;
  logger.info({ ...call, status, durationMs, ...(problem ? { error: problem } : {}) }, 'hook');
}

/**
 * Builds the hook server. Stateless: any replica answers any call, and Metacontroller retries a
 * failed call, so a restart loses nothing.
 * @example const app = createApp(); await app.request('/healthz') // 200
 */
export function createApp(options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const logger = options.logger ?? SILENT_LOGGER;
  const internalError = (error: Error, c: Context<AppEnv>): Response => {
    logger.error({ err: { message: error.message, stack: error.stack }, path: c.req.path }, 'unexpected error');
    return sendError(c, 'Internal', errorBody('Internal', 'internal error; see the server log'));
  };
  if (options.callers) app.use('*', callerCheck(options.callers, logger, options.metrics));
  if (options.serviceRoutes ?? true) addServiceRoutes(app, options.metrics);
  const shared: RouteShared = { logger, gate: new BodyGate(options), internalError };
  const time = new RequestTime(options.clock);
  const processing = new Serial();
  for (const { controller, kind: hook, definition } of hookTable()) {
    const handle = handleHook(definition, time, options.metrics, processing, options.pacing);
    const metrics = new RouteMetrics(options.metrics, controller, hook);
    app.post(`/hooks/${controller}/${hook}`, createHookRoute(controller, hook, handle, metrics, shared));
  }
  app.notFound((c) => sendError(c, 'NotFound', errorBody('NotFound', `no route for ${c.req.method} ${c.req.path}`)));
  app.onError(internalError);
  return app;
}

/**
 * Health and metrics alone, for their own port (`serve --health-port`): probes and Prometheus
 * reach them without the hooks' credentials, and nothing of the hooks is served there.
 * @example const app = createServiceApp(); await app.request('/readyz') // 200
 */
export function createServiceApp(metrics?: HookMetrics): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  addServiceRoutes(app, metrics);
  app.notFound((c) => sendError(c, 'NotFound', errorBody('NotFound', `no route for ${c.req.method} ${c.req.path}`)));
  return app;
}

/** Health and metrics. */
function addServiceRoutes(app: Hono<AppEnv>, metrics: HookMetrics | undefined): void {
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => c.json({ status: 'ready' }));
  app.get('/metrics', async (c) => {
    if (!metrics) return sendError(c, 'NotFound', errorBody('NotFound', 'metrics are not enabled'));
    return c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType });
  });
}
