/** @module Runs the hook server: listens, logs one line per hook call, stops cleanly on SIGTERM/SIGINT. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { createProcessLogger, type LogLevel } from '../runtime/index.js';
import { createApp, createServiceApp } from './app.js';
import {
  callerRequirements,
  credentialsChanged,
  readCredentials,
  secureContextOptions,
  type CredentialFiles,
  type Credentials,
} from './credentials.js';
import { hookRoutes } from './hooks.js';
import {
  ASSUMED_MEMORY_LIMIT_BYTES,
  CONNECTIONS_CHECK_INTERVAL_MS,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  CREDENTIALS_POLL_MS,
  DRAIN_IDLE_SWEEP_MS,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  inflightBudgetFor,
} from './limits.js';
import { createMetrics } from './metrics.js';
import { DEFAULT_JOIN_PACING_SECONDS, JoinPacing, PACED_HOOK_TIMEOUT_SECONDS } from './join-pacing.js';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  /** The longest hold of a shard or chain sync while Nodes join (src/server/join-pacing.ts); 0: none. @default 60 s */
  readonly joinPacingMs?: number;
  /** The timeout the manifests give the paced hooks: every hold ends before it. @default 90 s */
  readonly hookTimeoutMs?: number;
  readonly maxBodyBytes?: number;
  /** @default derived from the container's memory limit ({@link readContainerMemoryLimit}) */
  readonly maxInflightBytes?: number | undefined;
  /** On SIGTERM/SIGINT, how long requests in flight may take before every connection is closed. */
  readonly drainTimeoutMs?: number;
  readonly logLevel?: LogLevel;
  /** HTTPS, client certificates, bearer token: each file given turns its part on. @default none: plain HTTP, anyone may call */
  readonly credentials?: CredentialFiles;
  /** Serve /healthz, /readyz and /metrics on this port (plain HTTP, no credentials) instead of the hook port. */
  readonly healthPort?: number | undefined;
  /** How often the credential files are read again for a change. @default {@link CREDENTIALS_POLL_MS} */
  readonly credentialsPollMs?: number;
}

const SERVER_OPTIONS = {
  keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  headersTimeout: HEADERS_TIMEOUT_MS,
  requestTimeout: REQUEST_TIMEOUT_MS,
  connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
};

/**
 * An HTTP server for `app` with the timeouts of src/server/limits.ts (not Node's defaults); HTTPS
 * with the certificate of `credentials` when they hold one, asking for a client certificate when
 * they hold a client CA (its verdict is judged per request, so a caller without one gets a 401, not
 * a failed handshake).
 */
export function createHookServer(app: Pick<Hono, 'fetch'>, credentials: Credentials = {}): Server | HttpsServer {
  if (credentials.tls === undefined) return createServer(SERVER_OPTIONS, getRequestListener(app.fetch));
  return createHttpsServer(
    {
      ...SERVER_OPTIONS,
      ...secureContextOptions(credentials),
      minVersion: 'TLSv1.2',
      ...(credentials.tls.ca ? { requestCert: true, rejectUnauthorized: false } : {}),
    },
    getRequestListener(app.fetch),
  );
}

/** What {@link watchCredentials} reports. */
export interface CredentialEvents {
  readonly changed: (credentials: Credentials) => void;
  readonly failed: (error: Error) => void;
}

/**
 * Reads the credential files every `pollMs` and hands a changed reading to `events.changed`; a
 * reading that fails (a file half-written, a key that does not fit its certificate) goes to
 * `events.failed` and the last good one stays. Polling, not fs.watch: a Secret volume swaps a
 * symlink to a new folder, which no watch on the files sees. Returns the stop function.
 */
export function watchCredentials(
  files: CredentialFiles,
  current: Credentials,
  pollMs: number,
  events: CredentialEvents,
): () => void {
  let last = current;
  const timer = setInterval(() => {
    let next: Credentials;
    try {
      next = readCredentials(files);
    } catch (error) {
      events.failed(error as Error);
      return;
    }
    if (!credentialsChanged(last, next)) return;
    try {
      events.changed(next);
      last = next;
    } catch (error) {
      events.failed(error as Error);
    }
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Puts rotated credentials into service: a new TLS context for the connections that open from now
 * on (a request in flight finishes on its own, nothing is dropped), the new token for the requests
 * from now on.
 * Throws, keeping the old ones, when the certificate and key do not fit together.
 */
export function applyCredentials(
  server: Server | HttpsServer,
  next: Credentials,
  hold: { current: Credentials },
): void {
  if (next.tls !== undefined && 'setSecureContext' in server) {
    server.setSecureContext(secureContextOptions(next));
    // Idle keep-alive connections still speak the old handshake: closed, so that the clients'
    // next calls verify the new certificate (Go retries a request on a connection the server
    // closed while idle). Requests in flight finish on theirs.
    server.closeIdleConnections();
  }
  hold.current = next;
}

/**
 * Stops `server`: no new connections, idle ones closed now and as they go idle, requests in flight
 * given `drainTimeoutMs` to finish, then every connection closed. Resolves once all are closed.
 */
export function drainServer(
  server: Server | HttpsServer,
  drainTimeoutMs: number,
  onTimeout: () => void = () => {},
): Promise<void> {
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
export function startupBanner(
  { address, family, port }: AddressInfo,
  served: { readonly tls?: boolean; readonly healthPort?: number | undefined } = {},
): string {
  const everywhere = address === '0.0.0.0' || address === '::';
  const local = everywhere ? (family === 'IPv6' ? '::1' : '127.0.0.1') : address;
  const base = `${served.tls ? 'https' : 'http'}://${urlHost(local, family)}:${port}`;
  const service = served.healthPort === undefined ? '' : ` on http://${urlHost(local, family)}:${served.healthPort}`;
  return [
    everywhere
      ? `gpustack-operator hook server listening on ${urlHost(address, family)}:${port} (every interface); from this machine: ${base}`
      : `gpustack-operator hook server on ${base}`,
    ...hookRoutes().map((r) => `  POST ${r}`),
    `  GET  /healthz  /readyz  /metrics${service}`,
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
  const files = options.credentials ?? {};
  const hold = { current: readCredentials(files) };
  const clientCertificate = files.clientCaFile !== undefined;
  const checked = clientCertificate || files.tokenFile !== undefined;
  const metrics = createMetrics({ defaultMetrics: true });
  // Counted every time, logged once per reading of the files: a rotation's progress, not a line per hook call.
  let previousTokenLogged = false;
  const onPreviousToken = () => {
    metrics.previousToken.inc();
    if (previousTokenLogged) return;
    previousTokenLogged = true;
    logger.info(
      { previousTokenFile: files.previousTokenFile },
      'a caller sent the previous bearer token: Metacontroller has not read the new one yet (docs/operations.md#token-rotation)',
    );
  };
  const pacing = new JoinPacing({
    maxHoldSeconds: (options.joinPacingMs ?? DEFAULT_JOIN_PACING_SECONDS * 1000) / 1000,
    hookTimeoutSeconds: (options.hookTimeoutMs ?? PACED_HOOK_TIMEOUT_SECONDS * 1000) / 1000,
  });
  const app = createApp({
    logger,
    metrics,
    pacing,
    maxBodyBytes,
    maxInflightBytes,
    serviceRoutes: options.healthPort === undefined,
    ...(checked ? { callers: () => callerRequirements(hold.current, clientCertificate, onPreviousToken) } : {}),
  });
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
  if (hold.current.tls === undefined && options.host !== '127.0.0.1' && options.host !== '::1')
    logger.warn(
      { host: options.host },
      'hooks served over plain HTTP: anyone who can answer at the hook URL decides what Metacontroller writes (--tls-cert, --tls-key)',
    );
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS;
  const server = createHookServer(app, hold.current);
  const health = options.healthPort === undefined ? undefined : createHookServer(createServiceApp(metrics));
  const stopWatching = watchCredentials(files, hold.current, options.credentialsPollMs ?? CREDENTIALS_POLL_MS, {
    changed: (next) => {
      applyCredentials(server, next, hold);
      previousTokenLogged = false;
      metrics.reloads.inc({ result: 'ok' });
      logger.info(
        { files, previousToken: next.previousTokenDigest !== undefined },
        'credentials reloaded: new connections use them',
      );
    },
    failed: (error) => {
      metrics.reloads.inc({ result: 'failed' });
      logger.warn({ err: { message: error.message } }, 'credentials not reloaded; the last good ones stay');
    },
  });
  server.on('secureConnection', () => metrics.handshakes.inc());
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    health?.on('error', reject);
    health?.listen(options.healthPort, options.host);
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
          tls: hold.current.tls !== undefined,
          clientCertificate,
          bearerToken: files.tokenFile !== undefined,
          previousToken: hold.current.previousTokenDigest !== undefined,
          ...(options.healthPort !== undefined ? { healthPort: options.healthPort } : {}),
        },
        'hook server listening',
      );
      process.stdout.write(
        startupBanner(address, { tls: hold.current.tls !== undefined, healthPort: options.healthPort }),
      );
    });
    const stop = (signal: string) => {
      logger.info({ signal, drainTimeoutMs }, 'shutting down: no new connections, finishing the requests in flight');
      stopWatching();
      pacing.stop();
      health?.close();
      health?.closeAllConnections();
      void drainServer(server, drainTimeoutMs, () =>
        logger.warn({ drainTimeoutMs }, 'drain timeout: closing the connections still open'),
      ).then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
