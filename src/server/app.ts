/**
 * @module The hono app: one POST route per hook of the hook table, health and metrics routes.
 * Handlers only parse, call the pure sync function and serialise — no business logic here.
 */
import type { IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DNS_SUBDOMAIN_MAX, boundText, canonicalize, pathPastDepth, rfc3339Seconds } from '../k8s/index.js';
import { errorBody, schemaErrorBody, statusOf, tooDeepErrorBody, type ErrorBody, type ErrorCode } from './errors.js';
import { hookTable, type HookDefinition } from './hooks.js';
import {
  BUSY_RETRY_AFTER_SECONDS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INFLIGHT_BYTES,
  MAX_BODY_DEPTH,
  SERIAL_ABOVE_CHARACTERS,
} from './limits.js';
import type { HookMetrics } from './metrics.js';
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

function handleHook(definition: HookDefinition, options: AppOptions, processing: Serial) {
  const clock = options.clock ?? (() => new Date());
  // The request time at whole seconds, formatted once per second rather than once per call.
  let second = Number.NaN;
  let now = '';
  const nowText = (): string => {
    const time = Math.floor(clock().getTime() / 1000);
    if (time !== second) {
      second = time;
      now = rfc3339Seconds(new Date(time * 1000));
    }
    return now;
  };
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
    const answer = async (): Promise<Response> => {
      await turn();
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
      await turn();
      const prepared = definition.prepare(body);
      if (!prepared.ok) return sendError(c, 'BadHookRequest', schemaErrorBody(prepared.error));
      await turn();
      const outcome = prepared.run({ now: nowText() });
      if (!outcome.ok) {
        c.header('Retry-After', String(outcome.error.retryAfterSeconds));
        return sendError(c, outcome.error.code, errorBody(outcome.error.code, outcome.error.message));
      }
      countChildren(outcome.response, call, options.metrics);
      await turn();
      return c.body(JSON.stringify(canonicalize(outcome.response, { keepNull: definition.keepNull })), 200, {
        'content-type': 'application/json',
      });
    };
    return big ? processing.run(answer) : answer();
  };
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
 * Builds the hook server. Stateless: any replica answers any call, and Metacontroller retries a
 * failed call, so a restart loses nothing.
 * @example const app = createApp(); await app.request('/healthz') // 200
 */
export function createApp(options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const logger = options.logger ?? SILENT_LOGGER;
  const maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const tooLarge = (c: Context<AppEnv>) =>
    sendError(c, 'PayloadTooLarge', errorBody('PayloadTooLarge', `request body exceeds ${maxSize} bytes (--max-body)`));
  const streamedLimit = bodyLimit({ maxSize, onError: tooLarge });
  // Memory back-pressure: a body of unknown length counts as the largest allowed until it is done.
  const inflight = new InflightBytes(options.maxInflightBytes ?? DEFAULT_MAX_INFLIGHT_BYTES);
  const processing = new Serial();
  /** Takes the body's bytes from the in-flight budget while `serve` runs, or answers 429 (the body read and dropped). */
  async function budgeted(
    c: Context<AppEnv>,
    busy: (() => void) | undefined,
    serve: () => Promise<Response>,
  ): Promise<Response> {
    const declared = declaredLength(c);
    if (declared !== undefined && declared > maxSize) return serve(); // a 413, never read
    const bytes = declared ?? maxSize;
    const before = inflight.inUse;
    if (!inflight.take(bytes)) {
      busy?.();
      await discardBody(c);
      c.header('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
      const own =
        declared === undefined ? `this one, of unknown length, counts as ${maxSize}` : `this one declares ${declared}`;
      return sendError(
        c,
        'ServerBusy',
        errorBody(
          'ServerBusy',
          `${before} bytes of request bodies are in flight and ${own}: over the budget of ` +
            `${inflight.budget} bytes (--max-inflight-bytes); retry after ${BUSY_RETRY_AFTER_SECONDS} s`,
        ),
      );
    }
    options.metrics?.inflight.set(inflight.inUse);
    try {
      return await serve();
    } finally {
      inflight.give(bytes);
      options.metrics?.inflight.set(inflight.inUse);
    }
  }
  /**
   * The size limit: a declared Content-Length (Metacontroller's Go client sends one) is judged from
   * the header alone, as bodyLimit does too, but without first touching `c.req.raw.body`: that would
   * turn the Node adapter's buffered body into a web stream read chunk by chunk, the slowest way to
   * a 100 MB body. A chunked body is counted as it streams in.
   */
  async function limited(c: Context<AppEnv>, serve: () => Promise<Response>): Promise<Response> {
    const declared = declaredLength(c);
    if (declared !== undefined) return declared > maxSize ? tooLarge(c) : serve();
    let answer: Response | undefined;
    const refused = await streamedLimit(c, async () => {
      answer = await serve();
    });
    return refused ?? (answer as Response);
  }
  const internalError = (error: Error, c: Context<AppEnv>): Response => {
    logger.error({ err: { message: error.message, stack: error.stack }, path: c.req.path }, 'unexpected error');
    return sendError(c, 'Internal', errorBody('Internal', 'internal error; see the server log'));
  };

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => c.json({ status: 'ready' }));
  app.get('/metrics', async (c) => {
    if (!options.metrics) return sendError(c, 'NotFound', errorBody('NotFound', 'metrics are not enabled'));
    return c.body(await options.metrics.registry.metrics(), 200, {
      'content-type': options.metrics.registry.contentType,
    });
  });

  for (const { controller, kind: hook, definition } of hookTable()) {
    const path = `/hooks/${controller}/${hook}`;
    const metrics = options.metrics;
    // Label sets bound once per route: an observation then skips hashing its labels on every call.
    const duration = metrics?.duration.labels({ controller, hook });
    const answered = new Map<number, { inc(): void }>();
    const requests = (status: number) => {
      let counter = answered.get(status);
      if (counter === undefined && metrics) {
        counter = metrics.requests.labels({ controller, hook, code: String(status) });
        answered.set(status, counter);
      }
      counter?.inc();
    };
    const busy = metrics && (() => metrics.busy.inc({ controller, hook }));
    const handle = handleHook(definition, options, processing);
    // One handler, not a chain of middleware: the checks run in the order they always did (media
    // type, in-flight budget, size limit, then the hook), without a dispatch and a promise per link.
    app.post(path, async function hookRoute(c) {
      const started = performance.now();
      const call: CallRecord = { controller, hook };
      let response: Response;
      try {
        const problem = notPlainJson(c.req.header('content-type'), c.req.header('content-encoding'));
        response =
          problem !== undefined
            ? sendError(c, 'UnsupportedMediaType', errorBody('UnsupportedMediaType', problem))
            : // The budget before the limit: a chunked body is read whole there, and must count while it is read.
              await budgeted(c, busy, () => limited(c, () => handle(c, call)));
      } catch (error) {
        if (!(error instanceof Error)) throw error;
        response = internalError(error, c);
      }
      const seconds = (performance.now() - started) / 1000;
      const problem = c.get('problem');
      duration?.observe(seconds);
      requests(response.status);
      logger.info(
        {
          ...call,
          controller,
          hook,
          status: response.status,
          durationMs: Math.round(seconds * 1e6) / 1e3,
          ...(problem ? { error: problem } : {}),
        },
        'hook',
      );
      return response;
    });
  }

  app.notFound((c) => sendError(c, 'NotFound', errorBody('NotFound', `no route for ${c.req.method} ${c.req.path}`)));
  app.onError(internalError);
  return app;
}
