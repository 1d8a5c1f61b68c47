/**
 * @module `npm run bench -- --small-hooks`: only the small hooks (node-profile and instance-type sync,
 * the 100-node reference cluster), in process against their JSON floor and under load against the
 * floor route, with the load average beside the numbers. In process, also against the floor route
 * run through `app.request()` (the fetch API's Request and body stream, which the Node adapter does not
 * use in the server): what the harness itself costs. Prints a table; writes nothing. A quick
 * before/after for a change to the server's per-call costs (the full bench takes minutes).
 * Usage (run.ts starts it with the server's V8 flags): `node --expose-gc --import tsx bench/hooks/small-hooks.ts
 * [--samples=9] [--load-seconds=3] [--rounds=5]`
 */
import os from 'node:os';

import { generateCluster, type HookName } from '../shared/cluster.js';
import { createBenchApp, listen } from '../shared/http.js';
import { measureLoad } from './load.js';
import { quantile, round } from '../shared/stats.js';
import { floorSink, lastCpuMsPerCall, measureHook, streamedPost, time, type HookTiming } from './timing.js';

const SMALL: readonly { readonly hook: HookName; readonly name: string }[] = [
  { hook: 'node-profile/sync', name: 'node-profile sync (one Node)' },
  { hook: 'instance-type/sync', name: 'instance-type sync (one pool, 100-node cluster)' },
];

function option(name: string, fallback: number): number {
  const prefix = `--${name}=`;
  const text = process.argv.find((a) => a.startsWith(prefix))?.slice(prefix.length);
  return text === undefined ? fallback : Number(text);
}

const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

const samples = option('samples', 9);
const seconds = option('load-seconds', 3);
const rounds = option('rounds', 5);
const started = loadAverage();
const cluster = generateCluster(100);
const app = createBenchApp();
const floorAnswers = new Map<string, string>();
// The floor route of bench/shared/server.mjs, in process: reads and parses the body, answers the hook's answer.
app.post('/bench/floor/*', async (c) => {
  const body = JSON.parse(await c.req.text()) as unknown;
  return c.body(body ? (floorAnswers.get(c.req.path.slice('/bench/floor'.length)) ?? '') : '', 200, {
    'content-type': 'application/json',
  });
});
const server = await listen(app);
const timings: HookTiming[] = [];
/** CPU µs per call in process: the floor route and the hook through `app.request()`, alternating. */
const harness: { floorRouteUs: number; hookUs: number }[] = [];
try {
  for (const { hook } of SMALL) {
    const timing = await measureHook(hook, cluster.bodies[hook], samples, server.port, app);
    timings.push(timing);
    const bytes = Buffer.from(cluster.bodies[hook]);
    const request = (path: string) => async () => {
      const response = await app.request(path, streamedPost(bytes));
      return response.text();
    };
    floorAnswers.set(`/hooks/${hook}`, await request(`/hooks/${hook}`)());
    const floorRoute: number[] = [];
    const hooked: number[] = [];
    for (let i = 0; i < samples; i++) {
      await time(timing.batch, request(`/bench/floor/hooks/${hook}`));
      floorRoute.push(lastCpuMsPerCall() * 1000);
      await time(timing.batch, request(`/hooks/${hook}`));
      hooked.push(lastCpuMsPerCall() * 1000);
    }
    harness.push({ floorRouteUs: quantile(floorRoute, 0.5), hookUs: quantile(hooked, 0.5) });
  }
} finally {
  await server.close();
}
const load =
  seconds > 0
    ? await measureLoad(
        SMALL.map(({ hook, name }) => ({ name, path: `/hooks/${hook}`, body: cluster.bodies[hook] })),
        seconds,
        rounds,
      )
    : [];
const lines = [
  `load average (1/5/15 min) ${started} at the start, ${loadAverage()} at the end`,
  '',
  '| hook | floor µs | in-process µs | HTTP µs | in-process / floor | CPU in-process / floor | samples × calls |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...SMALL.map(({ name }, i) => {
    const t = timings[i] as HookTiming;
    return (
      `| ${name} | ${round(t.floorMs.median * 1000)} | ${round(t.inProcessMs.median * 1000)} | ${round(t.httpMs.median * 1000)} ` +
      `| ${(t.inProcessMs.median / t.floorMs.median).toFixed(2)} | ${(t.cpuMs.inProcess.median / t.cpuMs.floor.median).toFixed(2)} ` +
      `| ${t.floorMs.n} × ${t.batch} |`
    );
  }),
];
lines.push(
  '',
  'in process, CPU per call: the JSON floor, the floor route through app.request() (the harness: Request, body stream, hono), the hook',
  '',
  '| hook | JSON floor µs | floor route in process µs | hook µs | hook / floor route |',
  '|---|---:|---:|---:|---:|',
  ...SMALL.map(({ name }, i) => {
    const t = timings[i] as HookTiming;
    const h = harness[i] as (typeof harness)[number];
    return `| ${name} | ${round(t.cpuMs.floor.median * 1000)} | ${round(h.floorRouteUs)} | ${round(h.hookUs)} | ${(h.hookUs / h.floorRouteUs).toFixed(2)} |`;
  }),
);
if (load.length > 0)
  lines.push(
    '',
    `under load: ${rounds} × ${seconds} s, alternating bare / floor route / hook, one keep-alive connection`,
    '',
    '| hook | hook rps | floor route rps | hook / floor (median of rounds) | bare rps | hook p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...load.map(
      (l) =>
        `| ${l.name} | ${round(l.hookRps.median)} | ${round(l.floorRps.median)} | ${l.ratio.toFixed(2)} | ${round(l.bareRps.median)} | ${round(l.hookLatencyP99Ms)} |`,
    ),
  );
process.stdout.write(`${lines.join('\n')}\n`);
if (floorSink() < 0) process.stdout.write('');
