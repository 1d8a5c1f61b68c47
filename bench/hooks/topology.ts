/**
 * @module `npm run bench:topology` (issue 44): the hooks' cost with topology levels and without.
 * One cluster per size (the hooks bench's mix of kinds, `generateNodes`), its Nodes in GKE blocks
 * and racks (`bench/admission/topology.ts`) in both cases — only the chain's `topology.mode`
 * differs — converged by `renderChain`; then each hook's request (`topology-bodies.ts`) is timed
 * in process, the off and on bodies in turn per sample so both see the same load. The question:
 * does any request grow with the cluster beyond what it does today?
 * Options: `--sizes=1000,5000,10000`, `--samples=7`, `--no-write`. Results in
 * `bench/results/topology-<date>.json`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { DEFAULT_SHAPE, withDomainLabels } from '../admission/topology.js';
import { BENCH_DIR } from '../shared/child.js';
import { generateNodes } from '../shared/cluster-nodes.js';
import { namespaceCount } from '../shared/cluster.js';
import { createBenchApp } from '../shared/http.js';
import { logger, option } from '../shared/process.js';
import { resultsHeader } from '../shared/results-header.js';
import { summarize } from '../shared/stats.js';
import { lastCpuMsPerCall, streamedPost, time } from './timing.js';
import { TOPOLOGY_HOOKS, topologyBodies, type TopologyBodies } from './topology-bodies.js';
import { topologyTables, type TopologyCase } from './topology-report.js';

const log = logger('topology');

async function main(): Promise<void> {
  const started = performance.now();
  const loadAverageStart = os.loadavg();
  const sizes = option('sizes', '1000,5000,10000').split(',').map(Number);
  const samples = Number(option('samples', '7'));
  const write = !process.argv.includes('--no-write');
  const app = createBenchApp();
  const cases: TopologyCase[] = [];
  for (const size of sizes) {
    const nodes = generateNodes(size).map((node, i) => withDomainLabels(node, i, DEFAULT_SHAPE));
    const namespaces = Array.from({ length: namespaceCount(size) }, (_, i) => (i === 0 ? 'default' : `team-${i}`));
    const scenes: TopologyBodies[] = [false, true].map((topology) => topologyBodies(nodes, namespaces, topology));
    log(`${size} nodes: ${scenes.map((s) => `${s.flavors} flavors, ${s.topologies} Topologies`).join(' / ')}`);
    const timings = scenes.map(() => new Map<string, { wall: number[]; cpu: number[]; batch: number }>());
    for (const hook of TOPOLOGY_HOOKS) {
      const calls = scenes.map((scene) => {
        const bytes = Buffer.from(scene.bodies[hook]);
        return async () => {
          const response = await app.request(`/hooks/${hook}/sync`, streamedPost(bytes));
          const text = await response.text();
          if (response.status !== 200) throw new Error(`${hook}: ${response.status} ${text.slice(0, 300)}`);
        };
      });
      // Warm-up, then a batch sized to ~100 ms of the slower body.
      for (const call of calls) for (let i = 0; i < 20; i++) await call();
      const estimate = Math.max(...(await Promise.all(calls.map((call) => time(3, call)))));
      const batch = Math.max(1, Math.min(500, Math.round(100 / Math.max(estimate, 0.001))));
      const per = calls.map(() => ({ wall: [] as number[], cpu: [] as number[], batch }));
      for (let i = 0; i < samples; i++) {
        const order = i % 2 === 0 ? [0, 1] : [1, 0];
        for (const which of order) {
          per[which]?.wall.push(await time(batch, calls[which] as () => Promise<void>));
          per[which]?.cpu.push(lastCpuMsPerCall());
        }
      }
      per.forEach((p, which) => timings[which]?.set(hook, p));
    }
    scenes.forEach((scene, which) => {
      cases.push({
        nodes: size,
        topology: scene.topology,
        flavors: scene.flavors,
        topologies: scene.topologies,
        summaryGroups: scene.summaryGroups,
        shards: scene.shards,
        hooks: TOPOLOGY_HOOKS.map((hook) => {
          const measured = timings[which]?.get(hook) ?? { wall: [], cpu: [], batch: 0 };
          return {
            hook,
            requestBytes: Buffer.byteLength(scene.bodies[hook]),
            inProcessMs: summarize(measured.wall),
            cpuMs: summarize(measured.cpu),
            batch: measured.batch,
          };
        }),
      });
    });
  }
  const results = { ...resultsHeader(started, loadAverageStart, ['src']), samples, cases };
  process.stdout.write(`${topologyTables(cases)}\n`);
  if (write) {
    const dir = path.join(BENCH_DIR, 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `topology-${results.date}.json`), `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote bench/results/topology-${results.date}.json`);
  }
  log(`done in ${results.durationSeconds} s`);
}

await main();
