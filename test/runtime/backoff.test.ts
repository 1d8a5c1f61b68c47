import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { backoffMs, jittered, retryAfterMsOf, retryDelayMs, sleep } from '../../src/runtime/index.js';

describe('backoffMs', () => {
  it('doubles from the initial delay and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffMs(n))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('takes its initial delay and cap from the options', () => {
    expect([0, 1, 2, 3, 4].map((n) => backoffMs(n, { initialMs: 10, maxMs: 35 }))).toEqual([10, 10, 20, 35, 35]);
  });

  it('varies each delay by at most the jitter fraction either way, the midpoint unvaried', () => {
    const options = { initialMs: 1000, maxMs: 30_000, jitter: 0.2 };
    expect(backoffMs(3, options, () => 0)).toBe(3200);
    expect(backoffMs(3, options, () => 0.5)).toBe(4000);
    expect(backoffMs(3, options, () => 0.999_999)).toBe(4800);
    expect(backoffMs(100, options, () => 1)).toBe(36_000);
  });

  it('clamps a jitter outside 0..1', () => {
    expect(backoffMs(1, { jitter: 5 }, () => 0)).toBe(0);
    expect(backoffMs(1, { jitter: 5 }, () => 1)).toBe(2000);
    expect(backoffMs(1, { jitter: -1 }, () => 0)).toBe(1000);
  });
});

describe('jittered', () => {
  it('is the one jitter: the same spread around the wait for a retry and for an interval', () => {
    expect([0, 0.25, 0.5, 0.75, 0.999_999].map((r) => jittered(60_000, 0.2, () => r))).toEqual([
      48_000, 54_000, 60_000, 66_000, 72_000,
    ]);
    expect(jittered(60_000, 0, () => 0)).toBe(60_000);
    // Its mean is the wait itself: a fleet sends the rate its interval says, jitter or not.
    const samples = Array.from({ length: 1000 }, (_, i) => jittered(1000, 0.2, () => (i + 0.5) / 1000));
    expect(samples.reduce((a, b) => a + b, 0) / samples.length).toBeCloseTo(1000, 0);
  });
});

describe('retryDelayMs', () => {
  const busy = (retryAfterMs: number) => Object.assign(new Error('HTTP 429'), { retryAfterMs });

  it("waits the server's Retry-After where it is longer than the backoff, the backoff otherwise", () => {
    expect(retryDelayMs(1, { initialMs: 1000 }, busy(5000))).toBe(5000);
    expect(retryDelayMs(5, { initialMs: 1000 }, busy(5000))).toBe(16_000);
    expect(retryDelayMs(1, { initialMs: 1000 }, new Error('connect ECONNREFUSED'))).toBe(1000);
  });

  it('holds a Retry-After to the backoff cap with its jitter: the longest the process waits anyway', () => {
    expect(retryDelayMs(1, { maxMs: 30_000, jitter: 0.2 }, busy(600_000), () => 0.5)).toBe(36_000);
    expect(retryDelayMs(1, { maxMs: 2000 }, busy(5000))).toBe(2000);
  });

  it('reads only a finite, non-negative retryAfterMs', () => {
    expect(retryAfterMsOf(busy(0))).toBe(0);
    expect([busy(-1), busy(Number.NaN), { retryAfterMs: '5' }, undefined, null].map(retryAfterMsOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('sleep', () => {
  it('resolves early, without rejecting, when the signal aborts', async () => {
    const stop = new AbortController();
    const slept = sleep(60_000, stop.signal);
    stop.abort();
    await expect(slept).resolves.toBeUndefined();
  });

  it('resolves at once on an aborted signal', async () => {
    await expect(sleep(60_000, AbortSignal.abort())).resolves.toBeUndefined();
  });

  it('leaves no abort listener behind on a long-lived signal', async () => {
    const stop = new AbortController();
    for (let i = 0; i < 20; i++) await sleep(0, stop.signal);
    // Node keeps the count on the signal; a leak would show 20 listeners here.
    expect(EventEmitter.getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});
