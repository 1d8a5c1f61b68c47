import { getEventListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DetectResult } from '../../native/index.js';
import {
  createAgentMetrics,
  createAgentState,
  detectionStaleAfterMs,
  longestCycleGapMs,
  nextDelayMs,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  runAgent,
  runCycle,
  SlicesNotServedError,
  startHealthServer,
  type AgentOptions,
  type Labels,
  type Publisher,
  type SlicePublisher,
} from '../../src/agent/index.js';
import { ApiError } from '../../src/api-client/index.js';
import { H100_LABELS, detection, h100, recordingLogger, times, useFakeApiServer } from './support.js';

const NODE = 'gpu-h100-01';
const H100_X8 = detection(times(8, h100));

/** An in-memory publisher that counts writes. */
function memoryPublisher(): Publisher & { written: Labels[] } {
  const written: Labels[] = [];
  return {
    mode: 'node-labels',
    written,
    read: () => Promise.resolve(written.at(-1)),
    write: (labels) => {
      written.push(labels);
      return Promise.resolve();
    },
  };
}

function options(
  publisher: Publisher,
  detect: () => Promise<DetectResult>,
  extra: Partial<Omit<AgentOptions, 'logger'>> = {},
): AgentOptions & { logger: ReturnType<typeof recordingLogger> } {
  return { detect, publisher, intervalMs: 60_000, ...extra, logger: recordingLogger() };
}

describe('failures', () => {
  const standIn = useFakeApiServer({ [NODE]: {} });

  it.each([
    { name: 'HTTP 500', failure: { status: 500 }, pattern: /HTTP 500/ },
    { name: 'HTTP 403', failure: { status: 403 }, pattern: /HTTP 403/ },
    { name: 'a closed socket', failure: 'close' as const, pattern: /socket hang up|ECONNRESET/ },
  ])(
    '$name → failed, failures counted, lastError set, nothing thrown; a later success resets',
    async ({ failure, pattern }) => {
      standIn.api.failure = failure;
      const publisher = nodeLabelsPublisher(standIn.client(), NODE);
      const state = createAgentState();
      const opts = options(publisher, () => Promise.resolve(H100_X8));
      expect(await runCycle(state, opts)).toBe('failed');
      expect(await runCycle(state, opts)).toBe('failed');
      expect(state.failures).toBe(2);
      expect(state.lastError).toMatch(pattern);
      expect(state.lastDetection).toBeDefined();
      expect(state.writes).toBe(0);
      expect(opts.logger.entries.filter((e) => e.level === 'error')).toHaveLength(2);

      standIn.api.failure = undefined;
      expect(await runCycle(state, opts)).toBe('published');
      expect(state.failures).toBe(0);
      expect(state.lastError).toBeUndefined();
      expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual(H100_LABELS);
    },
  );

  it('a failing apply (NodeFeature mode) is retried on the next cycle and then written', async () => {
    const publisher = nodeFeaturePublisher(standIn.client(), NODE, 'gpustack-system');
    const state = createAgentState();
    const opts = options(publisher, () => Promise.resolve(H100_X8));
    expect(await runCycle(state, opts)).toBe('published');
    // Fails on the write only: the GET already happened in cycle 1 (state.published is cached).
    const changed = options(publisher, () => Promise.resolve(detection(times(4, h100))));
    standIn.api.failure = { status: 500 };
    expect(await runCycle(state, changed)).toBe('failed');
    expect(state.published).toEqual(H100_LABELS);
    standIn.api.failure = undefined;
    expect(await runCycle(state, changed)).toBe('published');
    expect(state.writes).toBe(2);
  });

  it('detect() rejecting → failed, not thrown', async () => {
    const state = createAgentState();
    const publisher = memoryPublisher();
    const opts = options(publisher, () => Promise.reject(new Error('addon exploded')));
    expect(await runCycle(state, opts)).toBe('failed');
    expect(state.failures).toBe(1);
    expect(state.lastError).toBe('addon exploded');
    expect(state.lastDetection).toBeUndefined();
    expect(publisher.written).toHaveLength(0);
  });

  it('detect() throwing synchronously or rejecting with a non-Error → failed, not thrown', async () => {
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(memoryPublisher(), () => {
          throw new Error('sync');
        }),
      ),
    ).toBe('failed');
    expect(
      await runCycle(
        state,
        options(memoryPublisher(), () => Promise.reject('a string')),
      ),
    ).toBe('failed');
    expect(state.failures).toBe(2);
  });

  it('a recovered cycle that finds nothing to write clears the error as well', async () => {
    const state = createAgentState();
    const publisher = memoryPublisher();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.reject(new Error('blip'))),
      ),
    ).toBe('failed');
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('unchanged');
    expect(state.failures).toBe(0);
    expect(state.lastError).toBeUndefined();
  });

  it('non-LibraryNotFound detection errors and screened cards are logged as warnings', async () => {
    const opts = options(memoryPublisher(), () =>
      Promise.resolve(detection([h100(0), h100(1, { memoryMiB: Number.NaN })], { amd: 'DriverMismatch' })),
    );
    expect(await runCycle(createAgentState(), opts)).toBe('published');
    const warned = opts.logger.entries
      .filter((e) => e.level === 'warn')
      .map((e) => e.fields as { manufacturer: string; code: string });
    expect(warned.map((w) => `${w.manufacturer}:${w.code}`).sort()).toEqual([
      'amd:DriverMismatch',
      'nvidia:CallFailed',
    ]);
  });
});

describe('nextDelayMs', () => {
  /** The midpoint of the jitter: the retry delay unvaried. */
  const MID = (): number => 0.5;

  it('is the interval without failures, then 1 s, 2 s, 4 s … capped at 30 s — also when the interval is shorter', () => {
    const state = createAgentState();
    expect(nextDelayMs(state, 60_000, MID)).toBe(60_000);
    expect(nextDelayMs(state, 1000, MID)).toBe(1000);
    // A 1 s interval (the e2e agents') used to cap the backoff at 1 s: ~1 request/s through an outage.
    const short = [1, 2, 3, 4, 5, 6, 7, 50, 10_000].map((failures) => nextDelayMs({ ...state, failures }, 1000, MID));
    expect(short).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
    expect(longestCycleGapMs(1000)).toBe(36_000);
  });

  it('grows to the interval when that is longer than 30 s: a retry never waits longer than a cycle', () => {
    const state = createAgentState();
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 50].map((failures) => nextDelayMs({ ...state, failures }, 60_000, MID));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect(longestCycleGapMs(60_000)).toBe(72_000);
  });

  it('varies a retry by ±20 % (the slice failures count too), and the interval the same way', () => {
    const state = { ...createAgentState(), sliceFailures: 3 };
    expect(nextDelayMs(state, 60_000, () => 0)).toBe(3200);
    expect(nextDelayMs(state, 60_000, () => 0.999_999)).toBe(4800);
    // Agents started together (a DaemonSet rollout) drift apart instead of meeting every interval.
    expect(nextDelayMs(createAgentState(), 60_000, () => 0)).toBe(48_000);
    expect(nextDelayMs(createAgentState(), 60_000, () => 0.999_999)).toBe(72_000);
    const sampled = Array.from({ length: 200 }, () => nextDelayMs({ ...state, sliceFailures: 9 }, 1000));
    expect(Math.min(...sampled)).toBeGreaterThanOrEqual(24_000);
    expect(Math.max(...sampled)).toBeLessThanOrEqual(36_000);
    // Both sides of the cap are used: agents that failed together do not retry together.
    expect(sampled.some((d) => d < 29_000) && sampled.some((d) => d > 31_000)).toBe(true);
  });

  it("waits at least the server's Retry-After, for the labels' failure or the slices'; the next cycle forgets it", async () => {
    const busy = new ApiError(429, 'PATCH', '/api/v1/nodes/x', 'TooManyRequests', 20_000);
    const state = { ...createAgentState(), failures: 1, retryAfterMs: 20_000 };
    expect(nextDelayMs(state, 60_000, MID)).toBe(20_000);
    expect(nextDelayMs({ ...state, failures: 6 }, 60_000, MID)).toBe(32_000);
    // Never past the longest gap between cycles: the detection would go stale and liveness restart the agent.
    expect(nextDelayMs({ ...state, retryAfterMs: 300_000 }, 60_000, MID)).toBe(longestCycleGapMs(60_000));

    let answer: Error | undefined = busy;
    const publisher = memoryPublisher();
    publisher.write = () => (answer ? Promise.reject(answer) : Promise.resolve());
    const run = createAgentState();
    await runCycle(
      run,
      options(publisher, () => Promise.resolve(H100_X8)),
    );
    expect([run.failures, nextDelayMs(run, 60_000, MID)]).toEqual([1, 20_000]);
    answer = new ApiError(500, 'PATCH', '/api/v1/nodes/x', 'etcdserver: leader changed');
    await runCycle(
      run,
      options(publisher, () => Promise.resolve(H100_X8)),
    );
    expect([run.failures, nextDelayMs(run, 60_000, MID)]).toEqual([2, 2000]);

    const slices: SlicePublisher = { publish: () => Promise.reject(busy) };
    const sliced = createAgentState();
    await runCycle(
      sliced,
      options(memoryPublisher(), () => Promise.resolve(H100_X8), { slicePublisher: slices }),
    );
    expect([sliced.failures, sliced.sliceFailures, nextDelayMs(sliced, 60_000, MID)]).toEqual([0, 1, 20_000]);
  });

  it('follows the failure count of real cycles and resets after a success', async () => {
    const state = createAgentState();
    let fail = true;
    const opts = options(memoryPublisher(), () => (fail ? Promise.reject(new Error('x')) : Promise.resolve(H100_X8)));
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      await runCycle(state, opts);
      delays.push(nextDelayMs(state, 60_000, () => 0.5));
    }
    fail = false;
    await runCycle(state, opts);
    delays.push(nextDelayMs(state, 60_000, () => 0.5));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 60_000]);
  });
});

describe('one request per failed attempt', () => {
  /** Counts the API requests of each publisher: the labels' failing with `error`, the slices' answering. */
  function counted(error: Error) {
    const calls = { labels: 0, slices: 0 };
    const publisher = memoryPublisher();
    publisher.write = () => {
      calls.labels++;
      return Promise.reject(error);
    };
    const slices: SlicePublisher = {
      publish: () => {
        calls.slices++;
        return Promise.resolve({ result: 'unchanged', written: 0, deleted: 0, problems: [] });
      },
    };
    return { calls, opts: options(publisher, () => Promise.resolve(H100_X8), { slicePublisher: slices }) };
  }

  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' })],
    ['429 from API Priority and Fairness', new ApiError(429, 'PATCH', '/api/v1/nodes/x', 'TooManyRequests', 1000)],
    ['503', new ApiError(503, 'PATCH', '/api/v1/nodes/x', 'unavailable')],
  ])(
    '%s on the labels ends the attempt: the slices are not tried against a server that cannot answer',
    async (_, error) => {
      const { calls, opts } = counted(error);
      const state = createAgentState();
      for (let i = 0; i < 3; i++) expect(await runCycle(state, opts)).toBe('failed');
      expect(calls).toEqual({ labels: 3, slices: 0 });
      expect([state.failures, state.sliceFailures]).toEqual([3, 0]);
    },
  );

  it('a refusal of the labels alone (403) still lets the slices publish: one failing never holds the other back', async () => {
    const { calls, opts } = counted(new ApiError(403, 'PATCH', '/api/v1/nodes/x', 'forbidden'));
    await runCycle(createAgentState(), opts);
    expect(calls).toEqual({ labels: 1, slices: 1 });
  });
});

describe('runAgent', () => {
  it('stops promptly when its signal aborts after the first cycle', async () => {
    const stop = new AbortController();
    const state = createAgentState();
    let cycles = 0;
    const publisher = memoryPublisher();
    const opts = options(
      publisher,
      () => {
        cycles++;
        if (cycles === 1) setTimeout(() => stop.abort(), 10);
        return Promise.resolve(H100_X8);
      },
      // An interval no test run lasts: runAgent returns only if the abort cuts its wait short.
      { intervalMs: 24 * 3_600_000 },
    );
    await runAgent(state, opts, stop.signal);
    expect(cycles).toBe(1);
    expect(publisher.written).toEqual([H100_LABELS]);
  });

  it('returns at once when the signal is already aborted', async () => {
    const stop = new AbortController();
    stop.abort();
    let cycles = 0;
    await runAgent(
      createAgentState(),
      options(memoryPublisher(), () => {
        cycles++;
        return Promise.resolve(H100_X8);
      }),
      stop.signal,
    );
    expect(cycles).toBe(0);
  });

  it('runs a cycle every interval, writes once, and leaves no abort listeners behind', async () => {
    const stop = new AbortController();
    const state = createAgentState();
    let cycles = 0;
    const publisher = memoryPublisher();
    let listeners = -1;
    const opts = options(
      publisher,
      () => {
        cycles++;
        if (cycles === 30) {
          // Between sleeps: every earlier sleep must have removed its abort listener.
          listeners = getEventListeners(stop.signal, 'abort').length;
          stop.abort();
        }
        return Promise.resolve(H100_X8);
      },
      { intervalMs: 1 },
    );
    const warnings: Error[] = [];
    const onWarning = (w: Error) => {
      warnings.push(w);
    };
    process.on('warning', onWarning);
    try {
      await runAgent(state, opts, stop.signal);
    } finally {
      process.off('warning', onWarning);
    }
    expect(cycles).toBe(30);
    expect(publisher.written).toHaveLength(1);
    expect(listeners).toBe(0);
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('keeps going through failures with backoff and never rejects', async () => {
    const stop = new AbortController();
    const state = createAgentState();
    let cycles = 0;
    const opts = options(
      memoryPublisher(),
      () => {
        cycles++;
        if (cycles === 2) stop.abort();
        return Promise.reject(new Error('down'));
      },
      { intervalMs: 5 },
    );
    await expect(runAgent(state, opts, stop.signal)).resolves.toBeUndefined();
    expect(state.failures).toBe(2);
  });
});

describe('metrics', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('/metrics counts detections, their errors by manufacturer and code, and cycle results', async () => {
    const metrics = createAgentMetrics();
    const state = createAgentState();
    const withError: DetectResult = {
      ...H100_X8,
      errors: [{ manufacturer: 'amd', code: 'InvalidLibrary', message: 'cut short' }],
    };
    let next: () => Promise<DetectResult> = () => Promise.resolve(withError);
    const opts = options(memoryPublisher(), () => next(), { recorder: metrics });
    await runCycle(state, opts); // published
    await runCycle(state, opts); // unchanged
    next = () => Promise.reject(new Error('driver gone'));
    await runCycle(state, opts); // failed
    server = await startHealthServer(state, {
      intervalMs: 60_000,
      port: 0,
      host: '127.0.0.1',
      metrics: metrics.registry,
    });
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/^gpustack_agent_detections_total\{result="ok"\} 2$/m);
    expect(text).toMatch(/^gpustack_agent_detections_total\{result="failed"\} 1$/m);
    expect(text).toMatch(/^gpustack_agent_detection_errors_total\{manufacturer="amd",code="InvalidLibrary"\} 2$/m);
    for (const result of ['published', 'unchanged', 'failed'])
      expect(text).toMatch(new RegExp(`^gpustack_agent_publishes_total\\{result="${result}"\\} 1$`, 'm'));
    expect(text).toMatch(/^gpustack_agent_detection_duration_seconds_count 3$/m);
  });

  it('/metrics is 404 without a registry', async () => {
    server = await startHealthServer(createAgentState(), { intervalMs: 60_000, port: 0, host: '127.0.0.1' });
    const { port } = server.address() as AddressInfo;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
  });
});

describe('health endpoint', () => {
  const INTERVAL = 60_000;
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  async function get(path: string, method = 'GET'): Promise<{ status: number; body: unknown }> {
    const { port } = server?.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  it('200 with lastDetection after a successful cycle; 503 once it is older than three of the longest cycle gaps + 30 s; 404 elsewhere', async () => {
    let now = new Date('2025-01-01T00:00:00.000Z');
    const clock = () => now;
    const state = createAgentState();
    server = await startHealthServer(state, { intervalMs: INTERVAL, port: 0, host: '127.0.0.1', clock });
    expect((server.address() as AddressInfo).address).toBe('127.0.0.1');

    // Just started, nothing detected yet: healthy (grace period).
    let res = await get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ healthy: true, lastDetection: null });

    expect(
      await runCycle(
        state,
        options(memoryPublisher(), () => Promise.resolve(H100_X8), { clock }),
      ),
    ).toBe('published');
    res = await get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      healthy: true,
      lastDetection: '2025-01-01T00:00:00.000Z',
      lastPublish: '2025-01-01T00:00:00.000Z',
      lastError: null,
      writes: 1,
      lastSliceError: null,
      sliceWrites: 0,
      deviceOwners: null,
    });

    expect(detectionStaleAfterMs(INTERVAL)).toBe(3 * 72_000 + 30_000);
    now = new Date(Date.parse('2025-01-01T00:00:00.000Z') + detectionStaleAfterMs(INTERVAL));
    expect((await get('/healthz')).status).toBe(200);
    now = new Date(now.getTime() + 1);
    res = await get('/healthz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ healthy: false, lastDetection: '2025-01-01T00:00:00.000Z' });

    // A failing detection does not refresh lastDetection: still 503, with the error shown.
    expect(
      await runCycle(
        state,
        options(memoryPublisher(), () => Promise.reject(new Error('nvml hung')), { clock }),
      ),
    ).toBe('failed');
    res = await get('/healthz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ lastError: 'nvml hung' });

    // A successful detection makes it healthy again.
    expect(
      await runCycle(
        state,
        options(memoryPublisher(), () => Promise.resolve(H100_X8), { clock }),
      ),
    ).not.toBe('failed');
    expect((await get('/healthz')).status).toBe(200);

    expect((await get('/')).status).toBe(404);
    expect((await get('/metrics')).status).toBe(404);
    expect((await get('/healthz/x')).status).toBe(404);
    expect((await get('/healthz', 'POST')).status).toBe(404);
  });

  it('never detecting at all turns unhealthy after the grace period', async () => {
    let now = new Date('2025-01-01T00:00:00.000Z');
    const state = createAgentState();
    server = await startHealthServer(state, { intervalMs: INTERVAL, port: 0, host: '127.0.0.1', clock: () => now });
    now = new Date(now.getTime() + detectionStaleAfterMs(INTERVAL) + 1);
    expect((await get('/healthz')).status).toBe(503);
  });

  it('/readyz is 503 with the reason while the labels cannot be published, and /healthz stays 200 (waiting is not stuck)', async () => {
    const state = createAgentState();
    server = await startHealthServer(state, { intervalMs: INTERVAL, port: 0, host: '127.0.0.1' });

    let res = await get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ ready: false, reason: 'no cycle has published the labels yet' });

    const unreachable: Publisher = {
      mode: 'node-labels',
      read: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443')),
      write: () => Promise.reject(new Error('not reached')),
    };
    expect(
      await runCycle(
        state,
        options(unreachable, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('failed');
    res = await get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      ready: false,
      reason: 'connect ECONNREFUSED 127.0.0.1:6443',
      lastPublished: null,
      failures: 1,
      sliceFailures: 0,
      lastSliceError: null,
    });
    expect((await get('/healthz')).status).toBe(200);

    const publisher = memoryPublisher();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    res = await get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ready: true, reason: null, failures: 0 });
    // Unchanged labels keep it ready.
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('unchanged');
    expect((await get('/readyz')).status).toBe(200);
    expect((await get('/readyz', 'POST')).status).toBe(404);
  });

  it('/readyz is 503 while the slices cannot be published and 200 again after the next success: ready = the cards reach the cluster', async () => {
    const state = createAgentState();
    server = await startHealthServer(state, { intervalMs: INTERVAL, port: 0, host: '127.0.0.1' });
    let outage = true;
    const slices: SlicePublisher = {
      publish: () =>
        outage
          ? Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6443'))
          : Promise.resolve({ result: 'published', written: 2, deleted: 0, problems: [] }),
    };
    const opts = options(memoryPublisher(), () => Promise.resolve(H100_X8), { slicePublisher: slices });
    // The labels are published (from memory after the first cycle), the slices are not.
    expect(await runCycle(state, opts)).toBe('published');
    let res = await get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      ready: false,
      reason: 'resource slices: connect ECONNREFUSED 127.0.0.1:6443',
      failures: 0,
      sliceFailures: 1,
    });
    await runCycle(state, opts);
    expect((await get('/readyz')).body).toMatchObject({ ready: false, sliceFailures: 2 });
    expect((await get('/healthz')).status).toBe(200);

    outage = false;
    await runCycle(state, opts);
    res = await get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ready: true, reason: null, sliceFailures: 0, lastSliceError: null });
  });

  it('/readyz stays 200 in a cluster that serves no ResourceSlices (DRA off), and that is no failure to back off from', async () => {
    const state = createAgentState();
    server = await startHealthServer(state, { intervalMs: INTERVAL, port: 0, host: '127.0.0.1' });
    const notServed = new ApiError(404, 'GET', '/apis/resource.k8s.io/v1/resourceslices', '404 page not found');
    const slices: SlicePublisher = { publish: () => Promise.reject(new SlicesNotServedError(notServed)) };
    await runCycle(
      state,
      options(memoryPublisher(), () => Promise.resolve(H100_X8), { slicePublisher: slices }),
    );
    const res = await get('/readyz');
    expect(res.status).toBe(200);
    expect((res.body as { lastSliceError: string }).lastSliceError).toMatch(/resource.k8s.io\/v1 is not served/);
    expect(nextDelayMs(state, INTERVAL, () => 0.5)).toBe(INTERVAL);
  });

  it('listens on every interface unless told otherwise', async () => {
    server = await startHealthServer(createAgentState(), { intervalMs: INTERVAL, port: 0 });
    expect((server.address() as AddressInfo).address).toBe('0.0.0.0');
  });

  it('rejects when the port is taken', async () => {
    server = await startHealthServer(createAgentState(), { intervalMs: INTERVAL, port: 0, host: '127.0.0.1' });
    const { port } = server.address() as AddressInfo;
    await expect(
      startHealthServer(createAgentState(), { intervalMs: INTERVAL, port, host: '127.0.0.1' }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});
