/**
 * @module The recording hook proxy (harness/e2e/hook-proxy.ts) in a process of its own, so that the
 * bench driver's polling and rendering add nothing to a hook call's latency. Hooks on `--port`,
 * forwarded to `--targets` (one hook server, or the replicas in turn); a control port
 * (`--control-port`) answering `GET /sizes`, `GET /answered-by` and `POST /take-max` with JSON.
 * With `--calls FILE`, every paced call (node-shard and scheduling-chain sync) is appended to FILE
 * as a JSON line: which replica answered, when the request came, how long it took, and the hold
 * the pure pace gives that request at that second (bench/cluster/replicas.ts: `pacedCall`), worked
 * out in a worker thread: parsing a chain request of thousands of joining Nodes must not hold up the
 * calls the proxy forwards meanwhile.
 * Usage: `node --import tsx bench/cluster/hook-proxy-process.ts --targets URL[,URL…] --port P --control-port C [--calls FILE]`.
 */
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

import { startHookProxy, type ProxiedCall } from '../../harness/e2e/hook-proxy.js';
import { argument } from '../shared/process.js';
import { PACED_ROUTES, pacedCall } from './replicas.js';

function required(name: string): string {
  const value = argument(name);
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

/** The worker: each paced call it is sent, appended to the calls file with its expected hold. */
function recordCalls(file: string): void {
  parentPort?.on('message', (call: ProxiedCall) => {
    appendFileSync(file, `${JSON.stringify(pacedCall({ ...call, body: Buffer.from(call.body) }))}\n`);
  });
}

async function main(): Promise<void> {
  const calls = argument('calls');
  const recorder = calls === undefined ? undefined : new Worker(new URL(import.meta.url), { workerData: calls });
  recorder?.unref();
  const proxy = await startHookProxy(required('targets').split(','), {
    port: Number(required('port')),
    ...(recorder ? { onCallRoutes: PACED_ROUTES, onCall: (call: ProxiedCall) => recorder.postMessage(call) } : {}),
  });
  const control = http.createServer((req, res) => {
    const answer = (body: unknown): void => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/sizes') return answer(proxy.sizes());
    if (req.method === 'GET' && req.url === '/answered-by') return answer(proxy.answeredBy());
    if (req.method === 'POST' && req.url === '/take-max') return answer(proxy.takeMax());
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => control.listen(Number(required('control-port')), '127.0.0.1', resolve));
  process.stdout.write(`hook proxy ${proxy.url}, control http://127.0.0.1:${required('control-port')}\n`);
  const stop = (): void => {
    control.close();
    void proxy.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (isMainThread) await main();
else recordCalls(workerData as string);
