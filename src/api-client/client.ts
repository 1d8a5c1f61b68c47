/**
 * @module A small API-server client shared by the agent and the admission checker: credentials
 * from @kubernetes/client-node's KubeConfig (in-cluster or KUBECONFIG), requests made here so
 * every patch carries an explicit content type (client-node's generated patch calls fail with 415
 * without one) and a watch is a plain newline-delimited JSON stream we can time out and abort.
 */
import { existsSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import path from 'node:path';
// Type only: the client is imported when a kubeconfig is loaded, so that the commands that never
// talk to a cluster (render, detect, kueue-config, serve) run on a Node.js it does not load on.
import type { KubeConfig } from '@kubernetes/client-node';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly method: string,
    readonly path: string,
    body: string,
    /**
     * The answer's `Retry-After`, in ms: API Priority and Fairness sends it with 429, a server
     * shedding load with 503. Retries wait at least this long (retryDelayMs in src/runtime).
     */
    readonly retryAfterMs?: number,
  ) {
    super(
      `${method} ${path}: HTTP ${status}${retryAfterMs === undefined ? '' : ` (retry after ${retryAfterMs / 1000} s)`}: ${body.slice(0, 300)}`,
    );
  }
}

/** The longest Retry-After honoured: a header asking for an hour must not park a process for an hour. */
export const MAX_RETRY_AFTER_MS = 300_000;

/**
 * A `Retry-After` header in ms: delay-seconds or an HTTP date (RFC 9110 §10.2.3), at most
 * MAX_RETRY_AFTER_MS; undefined when absent or unreadable.
 * @example retryAfterMs('3') // 3000
 */
export function retryAfterMs(header: string | undefined, now: number = Date.now()): number | undefined {
  const text = header?.trim();
  if (!text) return undefined;
  // An HTTP date ends in GMT; anything else Date.parse would read ('1.5', '-1') is no date here.
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : / GMT$/.test(text) ? Date.parse(text) - now : Number.NaN;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * Whether an error says the API server cannot serve anyone now (unreachable, timed out, 429, 5xx),
 * not that this one request was refused: after it, the other requests of the same attempt would
 * fail the same way and only add to the load.
 */
export function serverUnavailable(error: unknown): boolean {
  if (error instanceof ApiError) return error.status === 429 || error.status >= 500;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && UNREACHABLE_CODES.has(code);
}

/** Socket errors that say the server is not there (a file the feature-file publisher cannot write is not one). */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'EPIPE',
]);

export type PatchType = 'application/merge-patch+json' | 'application/apply-patch+yaml';

/** One line of a watch stream: `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR` (object is a Status). */
export interface WatchEvent {
  readonly type: string;
  readonly object: unknown;
}

export interface WatchOptions {
  readonly resourceVersion: string;
  /**
   * The server ends the watch after this long, and the client gives up on a silent socket 30 s
   * later, so a half-open connection cannot look like a quiet, healthy watch for ever.
   * @default 300
   */
  readonly timeoutSeconds?: number;
  /** Aborting ends the watch; the promise then resolves. */
  readonly signal?: AbortSignal;
  /** Called once the server answered 200: the stream is open. */
  readonly onOpen?: () => void;
}

export interface KubeApi {
  /** GET a path; `undefined` on 404. */
  get(path: string): Promise<unknown>;
  patch(path: string, body: unknown, contentType: PatchType): Promise<unknown>;
  /** POST an object to a collection; 409 (AlreadyExists) and 422 reject as ApiError. */
  create(path: string, body: unknown): Promise<unknown>;
  /** PUT an object; with `metadata.resourceVersion` set, a stale write rejects with 409 (Conflict). */
  replace(path: string, body: unknown): Promise<unknown>;
  /**
   * DELETE an object, with a resourceVersion precondition when one is given (409 when it moved);
   * an object already gone resolves.
   */
  remove(path: string, resourceVersion?: string): Promise<void>;
  /**
   * GETs a collection page by page (following `continue` tokens; 404 is an error: the resource is
   * not served) and hands each item to `onItem` as its page arrives, keeping none: a caller that
   * keeps less than the raw object (the checker's slim stores) never holds the whole raw
   * collection at once. Resolves with the resourceVersion to watch from.
   */
  listEach(path: string, onItem: (item: unknown) => void): Promise<string>;
  /**
   * Streams a watch of a collection from `resourceVersion`, calling `onEvent` per event. Resolves
   * when the server ends the stream or `signal` aborts; rejects on a non-2xx answer (ApiError), a
   * broken connection or a line that is not JSON.
   */
  watch(path: string, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<void>;
}

/**
 * The oldest Node.js the Kubernetes client loads on: @kubernetes/client-node 2 imports undici 8
 * (`engines: >=22.19.0`), which fails at import on older ones (Node 20 has no zstd in zlib).
 * `test/kube/client.test.ts` checks this against the installed undici.
 */
export const KUBE_CLIENT_MIN_NODE = '22.19.0';

/** Whether the Kubernetes client loads on Node.js `version` (`process.versions.node` by default). */
export function kubeClientLoads(version: string = process.versions.node): boolean {
  const parts = (text: string) => text.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const [major = 0, minor = 0, patch = 0] = parts(version);
  const [minMajor = 0, minMinor = 0, minPatch = 0] = parts(KUBE_CLIENT_MIN_NODE);
  if (major !== minMajor) return major > minMajor;
  if (minor !== minMinor) return minor > minMinor;
  return patch >= minPatch;
}

/** Where a Pod's service account is mounted (what the client's in-cluster configuration reads). */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads the kube config: an explicit file, else KUBECONFIG / ~/.kube/config / in-cluster, in the
 * client's order. Where none of them exists the client would fall back to `http://localhost:8080`
 * and every request would fail for ever; that, and a plain-`http:` server the client refuses, is
 * an error here instead, with one line to act on.
 */
export async function loadKubeConfig(file?: string): Promise<KubeConfig> {
  if (!kubeClientLoads())
    throw new Error(`the Kubernetes client needs Node.js >= ${KUBE_CLIENT_MIN_NODE} (this is ${process.version})`);
  const { KubeConfig, findHomeDir } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  const source = file
    ? `--kubeconfig ${file}`
    : process.env['KUBECONFIG']
      ? `KUBECONFIG=${process.env['KUBECONFIG']}`
      : undefined;
  if (source === undefined && !defaultConfigExists(findHomeDir()))
    throw new Error(
      'no Kubernetes cluster configured: pass --kubeconfig FILE, set KUBECONFIG, write ~/.kube/config, or run in a Pod',
    );
  try {
    if (file) kc.loadFromFile(file);
    else kc.loadFromDefault();
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new Error(`cannot read the kubeconfig${source ? ` (${source})` : ''}: ${reason}`, { cause: error });
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster)
    throw new Error(
      `no Kubernetes cluster configured${source ? ` in ${source}` : ''}: pass --kubeconfig FILE, set KUBECONFIG, or run in a Pod`,
    );
  if (cluster.server.startsWith('http:') && !cluster.skipTLSVerify)
    throw new Error(
      `cluster "${cluster.name}"${source ? ` (${source})` : ''} is plain http (${cluster.server}): ` +
        'the Kubernetes client needs insecure-skip-tls-verify: true on it for that',
    );
  return kc;
}

/** ~/.kube/config or a mounted service account (in a Pod): what the client's default loading reads. */
function defaultConfigExists(home: string | null): boolean {
  if (process.platform === 'win32') return true; // the client also asks WSL there
  if (home && existsSync(path.join(home, '.kube', 'config'))) return true;
  return (
    process.env['KUBERNETES_SERVICE_HOST'] !== undefined &&
    process.env['KUBERNETES_SERVICE_PORT'] !== undefined &&
    existsSync(SERVICE_ACCOUNT_TOKEN)
  );
}

const REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** Large enough for a big cluster's Pods in a few requests, small enough to keep each answer bounded. */
const LIST_PAGE_SIZE = 500;

/** Appends query parameters to a path that may already carry some (`?fieldSelector=…`). */
export function withQuery(path: string, params: Readonly<Record<string, string | undefined>>): string {
  const query = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');
  if (query === '') return path;
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

function readText(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function listPage(
  body: unknown,
  path: string,
): { items: unknown[]; resourceVersion: string; continue: string | undefined } {
  const page = body as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } } | undefined;
  if (!page || !Array.isArray(page.items) || typeof page.metadata?.resourceVersion !== 'string') {
    throw new ApiError(200, 'GET', path, 'not a list: items[] or metadata.resourceVersion missing');
  }
  const next = page.metadata.continue;
  return {
    items: page.items,
    resourceVersion: page.metadata.resourceVersion,
    continue: typeof next === 'string' && next !== '' ? next : undefined,
  };
}

interface CallOptions {
  readonly body?: string;
  readonly contentType?: string;
  /** A GET answered 404 rejects instead of resolving to `undefined`. @default false */
  readonly notFoundIsError?: boolean;
}

/** A request ready to send: where, its options with the credentials applied, and the module that sends it. */
interface PreparedRequest {
  readonly url: URL;
  readonly options: RequestOptions;
  readonly send: typeof httpRequest;
}

/** A small client over the current cluster of `kc`. */
export function createKubeApi(kc: KubeConfig): KubeApi {
  return new KubeClient(kc);
}

class KubeClient implements KubeApi {
  readonly #kc: KubeConfig;
  readonly #server: URL;

  constructor(kc: KubeConfig) {
    this.#kc = kc;
    this.#server = new URL(kc.getCurrentCluster()?.server ?? '');
  }

  get(path: string): Promise<unknown> {
    return this.#call('GET', path);
  }

  patch(path: string, body: unknown, contentType: PatchType): Promise<unknown> {
    return this.#call('PATCH', path, { body: JSON.stringify(body), contentType });
  }

  create(path: string, body: unknown): Promise<unknown> {
    return this.#call('POST', path, { body: JSON.stringify(body), contentType: 'application/json' });
  }

  replace(path: string, body: unknown): Promise<unknown> {
    return this.#call('PUT', path, { body: JSON.stringify(body), contentType: 'application/json' });
  }

  async remove(path: string, resourceVersion?: string): Promise<void> {
    const options =
      resourceVersion === undefined
        ? undefined
        : { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } };
    try {
      await this.#call('DELETE', path, {
        ...(options ? { body: JSON.stringify(options), contentType: 'application/json' } : {}),
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return;
      throw error;
    }
  }

  async listEach(path: string, onItem: (item: unknown) => void): Promise<string> {
    let next: string | undefined;
    let resourceVersion: string;
    do {
      const pagePath = withQuery(path, { limit: String(LIST_PAGE_SIZE), continue: next });
      const page = listPage(await this.#call('GET', pagePath, { notFoundIsError: true }), pagePath);
      for (const item of page.items) onItem(item);
      resourceVersion = page.resourceVersion;
      next = page.continue;
    } while (next !== undefined);
    return resourceVersion;
  }

  async watch(path: string, options: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<void> {
    const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    const watchPath = withQuery(path, {
      watch: '1',
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(timeoutSeconds),
    });
    const idleMs = (timeoutSeconds + 30) * 1000;
    const request = await this.#prepare('GET', watchPath, idleMs);
    if (options.signal?.aborted) return;
    return streamWatch(request, watchPath, idleMs, options, onEvent);
  }

  async #prepare(method: string, path: string, timeoutMs: number, contentType?: string): Promise<PreparedRequest> {
    const options: RequestOptions = { method, headers: { accept: 'application/json' }, timeout: timeoutMs };
    await this.#kc.applyToHTTPSOptions(options);
    if (contentType) options.headers = { ...options.headers, 'content-type': contentType };
    // Keep a path prefix of the server URL (`https://rancher/k8s/clusters/c-1`): `new URL('/api/…', server)` would drop it.
    const url = new URL(`${this.#server.pathname.replace(/\/+$/, '')}${path}`, this.#server);
    if (url.protocol === 'http:') delete options.agent;
    return { url, options, send: url.protocol === 'http:' ? httpRequest : (httpsRequest as typeof httpRequest) };
  }

  /**
   * One request. A GET answered 404 resolves to `undefined` (an object that is not there) unless
   * `notFoundIsError`: a list of a resource the server does not serve is an error, not emptiness.
   */
  async #call(method: string, path: string, call: CallOptions = {}): Promise<unknown> {
    const { body, contentType, notFoundIsError = false } = call;
    const { url, options, send } = await this.#prepare(method, path, REQUEST_TIMEOUT_MS, contentType);
    return new Promise((resolve, reject) => {
      const req = send(url, options, (res) => {
        readText(res)
          .then((text) =>
            answerOf(method, path, res.statusCode ?? 0, text, notFoundIsError, res.headers['retry-after']),
          )
          .then(resolve, reject);
      });
      req.on('timeout', () =>
        req.destroy(
          Object.assign(new Error(`${method} ${path}: timed out after ${REQUEST_TIMEOUT_MS} ms`), {
            code: 'ETIMEDOUT',
          }),
        ),
      );
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** What an answer means: its JSON (`undefined` when empty, or for a GET's 404 unless `notFoundIsError`), else an ApiError. */
function answerOf(
  method: string,
  path: string,
  status: number,
  text: string,
  notFoundIsError: boolean,
  retryAfter: string | undefined,
): unknown {
  if (method === 'GET' && status === 404 && !notFoundIsError) return undefined;
  if (status < 200 || status >= 300) throw new ApiError(status, method, path, text, retryAfterMs(retryAfter));
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiError(status, method, path, `not JSON: ${text}`);
  }
}

/**
 * Sends a watch request and streams its events. Resolves when the server ends the stream or the
 * signal aborts; rejects on a non-2xx answer, a broken connection or a line that is not JSON.
 */
function streamWatch(
  request: PreparedRequest,
  watchPath: string,
  idleMs: number,
  options: WatchOptions,
  onEvent: (event: WatchEvent) => void,
): Promise<void> {
  const signal = options.signal;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      req.destroy();
      resolve();
    };
    const settle = (error?: Error) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) resolve();
      else if (error) reject(error);
      else resolve();
    };
    const req: ClientRequest = request.send(request.url, request.options, (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        const wait = retryAfterMs(res.headers['retry-after']);
        readText(res).then((text) => settle(new ApiError(status, 'GET', watchPath, text, wait)), settle);
        return;
      }
      options.onOpen?.();
      streamLines(res, watchPath, onEvent, settle);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${watchPath}: no data for ${idleMs} ms`)));
    req.on('error', (error) => settle(error));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.end();
  });
}

/** Splits a response into newline-delimited JSON events; `done` once, with an error or without. */
function streamLines(
  res: IncomingMessage,
  path: string,
  onEvent: (event: WatchEvent) => void,
  done: (error?: Error) => void,
): void {
  let buffered = '';
  let finished = false;
  const finish = (error?: Error) => {
    if (finished) return;
    finished = true;
    done(error);
  };
  const emit = (line: string): boolean => {
    if (line.trim() === '') return true;
    let event: WatchEvent;
    try {
      event = JSON.parse(line) as WatchEvent;
    } catch {
      finish(new ApiError(200, 'GET', path, `watch line is not JSON: ${line}`));
      res.destroy();
      return false;
    }
    try {
      onEvent(event);
    } catch (error) {
      finish(error as Error);
      res.destroy();
      return false;
    }
    return true;
  };
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0 && !finished) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!emit(line)) return;
      newline = buffered.indexOf('\n');
    }
  });
  // A response cut off mid-stream ends with `aborted`/`error`, never a clean `end`.
  res.on('end', () => {
    if (emit(buffered)) finish();
  });
  res.on('aborted', () => finish(new Error(`GET ${path}: watch stream aborted`)));
  res.on('error', (error) => finish(error));
  res.on('close', () => {
    if (!res.complete) finish(new Error(`GET ${path}: watch connection closed mid-stream`));
  });
}
