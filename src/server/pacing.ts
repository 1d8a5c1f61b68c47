/**
 * @module Pacing of shard syncs while many Nodes join at once. Metacontroller syncs a NodeShard on
 * every profile written into it, each time sending the shard's every profile; the only thing that
 * coalesces a parent's events in Metacontroller is a sync of that parent in progress (its work queue
 * re-adds the parent once, however many events came meanwhile). So while a shard's profiles are
 * arriving, its sync is held before it is answered: for half of how long they have been arriving
 * (1 s to `maxHoldSeconds`), so a shard syncs a number of times that grows with the logarithm of the
 * install, not with its Nodes. The hold ends early once this server has seen no Node join for
 * `quietSeconds` (when it saw them join), and at once when the server stops. Nothing depends on it
 * for correctness: the held answer is the summary of the request as it came, and the sync
 * Metacontroller runs right after it has the profiles that arrived meanwhile (docs/architecture.md#node-shards).
 */

export interface PacingOptions {
  /** The longest hold; under the node-shard sync hook's timeout. @default 60 */
  readonly maxHoldSeconds?: number;
  /** Holds end this long after the last Node joined that this server saw. @default 2 */
  readonly quietSeconds?: number;
  /** performance.now-like clock, ms. */
  readonly clock?: () => number;
}

const MIN_HOLD_SECONDS = 1;
/** A hold lasts this fraction of the arrival so far: syncs of a shard at times growing by 1.5×. */
const HOLD_FRACTION = 0.5;
const POLL_MS = 200;

export class ShardPacing {
  readonly #maxHoldMs: number;
  readonly #quietMs: number;
  readonly #clock: () => number;
  #lastJoin = Number.NEGATIVE_INFINITY;
  #stopped = false;
  readonly #waiting = new Set<() => void>();

  constructor(options: PacingOptions = {}) {
    this.#maxHoldMs = (options.maxHoldSeconds ?? 60) * 1000;
    this.#quietMs = (options.quietSeconds ?? 2) * 1000;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** A Node joined (node-profile answered with its first profile). */
  noteJoin(): void {
    this.#lastJoin = this.#clock();
  }

  /** How long a shard whose profiles have been arriving for `arrivalSeconds` is held, ms. */
  holdMs(arrivalSeconds: number): number {
    if (this.#stopped || this.#maxHoldMs <= 0) return 0;
    return Math.min(this.#maxHoldMs, Math.max(MIN_HOLD_SECONDS * 1000, HOLD_FRACTION * arrivalSeconds * 1000));
  }

  /** Holds a shard sync (see the module); resolves with the milliseconds it was held. */
  async hold(arrivalSeconds: number): Promise<number> {
    const limit = this.holdMs(arrivalSeconds);
    if (limit <= 0) return 0;
    const started = this.#clock();
    // Only a server that sees the Nodes join can tell that they stopped; another one holds the whole time.
    const witness = started - this.#lastJoin < this.#quietMs;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearInterval(timer);
        this.#waiting.delete(done);
        resolve();
      };
      const timer = setInterval(() => {
        const now = this.#clock();
        if (now - started >= limit || (witness && now - this.#lastJoin >= this.#quietMs)) done();
      }, POLL_MS);
      this.#waiting.add(done);
    });
    return this.#clock() - started;
  }

  /** Ends every hold now and holds nothing more (the server is stopping). */
  stop(): void {
    this.#stopped = true;
    for (const done of [...this.#waiting]) done();
  }
}
