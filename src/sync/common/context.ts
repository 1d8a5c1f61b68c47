import type { SyncRefusal } from '../../k8s/index.js';

/** What a sync function gets besides the request: nothing from the environment, only values. */
export interface SyncContext {
  /** RFC 3339 time used for condition transitions; the server passes the request time. */
  readonly now: string;
}

/** Seconds Metacontroller waits before retrying a refused sync (429 + Retry-After). */
export const RETRY_AFTER_SECONDS = 30;

/**
 * The one way a hook says "no safe desired state yet": the server answers 429 + Retry-After and
 * Metacontroller keeps every child and retries.
 * @example refuse('MissingRelated', 'related Node.v1 is missing') // { ok: false, error: { …, retryAfterSeconds: 30 } }
 */
export function refuse(
  code: SyncRefusal['code'],
  message: string,
): { readonly ok: false; readonly error: SyncRefusal } {
  return { ok: false, error: { code, message, retryAfterSeconds: RETRY_AFTER_SECONDS } };
}
