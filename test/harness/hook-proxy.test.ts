import http from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { startHookProxy, type HookProxy, type ProxiedCall } from '../../harness/e2e/hook-proxy.js';
import { freePorts } from '../../harness/e2e/processes.js';

/** What an upstream saw of one request. */
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** A stand-in for one hook server replica: records each request, answers 201 with its name. */
async function replica(name: string): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(201, { 'content-type': 'application/json', 'x-replica': name });
      res.end(JSON.stringify({ replica: name }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const post = (url: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('the hook proxy in front of several hook server replicas', () => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function setup(targets: readonly string[], onCall?: (call: ProxiedCall) => void): Promise<HookProxy> {
    const proxy = await startHookProxy(targets, {
      ...(onCall ? { onCall, onCallRoutes: ['scheduling-chain/sync'] } : {}),
    });
    closing.push(() => proxy.close());
    return proxy;
  }

  it('sends each request to the next replica in turn and counts who answered per route', async () => {
    const [a, b] = [await replica('a'), await replica('b')];
    closing.push(a.close, b.close);
    const proxy = await setup([a.url, b.url]);
    const answers: string[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await post(`${proxy.url}/hooks/node-shard/sync`, `{"i":${i}}`);
      answers.push(((await response.json()) as { replica: string }).replica);
    }
    await post(`${proxy.url}/hooks/scheduling-chain/sync`, '{}');
    expect(answers).toEqual(['a', 'b', 'a', 'b']);
    expect(a.seen.map((s) => s.body)).toEqual(['{"i":0}', '{"i":2}', '{}']);
    expect(b.seen.map((s) => s.body)).toEqual(['{"i":1}', '{"i":3}']);
    // The fifth request, another route, went on in the same turn: to a.
    expect(proxy.answeredBy()).toEqual({ 'node-shard/sync': [2, 2], 'scheduling-chain/sync': [1, 0] });
    expect(proxy.sizes()['node-shard/sync']).toEqual({ count: 4, totalBytes: 28, maxBytes: 7 });
  });

  it('forwards method, path with its query, headers and body, and the answer as it came', async () => {
    const a = await replica('a');
    closing.push(a.close);
    const calls: ProxiedCall[] = [];
    const proxy = await setup([a.url], (call) => calls.push(call));
    const body = JSON.stringify({ parent: { metadata: { name: 'default' } } });
    const response = await post(`${proxy.url}/hooks/scheduling-chain/sync?timeout=90s`, body, {
      authorization: 'Bearer token-1',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-replica')).toBe('a');
    expect(await response.json()).toEqual({ replica: 'a' });
    const [seen] = a.seen;
    expect(seen?.method).toBe('POST');
    expect(seen?.url).toBe('/hooks/scheduling-chain/sync?timeout=90s');
    expect(seen?.headers['authorization']).toBe('Bearer token-1');
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.body).toBe(body);
    // The observed route's call, once its answer went back.
    await expect.poll(() => calls.length).toBe(1);
    expect(calls[0]).toMatchObject({ route: 'scheduling-chain/sync', upstream: 0, status: 201 });
    expect(calls[0]?.body.toString()).toBe(body);
  });

  it('answers 502 for a replica that is down, and the next request goes to the one that is up', async () => {
    const a = await replica('a');
    closing.push(a.close);
    const [down] = (await freePorts(1)) as [number];
    const proxy = await setup([`http://127.0.0.1:${down}`, a.url]);
    const failed = await post(`${proxy.url}/hooks/node-shard/sync`, '{}');
    expect(failed.status).toBe(502);
    expect(await failed.text()).toContain(`127.0.0.1:${down} failed`);
    const next = await post(`${proxy.url}/hooks/node-shard/sync`, '{}');
    expect(next.status).toBe(201);
    expect(proxy.answeredBy()).toEqual({ 'node-shard/sync': [1, 1] });
    expect(a.seen).toHaveLength(1);
  });

  it('refuses to start without a target', async () => {
    await expect(startHookProxy([])).rejects.toThrow('at least one target');
  });
});
