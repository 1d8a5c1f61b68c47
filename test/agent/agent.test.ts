import { getEventListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { DetectResult } from '../../native/index.js';
import {
  createAgentMetrics,
  createAgentState,
  nextDelayMs,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  runAgent,
  runCycle,
  startHealthServer,
  type AgentOptions,
  type Labels,
  type Publisher,
} from '../../src/agent/index.js';
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
  it('is the interval without failures, then 1 s, 2 s, 4 s … capped at the interval', () => {
    const state = createAgentState();
    expect(nextDelayMs(state, 60_000)).toBe(60_000);
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 50, 10_000].map((failures) => nextDelayMs({ ...state, failures }, 60_000));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000]);
    expect(nextDelayMs({ ...state, failures: 3 }, 2500)).toBe(2500);
  });

  it('with jitter, a retry is shortened by at most that fraction; the interval itself is not', () => {
    const state = createAgentState();
    expect(nextDelayMs(state, 60_000, { jitter: 0.2 })).toBe(60_000);
    for (let i = 0; i < 50; i++) {
      const delay = nextDelayMs({ ...state, failures: 3 }, 60_000, { jitter: 0.2 });
      expect(delay).toBeGreaterThanOrEqual(3200);
      expect(delay).toBeLessThanOrEqual(4000);
    }
  });

  it('follows the failure count of real cycles and resets after a success', async () => {
    const state = createAgentState();
    let fail = true;
    const opts = options(memoryPublisher(), () => (fail ? Promise.reject(new Error('x')) : Promise.resolve(H100_X8)));
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      await runCycle(state, opts);
      delays.push(nextDelayMs(state, 60_000));
    }
    fail = false;
    await runCycle(state, opts);
    delays.push(nextDelayMs(state, 60_000));
    expect(delays).toEqual([1000, 2000, 4000, 8000, 60_000]);
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

  it('200 with lastDetection after a successful cycle; 503 once it is older than 3 intervals + 30 s; 404 elsewhere', async () => {
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

    now = new Date(Date.parse('2025-01-01T00:00:00.000Z') + 3 * INTERVAL + 30_000);
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
    now = new Date(now.getTime() + 3 * INTERVAL + 30_001);
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
