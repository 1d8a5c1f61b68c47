/**
 * @module Profiling aid: runs one hook in-process on a generated cluster, so `--cpu-prof` sees only
 * the hook once the cluster is built. `node --cpu-prof --cpu-prof-dir=/tmp/gpustack-prof --import tsx
 * bench/hooks/profile.ts <hook> <nodes> <calls> [http]`; summarise with `bench/hooks/profile-summary.ts`.
 */
import { HOOKS, generateCluster, type HookName } from '../shared/cluster.js';
import { createBenchApp, listen, post } from '../shared/http.js';

const [hookArg = 'scheduling-chain/sync', nodesArg = '1000', callsArg = '5', mode = 'in-process'] =
  process.argv.slice(2);
if (!(HOOKS as readonly string[]).includes(hookArg)) throw new Error(`hook must be one of ${HOOKS.join(', ')}`);
const hook = hookArg as HookName;
const bytes = Buffer.from(generateCluster(Number(nodesArg)).bodies[hook]);
const app = createBenchApp();
const server = await listen(app);
const started = performance.now();
for (let i = 0; i < Number(callsArg); i++) {
  const status =
    mode === 'http'
      ? (await post(server.port, `/hooks/${hook}`, bytes)).status
      : (
          await app.request(`/hooks/${hook}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
            body: bytes,
          })
        ).status;
  if (status !== 200) throw new Error(`${hook}: ${status}`);
}
process.stdout.write(
  `${hook} × ${callsArg} (${mode}): ${((performance.now() - started) / Number(callsArg)).toFixed(2)} ms per call\n`,
);
await server.close();
