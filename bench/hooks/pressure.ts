/**
 * @module Memory and liveness under pressure: `--concurrency` scheduling-chain requests of a
 * `--nodes` cluster sent at once to a real `gpustack-operator serve` process on 127.0.0.1, while
 * `/healthz` is asked every 100 ms on a fresh connection. A 429 is retried after its Retry-After,
 * as Metacontroller does. Prints the server's peak RSS (VmHWM), the /healthz latencies and what
 * each hook request got.
 * Usage: `npm run bench:pressure -- [--nodes 5000] [--concurrency 8] [--cli dist/src/cli/main.js] [-- serve flags…]`
 * (`--cli` runs another build, e.g. an older commit compiled elsewhere, for a before/after.)
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { ROOT, startServeChild } from '../shared/child.js';
import { generateCluster } from '../shared/cluster.js';
import { quantile } from '../shared/stats.js';

interface HookResult {
  readonly status: number;
  readonly attempts: number;
  readonly statuses: readonly number[];
  readonly seconds: number;
}

const MB = 1024 * 1024;

function vm(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

function request(
  port: number,
  method: 'GET' | 'POST',
  route: string,
  body?: Buffer,
): Promise<{ status: number; retryAfter?: number }> {
  return new Promise((resolve, reject) => {
    let answer: { status: number; retryAfter?: number } | undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: route,
        method,
        agent: false,
        headers: body ? { 'content-type': 'application/json', 'content-length': body.length } : {},
      },
      (res) => {
        const retry = Number(res.headers['retry-after']);
        answer = { status: res.statusCode ?? 0, ...(Number.isFinite(retry) ? { retryAfter: retry } : {}) };
        res.resume();
        res.on('end', () => resolve(answer as { status: number }));
        res.on('error', () => resolve(answer as { status: number }));
      },
    );
    // A server that answers early (429, 413) closes the connection before the whole body is
    // written: the answer counts (Go's client, Metacontroller's, returns it too); with none, -1.
    req.on('error', (error: NodeJS.ErrnoException) =>
      answer !== undefined || error.code === 'EPIPE' || error.code === 'ECONNRESET'
        ? resolve(answer ?? { status: -1 })
        : reject(error),
    );
    req.end(body);
  });
}

/** A GET's whole answer as text ('' when it fails). */
function text(port: number, route: string): Promise<string> {
  return new Promise((resolve) => {
    http
      .get({ host: '127.0.0.1', port, path: route, agent: false }, (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve(body));
      })
      .on('error', () => resolve(''));
  });
}

/** One sample of a Prometheus text exposition, times `scale`, rounded; null when absent. */
function metric(exposition: string, sample: string, scale = 1): number | null {
  const line = exposition.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? null : Math.round(Number(line.slice(sample.length + 1)) * scale * 1000) / 1000;
}

/** GCs of `kind` that took longer than `seconds` (from the histogram's buckets). */
function over(exposition: string, kind: string, seconds: number): number | null {
  const all = metric(exposition, `nodejs_gc_duration_seconds_count{kind="${kind}"}`);
  const within = metric(exposition, `nodejs_gc_duration_seconds_bucket{le="${seconds}",kind="${kind}"}`);
  return all === null || within === null ? null : all - within;
}

async function hook(port: number, body: Buffer, maxAttempts: number): Promise<HookResult> {
  const started = performance.now();
  const statuses: number[] = [];
  for (;;) {
    const answer = await request(port, 'POST', '/hooks/scheduling-chain/sync', body);
    statuses.push(answer.status);
    if (answer.status === 200 || statuses.length >= maxAttempts)
      return {
        status: answer.status,
        attempts: statuses.length,
        statuses,
        seconds: (performance.now() - started) / 1000,
      };
    await new Promise((r) => setTimeout(r, (answer.retryAfter ?? 1) * 1000));
  }
}

/** The server child as this bench uses it: its port, its pid for /proc, and a hard stop. */
async function startServer(
  cli: string,
  extra: readonly string[],
): Promise<{ port: number; pid: number; stop(): void }> {
  const { port, child } = await startServeChild(cli, extra);
  if (child.pid === undefined) throw new Error('serve has no pid');
  return { port, pid: child.pid, stop: () => child.kill('SIGKILL') };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      nodes: { type: 'string', default: '5000' },
      concurrency: { type: 'string', default: '8' },
      cli: { type: 'string', default: path.join('dist', 'src', 'cli', 'main.js') },
      attempts: { type: 'string', default: '60' },
    },
    allowPositionals: true,
  });
  const nodes = Number(values.nodes);
  const concurrency = Number(values.concurrency);
  process.stderr.write(`generating a ${nodes}-node cluster…\n`);
  const body = Buffer.from(generateCluster(nodes).bodies['scheduling-chain/sync']);
  const server = await startServer(path.resolve(ROOT, values.cli), positionals);
  try {
    const idleRss = vm(server.pid, 'VmRSS');
    let running = true;
    let sampledRss = 0;
    const health: number[] = [];
    const healthFailures: number[] = [];
    const poller = (async () => {
      while (running) {
        const started = performance.now();
        const answer = await request(server.port, 'GET', '/healthz').catch(() => ({ status: 0 }));
        const ms = performance.now() - started;
        if (answer.status === 200) health.push(ms);
        else healthFailures.push(answer.status);
        sampledRss = Math.max(sampledRss, vm(server.pid, 'VmRSS'));
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    process.stderr.write(`sending ${concurrency} × ${(body.length / MB).toFixed(1)} MiB at once…\n`);
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: concurrency }, () => hook(server.port, body, Number(values.attempts))),
    );
    const wallSeconds = (performance.now() - started) / 1000;
    running = false;
    await poller;
    const metrics = await text(server.port, '/metrics');
    const summary = {
      nodes,
      concurrency,
      requestMiB: Math.round((body.length / MB) * 10) / 10,
      serveFlags: positionals,
      cli: values.cli,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
      idleRssMiB: Math.round(idleRss / MB),
      peakRssMiB: Math.round(vm(server.pid, 'VmHWM') / MB),
      sampledPeakRssMiB: Math.round(sampledRss / MB),
      healthz: {
        answered: health.length,
        failed: healthFailures.length,
        maxMs: Math.round(Math.max(...health)),
        p50Ms: Math.round(quantile(health, 0.5)),
        p99Ms: Math.round(quantile(health, 0.99)),
        overOneSecond: health.filter((ms) => ms > 1000).length,
      },
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      // prom-client's default metrics of the server (null when an older build lacks them).
      eventLoopLagMaxMs: metric(metrics, 'nodejs_eventloop_lag_max_seconds', 1000),
      gc: {
        majorCount: metric(metrics, 'nodejs_gc_duration_seconds_count{kind="major"}'),
        majorSeconds: metric(metrics, 'nodejs_gc_duration_seconds_sum{kind="major"}'),
        majorOverOneSecond: over(metrics, 'major', 1),
        minorSeconds: metric(metrics, 'nodejs_gc_duration_seconds_sum{kind="minor"}'),
      },
      hooks: {
        ok: results.filter((r) => r.status === 200).length,
        first429: results.filter((r) => r.statuses[0] === 429).length,
        /** Answers lost to a reset connection (status -1): the client never saw the 429. */
        noAnswer: results.reduce((n, r) => n + r.statuses.filter((s) => s === -1).length, 0),
        attempts: results.map((r) => r.attempts),
        finalStatuses: results.map((r) => r.status),
        seconds: results.map((r) => Math.round(r.seconds * 10) / 10),
      },
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    server.stop();
  }
}

await main();
