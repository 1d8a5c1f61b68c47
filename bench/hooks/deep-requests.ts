/**
 * @module Deeply nested requests against `serve` in its own process on 127.0.0.1 (issue 23): for
 * 2,000, 20,000 and 100,000 levels in every part of every route's request, the time to the whole
 * answer and the slowest /healthz asked, one after another on another connection, while it was in
 * flight; then how long a SIGTERM takes with a 100,000-level request in flight. Prints a table;
 * writes nothing. `npm run build` first, then `npx tsx bench/hooks/deep-requests.ts [--cli dist/src/cli/main.js]`.
 */
import http from 'node:http';
import os from 'node:os';

import { EXAMPLE_ROUTES, REQUEST_PARTS, deepRequest } from '../../harness/hooks/examples.js';
import { startServeChild } from '../shared/child.js';

const DEPTHS = [2_000, 20_000, 100_000];
const cliAt = process.argv.indexOf('--cli');
const cli = cliAt === -1 ? 'dist/src/cli/main.js' : (process.argv[cliAt + 1] ?? '');

interface Timed {
  readonly status: number;
  readonly ms: number;
}

const probes = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One request; `sent` resolves once its whole body is handed to the socket. */
function send(
  port: number,
  method: string,
  path: string,
  body?: string,
  agent: http.Agent | false = false,
): { sent: Promise<void>; answer: Promise<Timed> } {
  const started = performance.now();
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<Timed>((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body, markSent);
  });
  return { sent, answer };
}

/** The deep request's answer, and the /healthz latencies of the probes started before it came. */
async function measure(port: number, route: string, text: string): Promise<{ answer: Timed; healthz: number[] }> {
  const deep = send(port, 'POST', route, text);
  await deep.sent;
  let answered = false;
  const healthz: number[] = [];
  const probing = (async () => {
    do {
      const probe = await send(port, 'GET', '/healthz', undefined, probes).answer;
      if (probe.status !== 200) throw new Error(`/healthz answered ${probe.status}`);
      healthz.push(probe.ms);
    } while (!answered);
  })();
  const answer = await deep.answer;
  answered = true;
  await probing;
  return { answer, healthz };
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
const loadBefore = load();
const { port, child } = await startServeChild(cli);
const rows: string[] = [];
let slowest = { ms: 0, what: '' };
let slowestHealthz = { ms: 0, what: '' };
for (const depth of DEPTHS) {
  for (const { route, file, kind } of EXAMPLE_ROUTES) {
    for (const part of REQUEST_PARTS[kind === 'customize' ? 'customize' : kind]) {
      const { text } = deepRequest(file, part, depth);
      const { answer, healthz } = await measure(port, route, text);
      const worst = Math.max(...healthz);
      const what = `${depth} levels, ${route} ${part}`;
      if (answer.ms > slowest.ms) slowest = { ms: answer.ms, what };
      if (worst > slowestHealthz.ms) slowestHealthz = { ms: worst, what };
      rows.push(
        `| ${depth.toLocaleString('en-US')} | ${route} | ${part} | ${(text.length / 1024).toFixed(0)} KB | ${answer.status} | ` +
          `${answer.ms.toFixed(1)} | ${worst.toFixed(1)} (${healthz.length}) |`,
      );
    }
  }
}

// SIGTERM with a 100,000-level chain request in flight.
const { text } = deepRequest('scheduling-chain.sync.json', 'parent', 100_000);
const inFlight = send(port, 'POST', '/hooks/scheduling-chain/sync', text);
await inFlight.sent;
const exited = new Promise<number | null>((resolve) => child.on('exit', (code: number | null) => resolve(code)));
const stoppedAt = performance.now();
child.kill('SIGTERM');
const code = await exited;
const stopMs = performance.now() - stoppedAt;
const lastAnswer = await inFlight.answer.then(
  (a) => String(a.status),
  (error: Error) => error.message,
);
probes.destroy();

process.stdout.write(
  [
    `load average ${loadBefore} before, ${load()} after (${os.cpus().length} CPUs)`,
    '',
    '| levels | route | part | body | status | answer ms | slowest /healthz ms (probes) |',
    '|---:|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `slowest answer: ${slowest.ms.toFixed(1)} ms (${slowest.what}); slowest /healthz: ${slowestHealthz.ms.toFixed(1)} ms (${slowestHealthz.what})`,
    `SIGTERM with a 100,000-level chain request in flight: exit ${code} after ${stopMs.toFixed(0)} ms; that request: ${lastAnswer}`,
    '',
  ].join('\n'),
);
