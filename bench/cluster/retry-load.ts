/**
 * @module The load a fleet of agents sends an API server that is down, and meets it with when it
 * returns, computed from the agent's own retry schedule (`nextDelayMs`) — no cluster, no timing:
 * each simulated agent fails its first cycle at a random phase of its interval (every cycle reads
 * the Node for its device owners, so none misses an outage longer than one interval) and then
 * retries on the schedule, jitter drawn from a seeded generator. docs/operations.md#api-server-outages
 * quotes its table. `npx tsx bench/cluster/retry-load.ts [intervalSeconds…]` prints it.
 */
import { fileURLToPath } from 'node:url';
import { createAgentState, nextDelayMs } from '../../src/agent/index.js';
import { createRandom } from '../shared/random.js';

export interface RetryLoadOptions {
  readonly intervalMs: number;
  /** How long the API server is down; it answers again at this time (ms after the outage began). */
  readonly outageMs: number;
  /** Agents simulated; rates are per agent, so a fleet's is this times its size. @default 2000 */
  readonly agents?: number;
  /** Requests one failing attempt sends: the Node read that fails first (a refused connection ends the cycle). @default 1 */
  readonly requestsPerAttempt?: number;
  /** Edges of the windows (ms since the outage began) the rate is reported for. */
  readonly windowsMs: readonly number[];
  /** @default 1 */
  readonly seed?: number;
}

export interface RetryLoad {
  /** Requests per second per agent in each window [from, to). */
  readonly windows: readonly { readonly fromMs: number; readonly toMs: number; readonly perAgentPerSecond: number }[];
  /** After the server returns: the share of agents that reached it again within 1 s, and the last one's delay. */
  readonly recovery: {
    /** The most agents whose first post-outage attempt falls in one second, as a share of the fleet. */
    readonly peakShareInOneSecond: number;
    /** The slowest agent: ms from the server's return to its first attempt (it succeeds and resets). */
    readonly lastBackMs: number;
  };
}

/** Attempt times (ms since the outage began) of one agent whose first failing cycle is at `firstMs`. */
function attempts(firstMs: number, options: RetryLoadOptions, random: () => number): number[] {
  const state = createAgentState();
  const times: number[] = [];
  let at = firstMs;
  // Every attempt before the server's return fails; the first one at or after it succeeds and is the last counted.
  for (;;) {
    times.push(at);
    if (at >= options.outageMs) return times;
    state.sliceFailures++;
    at += nextDelayMs(state, options.intervalMs, random);
  }
}

export function retryLoad(options: RetryLoadOptions): RetryLoad {
  const agents = options.agents ?? 2000;
  const perAttempt = options.requestsPerAttempt ?? 1;
  const random = createRandom(options.seed ?? 1);
  const next = () => random.next();
  const counts = new Array<number>(options.windowsMs.length - 1).fill(0);
  const firstBack = new Map<number, number>();
  let lastBackMs = 0;
  for (let i = 0; i < agents; i++) {
    const times = attempts(next() * options.intervalMs, options, next);
    for (const t of times) {
      const w = options.windowsMs.findIndex(
        (edge, k) => k < counts.length && t >= edge && t < (options.windowsMs[k + 1] ?? 0),
      );
      if (w >= 0) counts[w] = (counts[w] ?? 0) + 1;
    }
    const back = (times.at(-1) ?? 0) - options.outageMs;
    lastBackMs = Math.max(lastBackMs, back);
    const second = Math.floor(back / 1000);
    firstBack.set(second, (firstBack.get(second) ?? 0) + 1);
  }
  return {
    windows: counts.map((count, k) => {
      const fromMs = options.windowsMs[k] ?? 0;
      const toMs = options.windowsMs[k + 1] ?? fromMs;
      return { fromMs, toMs, perAgentPerSecond: (count * perAttempt) / agents / ((toMs - fromMs) / 1000) };
    }),
    recovery: { peakShareInOneSecond: Math.max(...firstBack.values()) / agents, lastBackMs },
  };
}

const WINDOWS_MS = [0, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000];

function table(intervalsMs: readonly number[]): string {
  const head = WINDOWS_MS.slice(0, -1).map((from, k) => `${from / 1000}–${(WINDOWS_MS[k + 1] ?? 0) / 1000} s`);
  const lines = [
    `| interval | ${head.join(' | ')} | back within 1 s (peak share) | last agent back |`,
    `|---|${head.map(() => '---:').join('|')}|---:|---:|`,
  ];
  for (const intervalMs of intervalsMs) {
    const load = retryLoad({ intervalMs, outageMs: 600_000, windowsMs: WINDOWS_MS });
    const rates = load.windows.map((w) => w.perAgentPerSecond.toFixed(3));
    const { peakShareInOneSecond, lastBackMs } = load.recovery;
    lines.push(
      `| ${intervalMs / 1000} s | ${rates.join(' | ')} | ${(peakShareInOneSecond * 100).toFixed(1)} % | ${(lastBackMs / 1000).toFixed(1)} s |`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const intervals = process.argv.slice(2).map((s) => Number(s) * 1000);
  console.log(table(intervals.length > 0 ? intervals : [1000, 10_000, 60_000]));
}
