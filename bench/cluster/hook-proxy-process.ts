/**
 * @module The recording hook proxy (harness/e2e/hook-proxy.ts) in a process of its own, so that the
 * bench driver's polling and rendering add nothing to a hook call's latency. Hooks on `--port`,
 * a control port (`--control-port`) answering `GET /sizes` and `POST /take-max` with JSON.
 * Usage: `node --import tsx bench/cluster/hook-proxy-process.ts --target URL --port P --control-port C`.
 */
import http from 'node:http';

import { startHookProxy } from '../../harness/e2e/hook-proxy.js';
import { argument } from '../shared/process.js';

function required(name: string): string {
  const value = argument(name);
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const proxy = await startHookProxy(required('target'), { port: Number(required('port')) });
const control = http.createServer((req, res) => {
  const answer = (body: unknown): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'GET' && req.url === '/sizes') return answer(proxy.sizes());
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
