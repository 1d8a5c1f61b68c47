/**
 * The HTTP server around the app, on 127.0.0.1: its timeouts are the named ones of limits.ts (a
 * keep-alive that outlives Go's 90 s idle connections), and draining on shutdown lets a request in
 * flight finish while a stalled upload is cut at the drain bound.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  createApp,
  createHookServer,
  drainServer,
  startupBanner,
} from '../../src/server/index.js';

const BODY = JSON.stringify({ parent: { metadata: { name: 'someone-elses-check' } } });
const HEAD =
  'POST /hooks/node-devices-check/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${BODY.length}\r\n\r\n`;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A raw connection: what it received, a promise of its close, and one of its next answer. */
function open(port: number): {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
  /** Resolves once what it received matches `pattern`, or once it closes. */
  until: (pattern: RegExp) => Promise<void>;
} {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const waiting = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const check of waiting) check();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  const until = (pattern: RegExp) =>
    Promise.race([
      closed,
      new Promise<void>((resolve) => {
        const check = () => {
          if (!pattern.test(text)) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
      }),
    ]);
  return { socket, received: () => text, closed, until };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createHookServer', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('keeps idle connections longer than Go keeps its own (90 s), headers and requests bounded above that', () => {
    const server = createHookServer(createApp());

    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(90_000);
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(HEADERS_TIMEOUT_MS).toBeGreaterThan(KEEP_ALIVE_TIMEOUT_MS);
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(REQUEST_TIMEOUT_MS).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS);
  });

  it('draining: a request in flight finishes, its connection is closed after the answer', async () => {
    const server = createHookServer(createApp());
    servers.push(server);
    const client = open(await listen(server));
    const inFlight = once(server, 'request');
    client.socket.write(HEAD + BODY.slice(0, 10));
    await inFlight;

    const drained = drainServer(server, 10_000);
    await pause(50);
    client.socket.write(BODY.slice(10));
    await drained;
    // The server is done once it has written and closed; the client has read it all once it sees the close.
    await client.closed;

    expect(client.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{\}$/);
  });

  it('draining: a stalled upload is cut at the drain bound, and new connections are refused', async () => {
    const server = createHookServer(createApp());
    servers.push(server);
    const port = await listen(server);
    const stalled = open(port);
    const inFlight = once(server, 'request');
    stalled.socket.write(HEAD + BODY.slice(0, 10));
    await inFlight;
    let timedOut = false;

    const drained = drainServer(server, 300, () => {
      timedOut = true;
    });
    const late = open(port);
    const lateError = new Promise<string>((resolve) =>
      late.socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')),
    );
    await drained;

    expect(timedOut).toBe(true);
    await stalled.closed;
    expect(stalled.received()).toBe('');
    expect(await lateError).toBe('ECONNREFUSED');
  });

  it('a 429 for a full budget comes after the refused body is read, on a connection that stays open', async () => {
    const server = createHookServer(createApp({ maxBodyBytes: 10_000_000, maxInflightBytes: 1000 }));
    servers.push(server);
    const port = await listen(server);
    const holder = open(port);
    const holding = once(server, 'request');
    holder.socket.write(HEAD.replace(`Content-Length: ${BODY.length}`, 'Content-Length: 900') + BODY.slice(0, 10));
    await holding;
    const refused = open(port);
    let reset = false;
    refused.socket.on('error', () => {
      reset = true;
    });
    const length = 2_000_000;
    refused.socket.write(HEAD.replace(`Content-Length: ${BODY.length}`, `Content-Length: ${length}`));

    // A slow upload: 1 MB now, the rest after longer than any early-answer drain would wait.
    refused.socket.write(' '.repeat(1_000_000));
    await pause(800);
    expect(refused.received()).toBe('');
    refused.socket.write(' '.repeat(length - 1_000_000));
    await pause(300);
    refused.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await refused.until(/\{"status":"ok"\}$/);

    expect(reset).toBe(false);
    expect(refused.received()).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n[\s\S]*retry-after: 5\r\n/i);
    expect(refused.received()).toMatch(/HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/);
    holder.socket.destroy();
    refused.socket.destroy();
  });
});

describe('startupBanner', () => {
  it.each([
    {
      name: 'every IPv4 interface (the default): that, and the loopback URL',
      address: { address: '0.0.0.0', family: 'IPv4', port: 8090 },
      first:
        'gpustack-operator hook server listening on 0.0.0.0:8090 (every interface); from this machine: http://127.0.0.1:8090',
      base: 'http://127.0.0.1:8090',
    },
    {
      name: 'every interface (::): that, and the IPv6 loopback URL',
      address: { address: '::', family: 'IPv6', port: 8090 },
      first:
        'gpustack-operator hook server listening on [::]:8090 (every interface); from this machine: http://[::1]:8090',
      base: 'http://[::1]:8090',
    },
    {
      name: 'one address: its URL',
      address: { address: '10.1.2.3', family: 'IPv4', port: 9000 },
      first: 'gpustack-operator hook server on http://10.1.2.3:9000',
      base: 'http://10.1.2.3:9000',
    },
    {
      name: 'one IPv6 address: its URL, bracketed',
      address: { address: '::1', family: 'IPv6', port: 9000 },
      first: 'gpustack-operator hook server on http://[::1]:9000',
      base: 'http://[::1]:9000',
    },
  ])('$name', ({ address, first, base }) => {
    const lines = startupBanner(address).split('\n');

    expect(lines[0]).toBe(first);
    expect(lines).toContain(
      `  curl -s -H 'content-type: application/json' -d @examples/hooks/scheduling-chain.sync.json ${base}/hooks/scheduling-chain/sync`,
    );
  });

  it('names a URL that reaches the server it describes', async () => {
    const server = createHookServer(createApp());
    await listen(server);
    try {
      const base = /on (http:\/\/\S+)\n/.exec(startupBanner(server.address() as AddressInfo))?.[1];

      const answer = await fetch(`${base}/healthz`);

      expect(answer.status).toBe(200);
    } finally {
      server.close();
    }
  });
});
