/**
 * The in-flight byte budget (issue 13 item 5): the bodies being read or processed at once are
 * bounded; a request that would pass the bound is a 429 with Retry-After, counted in the metrics,
 * while /healthz still answers and a request that fits is still served.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HOOKS, createApp, createMetrics, type HookMetrics } from '../../src/server/index.js';
import { exampleBody, post, read, type InMemoryApp } from './helpers.js';

const ROUTE = '/hooks/node-devices-check/sync';
const ROUTE_CHAIN = '/hooks/scheduling-chain/sync';
const SMALL = JSON.stringify({ parent: { metadata: { name: 'someone-elses-check' } } });

/** A request whose body arrives only when `finish()` is called, declared `length` bytes long. */
function heldRequest(app: InMemoryApp, length: number, declare = true) {
  let finish: () => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(SMALL.slice(0, 10)));
      let open = true;
      finish = () => {
        if (!open) return;
        open = false;
        controller.enqueue(new TextEncoder().encode(SMALL.slice(10)));
        controller.close();
      };
    },
  });
  const answer = Promise.resolve(
    app.request(ROUTE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(declare ? { 'content-length': String(length) } : {}) },
      body,
      duplex: 'half',
    } as RequestInit),
  ).then(read);
  return { answer, finish: () => finish() };
}

/** A complete request declaring `length` bytes. */
async function send(app: InMemoryApp, length: number) {
  return read(
    await app.request(ROUTE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(length) },
      body: SMALL,
    }),
  );
}

/** Lets the app start reading the held bodies. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('the in-flight byte budget', () => {
  let metrics: HookMetrics;
  let app: InMemoryApp;
  const held: { finish(): void }[] = [];
  beforeEach(() => {
    metrics = createMetrics();
    app = createApp({ metrics, maxBodyBytes: 1000, maxInflightBytes: 1000 });
  });
  afterEach(() => {
    for (const request of held.splice(0)) request.finish();
  });

  it('answers 429 + Retry-After to a request past the budget, healthz and a fitting request meanwhile', async () => {
    const first = heldRequest(app, 800);
    held.push(first);
    await settle();

    const refused = await send(app, 300);
    const health = await read(await app.request('/healthz'));
    const fits = await send(app, 150);

    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.json).toEqual({
      error: {
        code: 'ServerBusy',
        message:
          '800 bytes of request bodies are in flight and this one declares 300: over the budget of 1000 bytes (--max-inflight-bytes); retry after 5 s',
      },
    });
    expect(health.status).toBe(200);
    expect(fits.status).toBe(200);

    first.finish();
    expect((await first.answer).status).toBe(200);
    expect((await send(app, 300)).status).toBe(200);
    const text = await metrics.registry.metrics();
    expect(text).toContain('gpustack_hook_busy_total{controller="node-devices-check",hook="sync"} 1');
    expect(text).toContain('gpustack_hook_requests_total{controller="node-devices-check",hook="sync",code="429"} 1');
    expect(text).toContain('gpustack_hook_inflight_bytes 0');
  });

  it('counts a body of unknown length (chunked) as --max-body until it is read', async () => {
    const first = heldRequest(app, 0, false);
    held.push(first);
    await settle();

    const refused = await send(app, 1);

    expect(refused.status).toBe(429);
    expect(await metrics.registry.metrics()).toContain('gpustack_hook_inflight_bytes 1000');
  });

  it('serves a request larger than the budget when it is alone (--max-body bounds it)', async () => {
    app = createApp({ metrics, maxBodyBytes: 1000, maxInflightBytes: 100 });

    expect((await send(app, 500)).status).toBe(200);
  });

  it('frees the bytes of a request that failed', async () => {
    const bad = await read(
      await app.request(ROUTE, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '900' },
        body: '{',
      }),
    );

    expect(bad.status).toBe(400);
    expect((await send(app, 900)).status).toBe(200);
  });
});

describe('bodies over 1 MiB', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are parsed and answered one at a time (their phases never interleave)', async () => {
    const definition = HOOKS['scheduling-chain'].sync;
    const events: string[] = [];
    const prepare = definition.prepare.bind(definition);
    vi.spyOn(definition, 'prepare').mockImplementation((body) => {
      events.push(`check ${(body as { parent: { metadata: { uid: string } } }).parent.metadata.uid}`);
      return prepare(body);
    });
    const run = definition.run;
    vi.spyOn(definition, 'run').mockImplementation((request, context) => {
      events.push(`sync ${request.parent.metadata.uid ?? ''}`);
      return run(request, context);
    });
    const big = (uid: string) => {
      const body = exampleBody('scheduling-chain.sync.json') as {
        controller: Record<string, unknown>;
        parent: { metadata: Record<string, unknown> };
      };
      body.parent.metadata['uid'] = uid;
      body.controller['padding'] = 'x'.repeat(1100 * 1024);
      return JSON.stringify(body);
    };
    const send = (text: string) => post(app, ROUTE_CHAIN, text, { 'content-length': String(Buffer.byteLength(text)) });
    const app = createApp();

    const answers = await Promise.all([send(big('a')), send(big('b'))]);

    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(events).toEqual(['check a', 'sync a', 'check b', 'sync b']);
  });
});
