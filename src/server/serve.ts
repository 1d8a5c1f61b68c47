/** @module Runs the hook server: listens, logs one line per hook call, stops cleanly on SIGTERM/SIGINT. */
import { serve } from '@hono/node-server';
import { pino } from 'pino';
import { createApp, DEFAULT_MAX_BODY_BYTES } from './app.js';
import { hookRoutes } from './hooks.js';
import { createMetrics } from './metrics.js';

export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly maxBodyBytes?: number;
  readonly logLevel?: string;
}

/** Starts the server and resolves once it is closed by a signal. */
export function runServer(options: ServeOptions): Promise<void> {
  const logger = pino({ level: options.logLevel ?? 'info', base: undefined });
  const app = createApp({
    logger,
    metrics: createMetrics({ defaultMetrics: true }),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      const base = `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${info.port}`;
      logger.info(
        { port: info.port, host: options.host, routes: [...hookRoutes(), '/healthz', '/readyz', '/metrics'] },
        'hook server listening',
      );
      process.stdout.write(
        [
          `gpustack-operator hook server on ${base}`,
          ...hookRoutes().map((r) => `  POST ${r}`),
          '  GET  /healthz  /readyz  /metrics',
          'try:',
          `  curl -s -H 'content-type: application/json' -d @examples/hooks/scheduling-chain.sync.json ${base}/hooks/scheduling-chain/sync`,
          '',
        ].join('\n'),
      );
    });
    server.on('error', reject);
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      server.close(() => resolve());
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
