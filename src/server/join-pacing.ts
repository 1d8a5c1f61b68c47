/**
 * @module Pacing of the syncs that summarise many Nodes (a NodeShard, the chain) while Nodes join
 * in numbers: a first install, or a node pool scaled up. Metacontroller syncs a NodeShard on every
 * profile written into it, each time sending all of the shard's profiles, and the chain on every
 * shard summary that changes; the only thing that coalesces a parent's events in Metacontroller is a
 * sync of that parent in progress (its work queue re-adds the parent once, however many events came
 * meanwhile). So while Nodes arrive, such a sync is held before it is answered.
 *
 * How long is a pure function of the request and the time (src/sync: `shardPace`, `chainPace`), so
 * every replica holds the same request alike; this server only reads its clocks and sleeps. The
 * hold ends before the hook's timeout, counted from when this server received the request, with
 * {@link HOLD_MARGIN_SECONDS} to answer in: one setting, the hook timeout, bounds both. Nothing
 * depends on the hold for correctness: the held answer is computed after it, and the sync
 * Metacontroller runs right after it has what arrived meanwhile (docs/architecture.md#join-pacing).
 */
import type { Pace } from '../sync/index.js';

/** The timeout of the paced hooks (node-shard and scheduling-chain sync) in manifests/ and the chart. */
export const PACED_HOOK_TIMEOUT_SECONDS = 90;
/** What a held sync keeps of its hook timeout to be computed, serialised and sent. */
export const HOLD_MARGIN_SECONDS = 10;
/** `serve --join-pacing`'s default. */
export const DEFAULT_JOIN_PACING_SECONDS = 60;

export interface PacingOptions {
  /** The longest hold; at most `hookTimeoutSeconds` − {@link HOLD_MARGIN_SECONDS}. 0: no pacing. @default 60 */
  readonly maxHoldSeconds?: number;
  /** The paced hooks' timeout, as the manifests set it. @default {@link PACED_HOOK_TIMEOUT_SECONDS} */
  readonly hookTimeoutSeconds?: number;
  /** performance.now-like clock, ms: when a request was received, how long it has waited. */
  readonly clock?: () => number;
}

/**
 * Why a longest hold cannot fit the hook timeout, or undefined when it fits.
 * @example pacingProblem(85, 90) // '--join-pacing 85 s does not fit …'
 */
export function pacingProblem(maxHoldSeconds: number, hookTimeoutSeconds: number): string | undefined {
  if (!(maxHoldSeconds >= 0)) return `--join-pacing must be 0 or more, not ${maxHoldSeconds} s`;
  const room = hookTimeoutSeconds - HOLD_MARGIN_SECONDS;
  if (maxHoldSeconds <= room) return undefined;
  return (
    `--join-pacing ${maxHoldSeconds} s does not fit the paced hooks' timeout of ${hookTimeoutSeconds} s ` +
    `(--hook-timeout) less ${HOLD_MARGIN_SECONDS} s to answer: at most ${Math.max(0, room)} s, ` +
    'or raise the timeout of the node-shard and scheduling-chain sync hooks and --hook-timeout with it'
  );
}

export class JoinPacing {
  readonly maxHoldSeconds: number;
  readonly #budgetMs: number;
  readonly clock: () => number;
  #stopped = false;
  readonly #waiting = new Set<() => void>();

  /** @throws RangeError when the longest hold does not fit the hook timeout ({@link pacingProblem}). */
  constructor(options: PacingOptions = {}) {
    this.maxHoldSeconds = options.maxHoldSeconds ?? DEFAULT_JOIN_PACING_SECONDS;
    const timeout = options.hookTimeoutSeconds ?? PACED_HOOK_TIMEOUT_SECONDS;
    const problem = pacingProblem(this.maxHoldSeconds, timeout);
    if (problem !== undefined) throw new RangeError(problem);
    this.#budgetMs = (timeout - HOLD_MARGIN_SECONDS) * 1000;
    this.clock = options.clock ?? (() => performance.now());
  }

  /**
   * How long to hold a request received at `receivedMs` (this pacing's clock) whose pace is `pace`:
   * its hold, less what it has waited since, and never past the hook timeout less the margin.
   */
  holdMs(pace: Pace | undefined, receivedMs: number): number {
    if (pace === undefined || this.#stopped || this.maxHoldSeconds <= 0) return 0;
    const waited = this.clock() - receivedMs;
    const hold = Math.min(pace.holdSeconds * 1000, this.#budgetMs - waited);
    return hold > 0 ? hold : 0;
  }

  /** Holds for `ms` (one timer), or less when the server stops; resolves with the milliseconds held. */
  async hold(ms: number): Promise<number> {
    if (ms <= 0 || this.#stopped) return 0;
    const started = this.clock();
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiting.add(done);
    });
    return this.clock() - started;
  }

  /** Ends every hold now and holds nothing more (the server is stopping). */
  stop(): void {
    this.#stopped = true;
    for (const done of [...this.#waiting]) done();
  }
}
