/**
 * @module One list + watch loop over a collection, kept in an in-memory store keyed by
 * `namespace/name`. The loop never ends on an error: a broken stream or an API error is logged,
 * backed off exponentially (capped) and followed by a fresh list, so events missed while it was
 * down are not lost. `410 Gone` (the resourceVersion is too old) relists at once. The status it
 * keeps is what the health endpoint reports.
 */
import type { KubeObject } from '../k8s/index.js';
import { ApiError, type KubeApi, type WatchEvent } from '../api-client/index.js';
import { retryDelayMs, sleep, type BackoffOptions, type Logger } from '../runtime/index.js';
import { objectKey, resourceVersionOf, type WatchedResource } from './resources.js';

/** 1 s doubling to 30 s; checkers restarted together (an API server upgrade) spread their relists. */
export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1000, maxMs: 30_000, jitter: 0.2 };

export interface InformerOptions {
  readonly logger: Logger;
  /** Called after every change to the store (a list, or an added, modified or deleted object). */
  readonly onChange: () => void;
  /** Called when a lost watch lists again (every list but the first). */
  readonly onRestart?: (resource: string) => void;
  readonly backoff?: BackoffOptions | undefined;
  /** Server-side watch timeout; the loop re-watches from the last resourceVersion. @default 300 */
  readonly watchTimeoutSeconds?: number | undefined;
  readonly clock?: () => number;
}

/** Where a watch stands; the health endpoint turns this into live or down. */
export interface InformerStatus {
  readonly resource: string;
  /** A list has succeeded at least once: the store holds the collection. */
  synced: boolean;
  /** A watch stream is open right now. */
  streaming: boolean;
  /** When the stream was last lost (ms since the epoch); unset while streaming or before the first list. */
  downSince?: number;
  lastError?: string;
  /** Consecutive failures; the backoff grows with it. */
  failures: number;
  lists: number;
}

/** The outcome of one watch stream: where to continue from, or relist. */
type WatchEnd =
  | { readonly next: 'rewatch'; readonly resourceVersion: string }
  | { readonly next: 'relist'; readonly atOnce: boolean };

/** A watch ERROR event carries a Status; code 410 means the resourceVersion is gone. */
function statusCode(object: unknown): number | undefined {
  const code = (object as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A stream that ends cleanly before this, having delivered nothing, counts as a failure (no hot loop). */
const MIN_QUIET_STREAM_MS = 1000;

/**
 * A watch that stayed open this long after its list is re-established, events or not: the failure
 * count resets when it ends, so the next drop relists after the initial backoff. A quiet resource
 * (no events for minutes) would otherwise carry the count of an old outage into the next one and
 * wait the capped backoff; one that drops sooner keeps its count, so a server that accepts every
 * watch and drops it at once still gets a growing backoff (client-go resets its reflector's
 * backoff the same way, after a quiet spell).
 */
export const ESTABLISHED_STREAM_MS = 10_000;

export class Informer<T extends KubeObject> {
  readonly store = new Map<string, T>();
  readonly status: InformerStatus;
  private readonly clock: () => number;
  /** When the open stream began (its response arrived); unset between streams. */
  private streamOpenedAt: number | undefined;

  constructor(
    private readonly api: KubeApi,
    readonly resource: WatchedResource<T>,
    private readonly options: InformerOptions,
  ) {
    this.status = { resource: resource.name, synced: false, streaming: false, failures: 0, lists: 0 };
    this.clock = options.clock ?? Date.now;
  }

  /** Lists and watches until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let resourceVersion: string | undefined;
    // 410 before any event relists at once, but only once in a row: a server that keeps
    // answering 410 to a fresh resourceVersion gets the backoff, not a hot loop.
    let goneAtOnce = 0;
    while (!signal.aborted) {
      try {
        resourceVersion ??= await this.relist();
        const end = await this.watchOnce(resourceVersion, signal);
        goneAtOnce = end.next === 'relist' && end.atOnce ? goneAtOnce + 1 : 0;
        if (goneAtOnce > 1) throw new Error(`watch of ${this.resource.name}: 410 Gone again right after a fresh list`);
        resourceVersion = end.next === 'rewatch' ? end.resourceVersion : undefined;
      } catch (error) {
        resourceVersion = undefined;
        // Some servers answer a too-old resourceVersion with HTTP 410 instead of an ERROR event.
        if (error instanceof ApiError && error.status === 410 && error.method === 'GET' && ++goneAtOnce <= 1) continue;
        await sleep(this.fail(error as Error), signal);
      }
    }
    this.markDown();
  }

  private async relist(): Promise<string> {
    const fresh = new Map<string, T>();
    const resourceVersion = await this.api.listEach(this.resource.path, (item) => {
      const object = this.parse(item);
      if (object !== undefined) fresh.set(objectKey(object.metadata), object);
    });
    this.store.clear();
    for (const [key, object] of fresh) this.store.set(key, object);
    this.status.synced = true;
    if (this.status.lists > 0) this.options.onRestart?.(this.resource.name);
    this.status.lists++;
    this.options.onChange();
    return resourceVersion;
  }

  private async watchOnce(from: string, signal: AbortSignal): Promise<WatchEnd> {
    // A child signal, so a 410 or an ERROR event can end this stream without stopping the loop.
    const stream = new AbortController();
    const stopStream = () => stream.abort();
    signal.addEventListener('abort', stopStream, { once: true });
    // Stopped while the list was in flight: the 'abort' event has fired already and would never end this stream.
    if (signal.aborted) stream.abort();
    const state = { resourceVersion: from, gone: false, error: undefined as Error | undefined, events: 0 };
    const opened = this.clock();
    try {
      await this.api.watch(
        this.resource.path,
        {
          resourceVersion: from,
          signal: stream.signal,
          onOpen: () => this.markStreaming(),
          ...(this.options.watchTimeoutSeconds !== undefined
            ? { timeoutSeconds: this.options.watchTimeoutSeconds }
            : {}),
        },
        (event) => {
          if (!this.apply(event, state)) stream.abort();
        },
      );
    } finally {
      signal.removeEventListener('abort', stopStream);
      this.endStream();
      this.markDown();
    }
    if (state.error) throw state.error;
    if (state.gone) return { next: 'relist', atOnce: state.events === 0 };
    if (state.events === 0 && this.clock() - opened < MIN_QUIET_STREAM_MS && !signal.aborted) {
      throw new Error(`watch of ${this.resource.name} ended at once without events`);
    }
    return { next: 'rewatch', resourceVersion: state.resourceVersion };
  }

  /** Applies one watch event; false ends the stream (410 Gone or an ERROR event). */
  private apply(
    event: WatchEvent,
    state: { resourceVersion: string; gone: boolean; error: Error | undefined; events: number },
  ): boolean {
    if (event.type === 'ERROR') {
      const code = statusCode(event.object);
      if (code === 410) state.gone = true;
      else state.error = new ApiError(code ?? 0, 'WATCH', this.resource.path, JSON.stringify(event.object));
      return false;
    }
    // Only a delivered event proves the stream works (an open that drops at once does not).
    state.events++;
    this.status.failures = 0;
    delete this.status.lastError;
    const version = resourceVersionOf((event.object ?? {}) as { metadata: object });
    if (version !== undefined) state.resourceVersion = version;
    if (event.type === 'BOOKMARK') return true;
    this.applyObject(event.type, event.object);
    return true;
  }

  private applyObject(type: string, raw: unknown): void {
    if (type === 'DELETED') {
      const metadata = (raw as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
      if (typeof metadata?.name !== 'string') return;
      const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
      if (this.store.delete(objectKey({ name: metadata.name, namespace }))) this.options.onChange();
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED') return;
    const object = this.parse(raw);
    if (object) {
      this.store.set(objectKey(object.metadata), object);
    } else {
      // An object that no longer reads is dropped: the decision must not act on a stale copy of it.
      const key = keyOfRaw(raw);
      if (key === undefined || !this.store.delete(key)) return;
    }
    this.options.onChange();
  }

  /** Parses one received object and keeps what the checker reads of it; logs and skips it when it fails its schema. */
  private parse(raw: unknown): T | undefined {
    const result = this.resource.schema.safeParse(raw);
    if (result.success) return this.resource.slim(result.data);
    const issues = result.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    this.options.logger.warn(
      { resource: this.resource.name, object: keyOfRaw(raw) ?? '(unnamed)', issues },
      'skipped an object that fails its schema',
    );
    return undefined;
  }

  private markStreaming(): void {
    this.status.streaming = true;
    this.streamOpenedAt = this.clock();
    delete this.status.downSince;
  }

  /** A stream ends: one that was re-established (open ESTABLISHED_STREAM_MS) clears the failures. */
  private endStream(): void {
    const openedAt = this.streamOpenedAt;
    this.streamOpenedAt = undefined;
    if (openedAt === undefined || this.clock() - openedAt < ESTABLISHED_STREAM_MS) return;
    this.status.failures = 0;
    delete this.status.lastError;
  }

  private markDown(): void {
    if (this.status.streaming || this.status.downSince === undefined) this.status.downSince = this.clock();
    this.status.streaming = false;
  }

  /** Records a failure and answers how long to wait before the relist: the backoff, or the server's Retry-After when longer. */
  private fail(error: Error): number {
    this.status.failures++;
    this.status.lastError = error.message;
    this.markDown();
    const retryInMs = retryDelayMs(this.status.failures, this.options.backoff ?? DEFAULT_BACKOFF, error);
    this.options.logger.error(
      { resource: this.resource.name, err: error.message, failures: this.status.failures, retryInMs },
      'list/watch failed; will relist after a backoff',
    );
    return retryInMs;
  }
}

function keyOfRaw(raw: unknown): string | undefined {
  const metadata = (raw as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
  if (typeof metadata?.name !== 'string' || metadata.name === '') return undefined;
  return objectKey({
    name: metadata.name,
    namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
  });
}
