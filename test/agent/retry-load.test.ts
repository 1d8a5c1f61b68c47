/**
 * The fleet's retry load during an API server outage, from the agent's own schedule
 * (bench/cluster/retry-load.ts, quoted in docs/operations.md): it settles at one attempt per capped
 * delay whatever the interval, and the agents come back spread over that delay, not at once.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_RETRY, createAgentState, longestCycleGapMs, nextDelayMs } from '../../src/agent/index.js';
import { retryLoad } from '../../bench/cluster/retry-load.js';
import { createRandom } from '../../bench/shared/random.js';

const WINDOWS = [0, 10_000, 120_000, 600_000];

describe('retryLoad', () => {
  it.each([1000, 10_000])(
    'interval %i ms: the rate settles between one attempt per 1.2 and per 0.8 of the 30 s cap',
    (intervalMs) => {
      const load = retryLoad({ intervalMs, outageMs: 600_000, windowsMs: WINDOWS, agents: 500 });
      const settled = load.windows[2]?.perAgentPerSecond ?? 0;
      const cap = AGENT_RETRY.maxMs / 1000;
      expect(settled).toBeGreaterThan(1 / (cap * (1 + AGENT_RETRY.jitter)));
      expect(settled).toBeLessThan(1 / (cap * (1 - AGENT_RETRY.jitter)));
      // The first seconds are the ramp (1 s, 2 s, 4 s …): busier than the settled rate, far below one a second.
      expect(load.windows[0]?.perAgentPerSecond).toBeGreaterThan(settled);
      expect(load.windows[0]?.perAgentPerSecond).toBeLessThan(0.5);
    },
  );

  it('a 60 s interval settles at one attempt per interval, and every agent is back within the longest gap', () => {
    const load = retryLoad({ intervalMs: 60_000, outageMs: 600_000, windowsMs: WINDOWS, agents: 500 });
    const settled = load.windows[2]?.perAgentPerSecond ?? 0;
    expect(settled).toBeGreaterThan(1 / 72);
    expect(settled).toBeLessThan(1 / 48);
    expect(load.recovery.lastBackMs).toBeLessThanOrEqual(longestCycleGapMs(60_000));
    // Spread over the gap: no second holds more than a small share of the fleet.
    expect(load.recovery.peakShareInOneSecond).toBeLessThan(0.1);
  });

  it('more requests per attempt scale the rate', () => {
    const one = retryLoad({ intervalMs: 1000, outageMs: 60_000, windowsMs: [0, 60_000], agents: 200 });
    const two = retryLoad({
      intervalMs: 1000,
      outageMs: 60_000,
      windowsMs: [0, 60_000],
      agents: 200,
      requestsPerAttempt: 2,
    });
    expect(two.windows[0]?.perAgentPerSecond).toBeCloseTo(2 * (one.windows[0]?.perAgentPerSecond ?? 0), 10);
  });

  it('agents started in the same second (a DaemonSet rollout) do not stay in step: the interval is jittered', () => {
    const random = createRandom(7);
    const next = () => random.next();
    // 20 agents whose first cycle falls in one second, then 10 successful cycles of 60 s each.
    const at = Array.from({ length: 20 }, () => next() * 1000);
    for (let cycle = 0; cycle < 10; cycle++)
      for (let i = 0; i < at.length; i++) at[i] = (at[i] ?? 0) + nextDelayMs(createAgentState(), 60_000, next);
    const perSecond = new Map<number, number>();
    for (const t of at) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    // Unjittered, all 20 would still meet in one second; spread, no second holds more than a few.
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(3);
  });
});
