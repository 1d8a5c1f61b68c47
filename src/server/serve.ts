/** @module Runs the hook server: listens, logs one line per hook call, stops cleanly on SIGTERM/SIGINT. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createProcessLogger, type LogLevel } from '../runtime/index.js';
import { createApp } from './app.js';
import { hookRoutes } from './hooks.js';
import {
  ASSUMED_MEMORY_LIMIT_BYTES,
  CONNECTIONS_CHECK_INTERVAL_MS,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DRAIN_IDLE_SWEEP_MS,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  inflightBudgetFor,
} from './limits.js';
import { createMetrics } from './metrics.js';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly maxBodyBytes?: number;
  /** @default derived from the container's memory limit ({@link readContainerMemoryLimit}) */
  readonly maxInflightBytes?: number | undefined;
  /** On SIGTERM/SIGINT, how long requests in flight may take before every connection is closed. */
  readonly drainTimeoutMs?: number;
  readonly logLevel?: LogLevel;
}

/** An HTTP server for `app` with the timeouts of src/server/limits.ts (not Node's defaults). */
export function createHookServer(app: Pick<Hono, 'fetch'>): Server {
  return createServer(
    {
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
    },
    getRequestListener(app.fetch),
  );
}

/**
 * Stops `server`: no new connections, idle ones closed now and as they go idle, requests in flight
 * given `drainTimeoutMs` to finish, then every connection closed. Resolves once all are closed.
 */
export function drainServer(server: Server, drainTimeoutMs: number, onTimeout: () => void = () => {}): Promise<void> {
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_IDLE_SWEEP_MS);
    const deadline = setTimeout(() => {
      onTimeout();
      server.closeAllConnections();
    }, drainTimeoutMs);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A memory limit and the file it was read from. */
export interface MemoryLimit {
  readonly bytes: number;
  readonly source: string;
}

/** cgroup v1 writes "no limit" as the largest page-aligned 64-bit count, 9223372036854771712. */
const CGROUP_V1_UNLIMITED = 2 ** 60;

function readNumber(path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    return /^\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The memory limit of the container this process runs in: cgroup v2 `memory.max`, else cgroup v1
 * `memory/memory.limit_in_bytes`, as a container sees them under `root`; undefined when unlimited
 * or unreadable (not in a container, or not on Linux).
 */
export function readContainerMemoryLimit(root = '/sys/fs/cgroup'): MemoryLimit | undefined {
  for (const file of ['memory.max', join('memory', 'memory.limit_in_bytes')]) {
    const path = join(root, file);
    const bytes = readNumber(path);
    if (bytes !== undefined && bytes > 0 && bytes < CGROUP_V1_UNLIMITED) return { bytes, source: path };
  }
  return undefined;
}

/** An address as a URL's host: IPv6 in brackets. */
function urlHost(address: string, family: string): string {
  return family === 'IPv6' ? `[${address}]` : address;
}

/**
 * What `serve` prints once it listens: where, the routes, and a curl to try. On a specific address
 * (`--host 127.0.0.1`) the URL of that address; on every interface (the default `0.0.0.0`, or
 * `::`) that, and a URL that reaches the server from this machine (the loopback address).
 * @example startupBanner({ address: '0.0.0.0', family: 'IPv4', port: 8090 }).split('\n')[0] // 'gpustack-operator hook server listening on 0.0.0.0:8090 (every interface); from this machine: http://127.0.0.1:8090'
 */
export function startupBanner({ address, family, port }: AddressInfo): string {
  const everywhere = address === '0.0.0.0' || address === '::';
  const local = everywhere ? (family === 'IPv6' ? '::1' : '127.0.0.1') : address;
  const base = `http://${urlHost(local, family)}:${port}`;
  return [
    everywhere
      ? `gpustack-operator hook server listening on ${urlHost(address, family)}:${port} (every interface); from this machine: ${base}`
      : `gpustack-operator hook server on ${base}`,
    ...hookRoutes().map((r) => `  POST ${r}`),
    '  GET  /healthz  /readyz  /metrics',
    'try:',
    `  curl -s -H 'content-type: application/json' -d @examples/hooks/scheduling-chain.sync.json ${base}/hooks/scheduling-chain/sync`,
    '',
  ].join('\n');
}

/** Starts the server and resolves once it is closed by a signal. */
export function runServer(options: ServeOptions): Promise<void> {
  const logger = createProcessLogger({ level: options.logLevel ?? 'info' });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const memory = readContainerMemoryLimit();
  const maxInflightBytes = options.maxInflightBytes ?? inflightBudgetFor(memory?.bytes ?? ASSUMED_MEMORY_LIMIT_BYTES);
  const app = createApp({ logger, metrics: createMetrics({ defaultMetrics: true }), maxBodyBytes, maxInflightBytes });
  const limits = {
    maxBodyBytes,
    maxInflightBytes,
    inflightFrom:
      options.maxInflightBytes !== undefined
        ? '--max-inflight-bytes'
        : (memory?.source ?? `no container memory limit: ${ASSUMED_MEMORY_LIMIT_BYTES} bytes assumed`),
    ...(memory ? { memoryLimitBytes: memory.bytes } : {}),
  };
  if (maxBodyBytes > maxInflightBytes)
    logger.warn(limits, 'a body over the in-flight budget is served only while no other is in flight');
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const server = createHookServer(app);
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(options.port, options.host, () => {
      const address = server.address() as AddressInfo;
      const { port } = address;
      logger.info(
        {
          port,
          host: options.host,
          routes: [...hookRoutes(), '/healthz', '/readyz', '/metrics'],
          ...limits,
          keepAliveTimeoutMs: server.keepAliveTimeout,
          headersTimeoutMs: server.headersTimeout,
          requestTimeoutMs: server.requestTimeout,
          drainTimeoutMs,
        },
        'hook server listening',
      );
      process.stdout.write(startupBanner(address));
    });
    const stop = (signal: string) => {
      logger.info({ signal, drainTimeoutMs }, 'shutting down: no new connections, finishing the requests in flight');
      void drainServer(server, drainTimeoutMs, () =>
        logger.warn({ drainTimeoutMs }, 'drain timeout: closing the connections still open'),
      ).then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
