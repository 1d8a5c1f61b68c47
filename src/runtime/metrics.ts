import type { ServerResponse } from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A registry of one process's own (one per app or checker, so tests stay apart), with Node.js's process metrics if asked. */
export function createRegistry(options: { defaultMetrics?: boolean | undefined } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Answers a `GET /metrics` from a plain `node:http` server (the agent's and the checker's probe ports). */
export function sendMetrics(registry: Registry, res: ServerResponse): void {
  registry.metrics().then(
    (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
    () => res.writeHead(500).end(),
  );
}

/** A counter on `registry`: name, help and label names, the rest prom-client's defaults. */
export function counterOn<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** A histogram of seconds on `registry`, with the buckets the caller's durations need. */
export function secondsOn(registry: Registry, name: string, help: string, buckets: readonly number[]): Histogram {
  return new Histogram({ name, help, buckets: [...buckets], registers: [registry] });
}
