/**
 * @module Profiling aid: the hook server in its own process under autocannon load, profiled with
 * `--cpu-prof` (written when it exits), built from dist/ (`npm run build` first).
 * `tsx bench/profile-server.ts [hook] [seconds] [profile dir]`,
 * then `tsx bench/profile-summary.ts <dir>/<largest>.cpuprofile`.
 */
import autocannon from 'autocannon';

import { finished, spawnScript } from './child.js';
import { HOOKS, generateCluster, type HookName } from './cluster.js';

const [hookArg = 'instance-type/sync', secondsArg = '6', directory = '/tmp/gpustack-prof'] = process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
const body = generateCluster(100).bodies[hookArg as HookName];
const child = spawnScript('server.mjs', [], ['--cpu-prof', `--cpu-prof-dir=${directory}`]);
const exited = finished(child, 'bench/server.mjs');
const port = await new Promise<number>((resolve) =>
  child.stdout?.once('data', (line: Buffer) => resolve((JSON.parse(String(line)) as { port: number }).port)),
);
const result = await autocannon({
  url: `http://127.0.0.1:${port}/hooks/${hookArg}`,
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json' },
  connections: 8,
  duration: Number(secondsArg),
});
process.stdout.write(
  `${hookArg}: ${result.requests.average} requests/s, ${result.non2xx} non-2xx; profile in ${directory}\n`,
);
child.kill('SIGTERM');
await exited;
