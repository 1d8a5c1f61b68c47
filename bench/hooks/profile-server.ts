/**
 * @module Profiling aid: the hook server in its own process under autocannon load, profiled with
 * `--cpu-prof` (written when it exits), built from dist/ (`npm run build` first). `route` is `hook`
 * (the hook itself), `floor` (the load test's floor route for that hook: same body in, same response
 * out) or `bare`; `connections` defaults to the load test's one.
 * `tsx bench/hooks/profile-server.ts [hook] [seconds] [profile dir] [route] [connections]`,
 * then `tsx bench/hooks/profile-summary.ts <dir>/<largest>.cpuprofile`.
 */
import autocannon from 'autocannon';

import { SERVER_V8_FLAGS, finished, spawnScript } from '../shared/child.js';
import { HOOKS, generateCluster, type HookName } from '../shared/cluster.js';

const [
  hookArg = 'instance-type/sync',
  secondsArg = '6',
  directory = '/tmp/gpustack-prof',
  route = 'hook',
  connectionsArg = '1',
] = process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
if (!['hook', 'floor', 'bare'].includes(route)) throw new Error('route must be hook, floor or bare');
const body = generateCluster(100).bodies[hookArg as HookName];
const child = spawnScript('shared/server.mjs', [], [...SERVER_V8_FLAGS, '--cpu-prof', `--cpu-prof-dir=${directory}`]);
const exited = finished(child, 'bench/shared/server.mjs');
const port = await new Promise<number>((resolve) =>
  child.stdout?.once('data', (line: Buffer) => resolve((JSON.parse(String(line)) as { port: number }).port)),
);
const hookPath = `/hooks/${hookArg}`;
if (route === 'floor') {
  const answer = await fetch(`http://127.0.0.1:${port}${hookPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  await fetch(`http://127.0.0.1:${port}/bench/floor-response${hookPath}`, { method: 'PUT', body: await answer.text() });
}
const path = { hook: hookPath, floor: `/bench/floor${hookPath}`, bare: '/bench/bare' }[route];
const result = await autocannon({
  url: `http://127.0.0.1:${port}${path}`,
  method: 'POST',
  body,
  headers: { 'content-type': 'application/json' },
  connections: Number(connectionsArg),
  duration: Number(secondsArg),
});
process.stdout.write(
  `${path}: ${result.requests.average} requests/s, ${result.non2xx} non-2xx; profile in ${directory}\n`,
);
child.kill('SIGTERM');
await exited;
