import { setTimeout as delay } from 'node:timers/promises';

export interface BackoffOptions {
  /** @default 1000 */
  readonly initialMs?: number;
  /** @default 30000 */
  readonly maxMs?: number;
  /**
   * Each delay is varied by up to this fraction either way at random ({@link jittered}), so that
   * many agents or checkers that failed together (an API server restart) do not retry in
   * lockstep. @default 0
   */
  readonly jitter?: number;
}

/**
 * `ms` varied at random by up to `fraction` of it either way (clamped to 0..1): the one jitter of
 * every process's waits (retries and the agent's interval). Either way, not only shorter, so the
 * mean wait stays `ms` and a fleet's mean request rate is what its settings say.
 * @example jittered(60_000, 0.2, () => 0) // 48000
 */
export function jittered(ms: number, fraction: number, random: () => number = Math.random): number {
  const spread = Math.min(Math.max(fraction, 0), 1);
  return spread === 0 ? ms : Math.round(ms * (1 + spread * (2 * random() - 1)));
}

/**
 * Delay after `failures` consecutive failures: initial, 2×, 4× … capped at max, then jittered.
 * @example backoffMs(3, { initialMs: 1000, maxMs: 30_000 }) // 4000
 */
export function backoffMs(failures: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialMs ?? 1000;
  const max = options.maxMs ?? 30_000;
  const full = Math.min(max, initial * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return jittered(full, options.jitter ?? 0, random);
}

/**
 * The wait an error asks for: the API server's `Retry-After` (API Priority and Fairness answers
 * 429 with it, an overloaded or starting server 503), which the API client puts on its errors as
 * `retryAfterMs`; undefined when the error names none.
 */
export function retryAfterMsOf(error: unknown): number | undefined {
  const ms = (error as { retryAfterMs?: unknown } | null | undefined)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * The wait before retrying after `failures` consecutive failures, the last being `error`: the
 * backoff, or the server's Retry-After when that is longer, up to the backoff's cap with its
 * jitter (the longest the process would wait anyway: its health and its leadership are sized to
 * that, and API Priority and Fairness asks for seconds, not minutes).
 * @example retryDelayMs(1, {}, Object.assign(new Error('429'), { retryAfterMs: 5000 })) // 5000
 */
export function retryDelayMs(
  failures: number,
  options: BackoffOptions,
  error: unknown,
  random: () => number = Math.random,
): number {
  const cap = Math.ceil((options.maxMs ?? 30_000) * (1 + Math.min(Math.max(options.jitter ?? 0, 0), 1)));
  return Math.min(Math.max(backoffMs(failures, options, random), retryAfterMsOf(error) ?? 0), cap);
}

/** Waits `ms`, or less if `signal` aborts first; never rejects (an abort is a normal way to stop). */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => undefined);
}
