/** @module The bench's HTTP side: the hook server on 127.0.0.1 (port 0) and a keep-alive loopback client. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';

import { createApp } from '../../src/server/index.js';

/** The production app plus the bare route of bench/shared/server.mjs (`{}` without reading the body). */
export function createBenchApp(): Hono {
  const app = createApp() as unknown as Hono;
  app.post('/bench/bare', (c) => c.json({}));
  return app;
}

export interface RunningServer {
  readonly port: number;
  readonly server: ServerType;
  close(): Promise<void>;
}

export function listen(app: Hono): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      // Samples of the big sizes are seconds apart: past the default 5 s the server closes the idle
      // keep-alive socket, and a request racing that close fails with ECONNRESET.
      (server as http.Server).keepAliveTimeout = 10 * 60 * 1000;
      resolve({
        port: info.port,
        server,
        close: () =>
          new Promise((done) => {
            (server as http.Server).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** POSTs `body` (already encoded, with Content-Length, as Metacontroller's Go client sends it). */
export function post(port: number, path: string, body: Buffer): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export function get(port: number, path: string): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      })
      .on('error', reject);
  });
}
