import { setTimeout as delay } from 'node:timers/promises';

export interface BackoffOptions {
  /** @default 1000 */
  readonly initialMs?: number;
  /** @default 30000 */
  readonly maxMs?: number;
  /**
   * Each delay is shortened by up to this fraction at random, so that many agents or checkers
   * that failed together (an API server restart) do not retry in lockstep. @default 0
   */
  readonly jitter?: number;
}

/**
 * Delay after `failures` consecutive failures: initial, 2×, 4× … capped at max, less the jitter.
 * @example backoffMs(3, { initialMs: 1000, maxMs: 30_000 }) // 4000
 */
export function backoffMs(failures: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const initial = options.initialMs ?? 1000;
  const max = options.maxMs ?? 30_000;
  const full = Math.min(max, initial * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  const jitter = Math.min(Math.max(options.jitter ?? 0, 0), 1);
  return jitter === 0 ? full : Math.round(full * (1 - jitter * random()));
}

/** Waits `ms`, or less if `signal` aborts first; never rejects (an abort is a normal way to stop). */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => undefined);
}
