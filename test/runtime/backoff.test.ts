import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { backoffMs, sleep } from '../../src/runtime/index.js';

describe('backoffMs', () => {
  it('doubles from the initial delay and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map((n) => backoffMs(n))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });

  it('takes its initial delay and cap from the options', () => {
    expect([0, 1, 2, 3, 4].map((n) => backoffMs(n, { initialMs: 10, maxMs: 35 }))).toEqual([10, 10, 20, 35, 35]);
  });

  it('shortens each delay by at most the jitter fraction', () => {
    const options = { initialMs: 1000, maxMs: 30_000, jitter: 0.2 };
    expect(backoffMs(3, options, () => 0)).toBe(4000);
    expect(backoffMs(3, options, () => 0.5)).toBe(3600);
    expect(backoffMs(3, options, () => 0.999_999)).toBe(3200);
    expect(backoffMs(100, options, () => 1)).toBe(24_000);
  });

  it('clamps a jitter outside 0..1', () => {
    expect(backoffMs(1, { jitter: 5 }, () => 0.5)).toBe(500);
    expect(backoffMs(1, { jitter: -1 }, () => 0.5)).toBe(1000);
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
