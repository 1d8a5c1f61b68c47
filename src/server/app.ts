/**
 * @module The hono app: one POST route per hook of the hook table, health and metrics routes.
 * Handlers only parse, call the pure sync function and serialise — no business logic here.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DNS_SUBDOMAIN_MAX, boundText, canonicalize, rfc3339Seconds } from '../k8s/index.js';
import { errorBody, schemaErrorBody, statusOf, type ErrorBody, type ErrorCode } from './errors.js';
import { hookTable, type HookDefinition } from './hooks.js';
import type { HookMetrics } from './metrics.js';

/** The logging surface we use; pino's logger satisfies it. */
export interface HookLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface AppOptions {
  /** Largest accepted request body in bytes; bigger → 413. @default 256 MiB */
  readonly maxBodyBytes?: number;
  readonly logger?: HookLogger;
  readonly metrics?: HookMetrics;
  /** The request time handed to sync functions as `now`. @default the system clock */
  readonly clock?: () => Date;
}

export const DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024;
const SILENT: HookLogger = { info: () => {}, error: () => {} };

function sendError(c: Context<AppEnv>, code: ErrorCode, body: ErrorBody = errorBody(code, code)): Response {
  return c.json(body, statusOf(code));
}

interface CallRecord {
  readonly controller: string;
  readonly hook: string;
  parent?: string;
  children?: number;
}

/** Per-request values the handler leaves for the observing middleware (log line, metrics). */
type AppEnv = { Variables: { call: CallRecord } };

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
  for (const child of list)
    metrics?.children.inc({ controller: record.controller, kind: String((child as { kind?: unknown }).kind) });
}

/**
 * Why a request's headers say its body is not plain JSON, or undefined when they say it is:
 * `application/json` (charset utf-8 if named; Metacontroller sends `application/json`) with no
 * content coding. Anything else is refused before a byte of the body is read.
 */
function notPlainJson(contentType: string | undefined, contentEncoding: string | undefined): string | undefined {
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

function handleHook(definition: HookDefinition, record: Omit<CallRecord, 'parent' | 'children'>, options: AppOptions) {
  const clock = options.clock ?? (() => new Date());
  return async function hookHandler(c: Context<AppEnv>): Promise<Response> {
    const call: CallRecord = { ...record };
    c.set('call', call);
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch (error) {
      return sendError(
        c,
        'MalformedJson',
        errorBody('MalformedJson', `request body is not JSON: ${(error as Error).message}`),
      );
    }
    const parent = parentNameOf(body);
    // Bounded: the log line must not grow with a hostile name (a real one is at most 253 characters).
    if (parent !== undefined) call.parent = boundText(parent, DNS_SUBDOMAIN_MAX);
    const prepared = definition.prepare(body);
    if (!prepared.ok) return sendError(c, 'BadHookRequest', schemaErrorBody(prepared.error));
    const outcome = prepared.run({ now: rfc3339Seconds(clock()) });
    if (!outcome.ok) {
      c.header('Retry-After', String(outcome.error.retryAfterSeconds));
      return sendError(c, outcome.error.code, errorBody(outcome.error.code, outcome.error.message));
    }
    countChildren(outcome.response, call, options.metrics);
    return c.body(JSON.stringify(canonicalize(outcome.response, definition.keepNull)), 200, {
      'content-type': 'application/json',
    });
  };
}

/**
 * Builds the hook server. Stateless: any replica answers any call, and Metacontroller retries a
 * failed call, so a restart loses nothing.
 * @example const app = createApp(); await app.request('/healthz') // 200
 */
export function createApp(options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const logger = options.logger ?? SILENT;
  const maxSize = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const tooLarge = (c: Context<AppEnv>) =>
    sendError(c, 'PayloadTooLarge', errorBody('PayloadTooLarge', `request body exceeds ${maxSize} bytes (--max-body)`));
  const streamedLimit = bodyLimit({ maxSize, onError: tooLarge });
  // A declared Content-Length (Metacontroller's Go client sends one) is judged from the header alone,
  // as bodyLimit does too, but without first touching `c.req.raw.body`: that would turn the Node
  // adapter's buffered body into a web stream read chunk by chunk, the slowest way to a 100 MB body.
  // A chunked body is counted as it streams in.
  const limit: MiddlewareHandler<AppEnv> = async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared === undefined || c.req.header('transfer-encoding') !== undefined) return streamedLimit(c, next);
    return Number.parseInt(declared, 10) > maxSize ? tooLarge(c) : next();
  };

  const plainJson: MiddlewareHandler<AppEnv> = async (c, next) => {
    const problem = notPlainJson(c.req.header('content-type'), c.req.header('content-encoding'));
    return problem === undefined
      ? next()
      : sendError(c, 'UnsupportedMediaType', errorBody('UnsupportedMediaType', problem));
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
    app.post(
      path,
      async function observeHook(c, next) {
        const started = performance.now();
        await next();
        const seconds = (performance.now() - started) / 1000;
        const call = c.get('call') ?? { controller, hook };
        options.metrics?.duration.observe({ controller, hook }, seconds);
        options.metrics?.requests.inc({ controller, hook, code: String(c.res.status) });
        logger.info(
          { ...call, controller, hook, status: c.res.status, durationMs: Math.round(seconds * 1e6) / 1e3 },
          'hook',
        );
      },
      plainJson,
      limit,
      handleHook(definition, { controller, hook }, options),
    );
  }

  app.notFound((c) => sendError(c, 'NotFound', errorBody('NotFound', `no route for ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => {
    logger.error({ err: { message: error.message, stack: error.stack }, path: c.req.path }, 'unexpected error');
    return sendError(c, 'Internal', errorBody('Internal', 'internal error; see the server log'));
  });
  return app;
}
