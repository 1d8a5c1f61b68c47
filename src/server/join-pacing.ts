/**
 * @module Pacing of the syncs that summarise many Nodes (a NodeShard, the chain) while Nodes join
 * in numbers: a first install, or a node pool scaled up. Metacontroller syncs a NodeShard on every
 * profile written into it, each time sending all of the shard's profiles, and the chain on every
 * shard summary that changes; the only thing that coalesces a parent's events in Metacontroller is a
 * sync of that parent in progress (its work queue re-adds the parent once, however many events came
 * meanwhile). So while Nodes arrive, such a sync is held before it is answered: once they have been
 * arriving for 2 s, for half of how long they have been arriving (1 s to `maxHoldSeconds`), so the parent syncs at times growing by 1.5×,
 * a number of syncs that grows with the logarithm of the arrival, not with its Nodes. The hold ends
 * early once this server has seen no Node join for `quietSeconds` (where it saw them join), and at
 * once when the server stops. Nothing depends on it for correctness: the held answer is computed from
 * the request as it came, and the sync Metacontroller runs right after it has what arrived meanwhile
 * (docs/architecture.md#join-pacing).
 */
import { ARRIVAL_GAP_SECONDS } from '../sync/index.js';

export interface PacingOptions {
  /** The longest hold; under the hooks' timeout (90 s in the manifests). 0: no pacing. @default 60 */
  readonly maxHoldSeconds?: number;
  /** Holds end this long after the last Node joined that this server saw. @default 2 */
  readonly quietSeconds?: number;
  /** performance.now-like clock, ms. */
  readonly clock?: () => number;
}

const MIN_HOLD_SECONDS = 1;
/** Nodes arriving for less than this are not held: one Node (or a few) joining a settled cluster. */
const MIN_ARRIVAL_SECONDS = 2;
/** A hold lasts this fraction of the arrival so far: syncs of a parent at times growing by 1.5×. */
const HOLD_FRACTION = 0.5;
/** Joins further apart than this are separate arrivals, as profiles are for a shard. */
const ARRIVAL_GAP_MS = ARRIVAL_GAP_SECONDS * 1000;
const POLL_MS = 200;

export class JoinPacing {
  readonly #maxHoldMs: number;
  readonly #quietMs: number;
  readonly #clock: () => number;
  #lastJoin = Number.NEGATIVE_INFINITY;
  #arrivalStart = Number.NEGATIVE_INFINITY;
  #stopped = false;
  readonly #waiting = new Set<() => void>();

  constructor(options: PacingOptions = {}) {
    this.#maxHoldMs = (options.maxHoldSeconds ?? 60) * 1000;
    this.#quietMs = (options.quietSeconds ?? 2) * 1000;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** A Node joined (node-profile answered with its first profile). */
  noteJoin(): void {
    const now = this.#clock();
    if (now - this.#lastJoin > ARRIVAL_GAP_MS) this.#arrivalStart = now;
    this.#lastJoin = now;
  }

  /** How long the Nodes this server sees joining have been arriving (s), if they still are. */
  joinArrival(): number | undefined {
    const now = this.#clock();
    return now - this.#lastJoin < this.#quietMs ? (now - this.#arrivalStart) / 1000 : undefined;
  }

  /** How long a parent whose Nodes have been arriving for `arrivalSeconds` is held, ms. */
  holdMs(arrivalSeconds: number): number {
    if (this.#stopped || this.#maxHoldMs <= 0 || arrivalSeconds < MIN_ARRIVAL_SECONDS) return 0;
    return Math.min(this.#maxHoldMs, Math.max(MIN_HOLD_SECONDS * 1000, HOLD_FRACTION * arrivalSeconds * 1000));
  }

  /** Holds a sync (see the module); resolves with the milliseconds it was held. */
  async hold(arrivalSeconds: number): Promise<number> {
    const limit = this.holdMs(arrivalSeconds);
    if (limit <= 0) return 0;
    const started = this.#clock();
    // Only a server that sees the Nodes join can tell that they stopped; another one (a replica
    // that answers no node-profile call) holds the whole time.
    const witness = started - this.#lastJoin < ARRIVAL_GAP_MS;
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
