/**
 * @module Profiling aid: one sync function alone, warm, on an already parsed and validated request
 * (no JSON, no schema), so `--cpu-prof` sees the algebra only.
 * `node --cpu-prof --import tsx bench/hooks/sync-only.ts [nodes=5000] [hook=scheduling-chain/sync] [runs=20]`
 */
import { hookTable } from '../../src/server/hooks.js';
import { HOOKS, generateCluster, type HookName } from '../shared/cluster.js';
import { quantile } from '../shared/stats.js';

const [nodesArg = '5000', hookArg = 'scheduling-chain/sync', runsArg = '20'] = process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
const definition = hookTable().find(({ controller, kind }) => `${controller}/${kind}` === hookArg)?.definition;
if (!definition) throw new Error(`no hook ${hookArg}`);
const prepared = definition.prepare(JSON.parse(generateCluster(Number(nodesArg)).bodies[hookArg as HookName]));
if (!prepared.ok) throw new Error(`${hookArg}: the generated body fails its schema`);
const times: number[] = [];
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  const outcome = prepared.run({ now: '2026-02-01T08:00:00Z' });
  times.push(performance.now() - started);
  if (!outcome.ok) throw new Error(`${hookArg}: refused`);
}
process.stdout.write(
  `${nodesArg} nodes, ${hookArg}: sync ${(quantile(times, 0.5) * 1000).toFixed(1)} µs median, ${((times.reduce((a, b) => a + b, 0) / times.length) * 1000).toFixed(1)} µs mean of ${runsArg}\n`,
);
