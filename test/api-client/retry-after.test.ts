/**
 * `Retry-After` on the client's errors (API Priority and Fairness answers 429 with it, a server
 * shedding load 503), and which errors say the server is unavailable to everyone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  MAX_RETRY_AFTER_MS,
  createKubeApi,
  retryAfterMs,
  serverUnavailable,
} from '../../src/api-client/index.js';
import { kubeConfigFor } from '../admission/support.js';

let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/busy')) {
      res
        .writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' })
        .end('{"reason":"TooManyRequests"}');
    } else if (req.url?.startsWith('/starting')) {
      res.writeHead(503, { 'retry-after': '1' }).end('starting');
    } else res.writeHead(403).end('forbidden');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('the API client', () => {
  it("puts the answer's Retry-After on its error, for a request and for a watch", async () => {
    const api = createKubeApi(kubeConfigFor(url));
    const busy = await api.get('/busy').catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(ApiError);
    expect(busy).toMatchObject({ status: 429, retryAfterMs: 3000 });
    expect((busy as Error).message).toContain('HTTP 429 (retry after 3 s)');
    const watch = await api.watch('/starting', { resourceVersion: '1' }, () => undefined).catch((e: unknown) => e);
    expect(watch).toMatchObject({ status: 503, retryAfterMs: 1000 });
    const refused = await api.replace('/other', {}).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 403, retryAfterMs: undefined });
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and an HTTP date, capped, and nothing else', () => {
    const now = Date.parse('2026-12-05T08:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Sat, 05 Dec 2026 08:00:10 GMT', now)).toBe(10_000);
    expect(retryAfterMs('Sat, 05 Dec 2026 07:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect([undefined, '', 'soon', '-1', '1.5'].map((h) => retryAfterMs(h, now))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('serverUnavailable', () => {
  const socket = (code: string) => Object.assign(new Error(code), { code });

  it('is true for an unreachable server, 429 and 5xx; false for a refusal of this request or a local failure', () => {
    expect(serverUnavailable(socket('ECONNREFUSED'))).toBe(true);
    expect(serverUnavailable(socket('ETIMEDOUT'))).toBe(true);
    expect(serverUnavailable(new ApiError(429, 'GET', '/x', ''))).toBe(true);
    expect(serverUnavailable(new ApiError(503, 'GET', '/x', ''))).toBe(true);
    expect(serverUnavailable(new ApiError(403, 'PATCH', '/x', ''))).toBe(false);
    expect(serverUnavailable(new ApiError(409, 'PUT', '/x', ''))).toBe(false);
    expect(serverUnavailable(socket('ENOSPC'))).toBe(false);
    expect(serverUnavailable(new Error('not JSON'))).toBe(false);
  });
});
