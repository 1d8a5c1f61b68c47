/**
 * @module `GET /healthz` of the checker: 200 while every watch is live, 503 naming the ones that
 * are not. A checker whose watches are down decides on stale stores, so the kubelet should know.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { sendMetrics } from '../runtime/index.js';
import type { InformerStatus } from './informer.js';

export interface WatchHealth {
  readonly resource: string;
  readonly live: boolean;
  readonly synced: boolean;
  readonly streaming: boolean;
  readonly lastError: string | null;
}

export interface HealthReport {
  readonly healthy: boolean;
  /** Resources whose watch is not live. */
  readonly down: readonly string[];
  readonly watches: readonly WatchHealth[];
}

/**
 * A watch is live once its first list has succeeded and it is streaming now, or lost its stream
 * less than `graceMs` ago (the time a relist after a backoff takes: a server-side watch timeout or
 * one dropped connection is not an outage).
 */
export function isLive(status: InformerStatus, now: number, graceMs: number): boolean {
  if (!status.synced) return false;
  if (status.streaming || status.downSince === undefined) return true;
  return now - status.downSince < graceMs;
}

export function healthReport(statuses: readonly InformerStatus[], now: number, graceMs: number): HealthReport {
  const watches = statuses.map((s) => ({
    resource: s.resource,
    live: isLive(s, now, graceMs),
    synced: s.synced,
    streaming: s.streaming,
    lastError: s.lastError ?? null,
  }));
  const down = watches.filter((w) => !w.live).map((w) => w.resource);
  return { healthy: down.length === 0, down, watches };
}

export interface ProbeServerOptions {
  readonly report: () => HealthReport;
  readonly port: number;
  /** @default '0.0.0.0' */
  readonly host?: string;
  /** Served on `GET /metrics` (Prometheus text) when given. */
  readonly metrics?: Registry;
}

/** Serves the report on `GET /healthz` and the metrics on `GET /metrics`; everything else is 404. */
export function serveHealth(options: ProbeServerOptions): Promise<Server> {
  const { report, port, host = '0.0.0.0', metrics } = options;
  const server = createServer((req, res) => {
    const pathname = req.method === 'GET' ? new URL(req.url ?? '/', 'http://health').pathname : undefined;
    if (pathname === '/healthz') {
      const body = report();
      res.writeHead(body.healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } else if (pathname === '/metrics' && metrics) {
      sendMetrics(metrics, res);
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
