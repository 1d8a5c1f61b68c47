/**
 * @module Where one hook's time goes, phase by phase, on a generated cluster: decode, JSON.parse, the
 * depth bound, schema, sync, canonicalize, stringify (medians; a GC before each run of a body over
 * 1 MB, so a small hook runs warm as it does under load). For judging one change:
 * `node --expose-gc --import tsx bench/hooks/phases.ts [nodes=1000] [hook=scheduling-chain/sync] [runs=15]`
 */
import { hookTable } from '../../src/server/hooks.js';
import { canonicalize, pathPastDepth } from '../../src/k8s/index.js';
import { MAX_BODY_DEPTH } from '../../src/server/limits.js';
import { HOOKS, generateCluster, type HookName } from '../shared/cluster.js';
import { quantile } from '../shared/stats.js';

const [nodesArg = '1000', hookArg = 'scheduling-chain/sync', runsArg = '15'] = process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
const definition = hookTable().find(({ controller, kind }) => `${controller}/${kind}` === hookArg)?.definition;
if (!definition) throw new Error(`no hook ${hookArg}`);
const bytes = Buffer.from(generateCluster(Number(nodesArg)).bodies[hookArg as HookName]);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const times = new Map<string, number[]>();
function phase<T>(name: string, body: () => T): T {
  const started = performance.now();
  const result = body();
  times.set(name, [...(times.get(name) ?? []), performance.now() - started]);
  return result;
}
for (let i = 0; i < Number(runsArg); i++) {
  if (bytes.length > 1_000_000) gc();
  const started = performance.now();
  const text = phase('decode', () => new TextDecoder().decode(bytes));
  const body: unknown = phase('JSON.parse', () => JSON.parse(text));
  if (phase('depth bound', () => pathPastDepth(body, MAX_BODY_DEPTH)) !== undefined) throw new Error('too deep');
  const prepared = phase('schema', () => definition.prepare(body));
  if (!prepared.ok) throw new Error(`${hookArg}: the generated body fails its schema`);
  const outcome = phase('sync', () => prepared.run({ now: '2026-02-01T08:00:00Z' }));
  if (!outcome.ok) throw new Error(`${hookArg}: refused: ${outcome.error.message}`);
  const canonical = phase('canonicalize', () => canonicalize(outcome.response, { keepNull: definition.keepNull }));
  phase('stringify', () => JSON.stringify(canonical));
  times.set('total', [...(times.get('total') ?? []), performance.now() - started]);
}
process.stdout.write(
  `${nodesArg} nodes, ${hookArg}, ${(bytes.length / 1048576).toFixed(1)} MB, median of ${runsArg} (ms): ` +
    `${[...times].map(([name, values]) => `${name} ${quantile(values, 0.5) < 1 ? quantile(values, 0.5).toFixed(3) : quantile(values, 0.5).toFixed(2)}`).join(', ')}\n`,
);
