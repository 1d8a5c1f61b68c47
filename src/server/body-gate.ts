/** @module What a request body may cost before it is read: its size (413), the in-flight budget (429). */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { sendError, type AppEnv } from './app-env.js';
import { errorBody } from './errors.js';
import { InflightBytes } from './inflight-bytes.js';
import { BUSY_RETRY_AFTER_SECONDS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_INFLIGHT_BYTES } from './limits.js';
import type { HookMetrics } from './metrics.js';

/** The limits of {@link BodyGate}: `AppOptions`' own. */
export interface BodyLimits {
  readonly maxBodyBytes?: number;
  readonly maxInflightBytes?: number;
  readonly metrics?: HookMetrics;
}

/**
 * Why a request's headers say its body is not plain JSON, or undefined when they say it is:
 * `application/json` (charset utf-8 if named; Metacontroller sends `application/json`) with no
 * content coding. Anything else is refused before a byte of the body is read.
 */
export function notPlainJson(contentType: string | undefined, contentEncoding: string | undefined): string | undefined {
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
export class BodyGate {
  readonly #maxSize: number;
  // Memory back-pressure: a body of unknown length counts as the largest allowed until it is done.
  readonly #inflight: InflightBytes;
  readonly #streamedLimit: MiddlewareHandler<AppEnv>;
  readonly #metrics: HookMetrics | undefined;

  constructor(options: BodyLimits) {
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
