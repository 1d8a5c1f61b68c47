/**
 * @module `npm run bench -- --small-hooks`: only the small hooks (node-profile and instance-type sync,
 * the 100-node reference cluster), in process against their JSON floor and under load against the
 * floor route, with the load average beside the numbers. Prints a table; writes nothing. A quick
 * before/after for a change to the server's per-call costs (the full bench takes minutes).
 * Usage (run.ts starts it with the server's V8 flags): `node --expose-gc --import tsx bench/small-hooks.ts
 * [--samples=9] [--load-seconds=3] [--rounds=5]`
 */
import os from 'node:os';

import { generateCluster, type HookName } from './cluster.js';
import { createBenchApp, listen } from './http.js';
import { measureLoad } from './load.js';
import { round } from './stats.js';
import { floorSink, measureHook, type HookTiming } from './timing.js';

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
const server = await listen(app);
const timings: HookTiming[] = [];
try {
  for (const { hook } of SMALL) timings.push(await measureHook(hook, cluster.bodies[hook], samples, server.port, app));
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
