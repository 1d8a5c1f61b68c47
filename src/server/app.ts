/**
 * @module The hono app: one POST route per hook of the hook table, health and metrics routes.
 * Handlers only parse, call the pure sync function and serialise — no business logic here.
 */
import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DNS_SUBDOMAIN_MAX, boundText, canonicalize, pathPastDepth, rfc3339Seconds } from '../k8s/index.js';
import { refusal, type CallerRequirements } from './credentials.js';
import { errorBody, schemaErrorBody, statusOf, tooDeepErrorBody, type ErrorBody, type ErrorCode } from './errors.js';
import { hookTable, type HookDefinition, type PreparedHook } from './hooks.js';
import {
  BUSY_RETRY_AFTER_SECONDS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INFLIGHT_BYTES,
  MAX_BODY_DEPTH,
  SERIAL_ABOVE_CHARACTERS,
} from './limits.js';
import type { HookMetrics } from './metrics.js';
import type { JoinPacing } from './join-pacing.js';
import { SILENT_LOGGER, type Logger } from '../runtime/index.js';

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

/** An error answer; its code and (bounded) message also go to the call's log line, so a 400 says why. */
function sendError(c: Context<AppEnv>, code: ErrorCode, body: ErrorBody = errorBody(code, code)): Response {
  c.set('problem', { code: body.error.code, message: body.error.message });
  return c.json(body, statusOf(code));
}

interface CallRecord {
  readonly controller: string;
  readonly hook: string;
  parent?: string;
  children?: number;
  /** How long a paced sync (a shard's, the chain's) was held before it was answered. */
  heldMs?: number;
}

/** The error a call answered with, for its log line. */
type AppEnv = { Variables: { problem: { readonly code: ErrorCode; readonly message: string } } };

function parentNameOf(body: unknown): string | undefined {
  const name = (body as { parent?: { metadata?: { name?: unknown } } } | null)?.parent?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}

function countChildren(response: object, record: CallRecord, metrics: HookMetrics | undefined): void {
  const list =
    (response as { children?: unknown[]; attachments?: unknown[] }).children ??
    (response as { attachments?: unknown[] }).attachments;
  if (!Array.isArray(list)) return;
  record.children = list.length;
  if (metrics === undefined) return;
  // One increment per kind, not per child: a counter hashes its labels on every call.
  const kinds = new Map<string, number>();
  for (const child of list) {
    const kind = String((child as { kind?: unknown }).kind);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  for (const [kind, count] of kinds) metrics.children.inc({ controller: record.controller, kind }, count);
}

/**
 * Why a request's headers say its body is not plain JSON, or undefined when they say it is:
 * `application/json` (charset utf-8 if named; Metacontroller sends `application/json`) with no
 * content coding. Anything else is refused before a byte of the body is read.
 */
function notPlainJson(contentType: string | undefined, contentEncoding: string | undefined): string | undefined {
  if (contentEncoding === undefined && contentType === 'application/json') return undefined; // what Metacontroller sends
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity')
    return `content-encoding "${contentEncoding}" is not supported: send the body unencoded`;
  if (contentType === undefined || contentType.trim() === '') return 'content-type is missing: send application/json';
  const [type = '', ...parameters] = contentType.split(';').map((part) => part.trim().toLowerCase());
  const charset = parameters
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"(.*)"$/, '$1');
  if (type === 'application/json' && (charset === undefined || charset === 'utf-8')) return undefined;
  return `content-type "${contentType}" is not application/json`;
}

/**
 * Runs tasks one after another. Parsing and answering a big request blocks the event loop for up
 * to a second per phase; run side by side, two requests' phases would follow each other with no
 * I/O in between (every ready continuation runs before the next poll), and /healthz would wait for
 * all of them. One at a time, with a turn of the event loop between phases, it waits for one phase.
 */
class Serial {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/** The request time at whole seconds, formatted once per second rather than once per call. */
class RequestTime {
  readonly #clock: () => Date;
  #second = Number.NaN;
  #text = '';

  constructor(clock: () => Date = () => new Date()) {
    this.#clock = clock;
  }

  now(): string {
    const time = Math.floor(this.#clock().getTime() / 1000);
    if (time !== this.#second) {
      this.#second = time;
      this.#text = rfc3339Seconds(new Date(time * 1000));
    }
    return this.#text;
  }
}

/** What answering a hook takes besides the call: the hook, the request time, and a turn before each phase. */
interface HookRun {
  readonly definition: HookDefinition;
  readonly time: RequestTime;
  readonly metrics: HookMetrics | undefined;
  readonly turn: () => Promise<void>;
  readonly pacing: JoinPacing | undefined;
}

type HookHandler = (c: Context<AppEnv>, call: CallRecord) => Promise<Response>;

function handleHook(
  definition: HookDefinition,
  time: RequestTime,
  metrics: HookMetrics | undefined,
  processing: Serial,
  pacing: JoinPacing | undefined,
): HookHandler {
  /** Answers one call; what the log line reports of it (parent, children) goes into `call`. */
  return async function hookHandler(c: Context<AppEnv>, call: CallRecord): Promise<Response> {
    let text: string;
    try {
      text = await c.req.text(); // I/O: bodies are read side by side
    } catch (error) {
      return sendError(
        c,
        'MalformedJson',
        errorBody('MalformedJson', `request body is unreadable: ${(error as Error).message}`),
      );
    }
    // A big body is handled one at a time, with a turn of the event loop before each phase
    // (/healthz and the other connections go first); a small one at once: it takes milliseconds.
    const big = text.length > SERIAL_ABOVE_CHARACTERS;
    const turn = big ? () => nextTurn() : async () => {};
    const run: HookRun = { definition, time, metrics, turn, pacing };
    const inTurn = <T>(task: () => Promise<T>): Promise<T> => (big ? processing.run(task) : task());
    const first = await inTurn(async () => {
      const prepared = await prepareHook(c, call, text, run);
      if (prepared instanceof Response) return prepared;
      const arrival = pacing && arrivalOf(prepared, definition, pacing, time.now());
      if (arrival === undefined || pacing === undefined || pacing.holdMs(arrival) === 0)
        return answerHook(c, call, prepared, run);
      return { prepared, arrival, pacing };
    });
    if (first instanceof Response) return first;
    // A paced sync waits outside the one-at-a-time queue: the others go on meanwhile.
    call.heldMs = Math.round(await first.pacing.hold(first.arrival));
    return inTurn(() => answerHook(c, call, first.prepared, run));
  };
}

/** How long what a parent summarises has been arriving: read from its request, or the joins this server saw. */
function arrivalOf(
  prepared: Extract<PreparedHook, { ok: true }>,
  definition: HookDefinition,
  pacing: JoinPacing,
  now: string,
): number | undefined {
  return prepared.arrival(now) ?? (definition.pacedByJoins ? pacing.joinArrival() : undefined);
}

/** Parses and checks one hook body: the hook's runner bound to it, or the error answer. */
async function prepareHook(
  c: Context<AppEnv>,
  call: CallRecord,
  text: string,
  run: HookRun,
): Promise<Response | Extract<PreparedHook, { ok: true }>> {
  await run.turn();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return sendError(
      c,
      'MalformedJson',
      errorBody('MalformedJson', `request body is not JSON: ${(error as Error).message}`),
    );
  }
  // Every part bounded at once, before anything walks it. JSON.parse is iterative: 100,000 levels
  // cost it about what a flat body of as many arrays does.
  const tooDeep = pathPastDepth(body, MAX_BODY_DEPTH);
  if (tooDeep !== undefined) return sendError(c, 'BadHookRequest', tooDeepErrorBody(tooDeep, MAX_BODY_DEPTH));
  const parent = parentNameOf(body);
  // Bounded: the log line must not grow with a hostile name (a real one is at most 253 characters).
  if (parent !== undefined) call.parent = boundText(parent, DNS_SUBDOMAIN_MAX);
  await run.turn();
  const prepared = run.definition.prepare(body);
  if (!prepared.ok) return sendError(c, 'BadHookRequest', schemaErrorBody(prepared.error));
  return prepared;
}

/** Runs a prepared hook and serialises its answer. */
async function answerHook(
  c: Context<AppEnv>,
  call: CallRecord,
  prepared: Extract<PreparedHook, { ok: true }>,
  run: HookRun,
): Promise<Response> {
  await run.turn();
  const outcome = prepared.run({ now: run.time.now() });
  if (!outcome.ok) {
    c.header('Retry-After', String(outcome.error.retryAfterSeconds));
    return sendError(c, outcome.error.code, errorBody(outcome.error.code, outcome.error.message));
  }
  if (run.pacing && prepared.joins(outcome.response)) run.pacing.noteJoin();
  countChildren(outcome.response, call, run.metrics);
  await run.turn();
  return c.body(JSON.stringify(canonicalize(outcome.response, { keepNull: run.definition.keepNull })), 200, {
    'content-type': 'application/json',
  });
}

/**
 * Bytes of request bodies being read or processed, against a budget. A request alone is always
 * taken (`--max-body` bounds it), so a budget below the largest body cannot starve it.
 */
class InflightBytes {
  inUse = 0;
  constructor(readonly budget: number) {}
  take(bytes: number): boolean {
    if (this.inUse > 0 && this.inUse + bytes > this.budget) return false;
    this.inUse += bytes;
    return true;
  }
  give(bytes: number): void {
    this.inUse -= bytes;
  }
}

/**
 * Reads a request body to its end and drops it (nothing is kept). A refusal sent while the client
 * is still writing, followed by a close with unread data, is a TCP reset, and a reset can take the
 * refusal with it: the client then sees a broken connection instead of a 429 and its Retry-After.
 */
async function discardBody(c: Context<AppEnv>): Promise<void> {
  // Behind the Node adapter: let the socket's data flow to nowhere (no web stream, no chunk promises).
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming !== undefined) {
    if (incoming.readableEnded || incoming.destroyed) return;
    await new Promise<void>((resolve) => {
      incoming.once('end', resolve).once('close', resolve).resume();
    });
    return;
  }
  const reader = c.req.raw.body?.getReader();
  if (reader === undefined) return;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
}

/** The body length a request declares, or undefined when it streams without one (chunked). */
function declaredLength(c: Context<AppEnv>): number | undefined {
  const declared = c.req.header('content-length');
  if (declared === undefined || c.req.header('transfer-encoding') !== undefined) return undefined;
  return Number.parseInt(declared, 10);
}

/**
 * What a request body may cost: at most `maxSize` bytes (else 413), and room in the in-flight
 * budget (else 429 + Retry-After).
 */
class BodyGate {
  readonly #maxSize: number;
  // Memory back-pressure: a body of unknown length counts as the largest allowed until it is done.
  readonly #inflight: InflightBytes;
  readonly #streamedLimit: MiddlewareHandler<AppEnv>;
  readonly #metrics: HookMetrics | undefined;

  constructor(options: AppOptions) {
    this.#maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.#inflight = new InflightBytes(options.maxInflightBytes ?? DEFAULT_MAX_INFLIGHT_BYTES);
    this.#streamedLimit = bodyLimit({ maxSize: this.#maxSize, onError: (c) => this.#tooLarge(c) });
    this.#metrics = options.metrics;
  }

  /** Takes the body's bytes from the in-flight budget while `serve` runs, or answers 429 (the body read and dropped). */
  async budgeted(
    c: Context<AppEnv>,
    busy: (() => void) | undefined,
    serve: () => Promise<Response>,
  ): Promise<Response> {
    const declared = declaredLength(c);
    if (declared !== undefined && declared > this.#maxSize) return serve(); // a 413, never read
    const bytes = declared ?? this.#maxSize;
    const before = this.#inflight.inUse;
    if (!this.#inflight.take(bytes)) {
      busy?.();
      return this.#refuseBusy(c, declared, before);
    }
    this.#metrics?.inflight.set(this.#inflight.inUse);
    try {
      return await serve();
    } finally {
      this.#inflight.give(bytes);
      this.#metrics?.inflight.set(this.#inflight.inUse);
    }
  }

  /**
   * The size limit: a declared Content-Length (Metacontroller's Go client sends one) is judged from
   * the header alone, as bodyLimit does too, but without first touching `c.req.raw.body`: that would
   * turn the Node adapter's buffered body into a web stream read chunk by chunk, the slowest way to
   * a 100 MB body. A chunked body is counted as it streams in.
   */
  async limited(c: Context<AppEnv>, serve: () => Promise<Response>): Promise<Response> {
    const declared = declaredLength(c);
    if (declared !== undefined) return declared > this.#maxSize ? this.#tooLarge(c) : serve();
    let answer: Response | undefined;
    const refused = await this.#streamedLimit(c, async () => {
      answer = await serve();
    });
    return refused ?? (answer as Response);
  }

  #tooLarge(c: Context<AppEnv>): Response {
    const message = `request body exceeds ${this.#maxSize} bytes (--max-body)`;
    return sendError(c, 'PayloadTooLarge', errorBody('PayloadTooLarge', message));
  }

  /** The 429 of a full budget, after the body is read and dropped. */
  async #refuseBusy(c: Context<AppEnv>, declared: number | undefined, before: number): Promise<Response> {
    await discardBody(c);
    c.header('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    const own =
      declared === undefined
        ? `this one, of unknown length, counts as ${this.#maxSize}`
        : `this one declares ${declared}`;
    return sendError(
      c,
      'ServerBusy',
      errorBody(
        'ServerBusy',
        `${before} bytes of request bodies are in flight and ${own}: over the budget of ` +
          `${this.#inflight.budget} bytes (--max-inflight-bytes); retry after ${BUSY_RETRY_AFTER_SECONDS} s`,
      ),
    );
  }
}

/** One route's metrics, label sets bound once: an observation then skips hashing its labels on every call. */
class RouteMetrics {
  readonly #metrics: HookMetrics | undefined;
  readonly #labels: { readonly controller: string; readonly hook: string };
  readonly #duration: { observe(seconds: number): void } | undefined;
  readonly #requests = new Map<number, { inc(): void }>();
  /** Counts a 429 of the in-flight budget; undefined without metrics. */
  readonly busy: (() => void) | undefined;

  constructor(metrics: HookMetrics | undefined, controller: string, hook: string) {
    this.#metrics = metrics;
    this.#labels = { controller, hook };
    this.#duration = metrics?.duration.labels({ controller, hook });
    this.busy = metrics && (() => metrics.busy.inc({ controller, hook }));
  }

  /** One call answered with `status` after `seconds`. */
  answered(status: number, seconds: number): void {
    this.#duration?.observe(seconds);
    this.#requestCounter(status)?.inc();
  }

  #requestCounter(status: number): { inc(): void } | undefined {
    let counter = this.#requests.get(status);
    if (counter === undefined && this.#metrics) {
      counter = this.#metrics.requests.labels({ ...this.#labels, code: String(status) });
      this.#requests.set(status, counter);
    }
    return counter;
  }
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
 * Refuses a caller without the credentials with 401, before anything else is looked at (route,
 * media type, body): it learns nothing but that it needs them. The connection is closed after the
 * answer, so an unread body is not waited for.
 */
function callerCheck(
  callers: () => CallerRequirements,
  logger: Logger,
  metrics: HookMetrics | undefined,
): MiddlewareHandler<AppEnv> {
  return async function checkCaller(c, next) {
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket as
      (IncomingMessage['socket'] & { authorized?: boolean }) | undefined;
    const why = refusal(
      { authorization: c.req.header('authorization'), verifiedClientCertificate: socket?.authorized === true },
      callers(),
    );
    if (why === undefined) return next();
    metrics?.refused.inc({ reason: why });
    logger.warn({ path: c.req.path, remoteAddress: socket?.remoteAddress, reason: why }, 'caller refused');
    c.header('WWW-Authenticate', 'Bearer');
    c.header('Connection', 'close');
    return sendError(c, 'Unauthorized', errorBody('Unauthorized', 'credentials required'));
  };
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
