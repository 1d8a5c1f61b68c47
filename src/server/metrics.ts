/** @module Prometheus metrics of the hook server, on a registry of its own (one per app, so tests stay apart). */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createRegistry } from '../runtime/index.js';

export interface HookMetrics {
  readonly registry: Registry;
  readonly duration: Histogram<'controller' | 'hook'>;
  readonly requests: Counter<'controller' | 'hook' | 'code'>;
  readonly children: Counter<'controller' | 'kind'>;
  /** Requests answered 429 because the in-flight byte budget was full. */
  readonly busy: Counter<'controller' | 'hook'>;
  /** Bytes of request bodies being read or processed now. */
  readonly inflight: Gauge;
  /** Callers refused with 401, by why (no token, wrong token, no client certificate, …). */
  readonly refused: Counter<'reason'>;
  /** TLS connections set up: after a certificate rotation, Metacontroller's new ones show here. */
  readonly handshakes: Counter;
  /** Readings of changed credential files, put into service (`ok`) or refused (`failed`). */
  readonly reloads: Counter<'result'>;
  /** Callers let in by the previous token (--previous-token-file): while it rises, Metacontroller still sends the old one. */
  readonly previousToken: Counter;
}

/** Hook duration histogram, requests by status code, children emitted by kind (docs/architecture.md#hook-server), and the in-flight budget. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): HookMetrics {
  const registry = createRegistry(options);
  return {
    registry,
    duration: new Histogram({
      name: 'gpustack_hook_duration_seconds',
      help: 'Time to answer one hook call, body parse to response.',
      labelNames: ['controller', 'hook'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    requests: new Counter({
      name: 'gpustack_hook_requests_total',
      help: 'Hook calls by HTTP status code.',
      labelNames: ['controller', 'hook', 'code'],
      registers: [registry],
    }),
    children: new Counter({
      name: 'gpustack_hook_children_total',
      help: 'Desired children emitted, by kind.',
      labelNames: ['controller', 'kind'],
      registers: [registry],
    }),
    busy: new Counter({
      name: 'gpustack_hook_busy_total',
      help: 'Hook calls refused with 429 because the bytes of request bodies in flight were at the budget (--max-inflight-bytes).',
      labelNames: ['controller', 'hook'],
      registers: [registry],
    }),
    inflight: new Gauge({
      name: 'gpustack_hook_inflight_bytes',
      help: 'Bytes of hook request bodies being read or processed now (declared Content-Length, or --max-body when unknown).',
      registers: [registry],
    }),
    refused: new Counter({
      name: 'gpustack_hook_refused_total',
      help: 'Callers answered 401 because they lacked the credentials (--token-file, --client-ca), by reason.',
      labelNames: ['reason'],
      registers: [registry],
    }),
    handshakes: new Counter({
      name: 'gpustack_hook_tls_handshakes_total',
      help: 'TLS connections set up on the hook port.',
      registers: [registry],
    }),
    reloads: new Counter({
      name: 'gpustack_hook_credential_reloads_total',
      help: 'Changed credential files read: put into service (ok) or refused, the last good ones kept (failed).',
      labelNames: ['result'],
      registers: [registry],
    }),
    previousToken: new Counter({
      name: 'gpustack_hook_previous_token_total',
      help: 'Hook calls let in by the previous bearer token (--previous-token-file) during a token rotation.',
      registers: [registry],
    }),
  };
}
