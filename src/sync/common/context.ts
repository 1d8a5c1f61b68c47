/** What a sync function gets besides the request: nothing from the environment, only values. */
export interface SyncContext {
  /** RFC 3339 time used for condition transitions; the server passes the request time. */
  readonly now: string;
}

/** Seconds Metacontroller waits before retrying a refused sync (429 + Retry-After). */
export const RETRY_AFTER_SECONDS = 30;
