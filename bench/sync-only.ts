/**
 * @module Profiling aid: one sync function alone, warm, on an already parsed and validated request
 * (no JSON, no schema), so `--cpu-prof` sees the algebra only.
 * `node --cpu-prof --import tsx bench/sync-only.ts [nodes=5000] [hook=scheduling-chain/sync] [runs=20]`
 */
import { HOOKS as DEFINITIONS, type ControllerName, type HookKind } from '../src/server/hooks.js';
import { HOOKS, generateCluster, type HookName } from './cluster.js';
import { quantile } from './stats.js';

const [nodesArg = '5000', hookArg = 'scheduling-chain/sync', runsArg = '20'] = process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
const [controller, kind] = hookArg.split('/') as [ControllerName, HookKind];
const definition = DEFINITIONS[controller][kind];
if (!definition) throw new Error(`no hook ${hookArg}`);
const parsed = definition.schema.safeParse(JSON.parse(generateCluster(Number(nodesArg)).bodies[hookArg as HookName]));
if (!parsed.success) throw new Error(`${hookArg}: the generated body fails its schema`);
const times: number[] = [];
for (let i = 0; i < Number(runsArg); i++) {
  const started = performance.now();
  const outcome = definition.run(parsed.data as never, { now: '2026-02-01T08:00:00Z' });
  times.push(performance.now() - started);
  if (!outcome.ok) throw new Error(`${hookArg}: refused`);
}
process.stdout.write(
  `${nodesArg} nodes, ${hookArg}: sync ${quantile(times, 0.5).toFixed(2)} ms (median of ${runsArg})\n`,
);
