/**
 * @module `npm run bench:admission`: the admission checker. (a) One reconcile pass
 * (`Reconciler.pass`, writer doing nothing) at 1,000 and 5,000 realistic 8-card nodes with ~9
 * Pods each and 2,000 Workloads of which 1 % and 5 % await a verdict; (b) the heap and RSS of the
 * Node and Pod stores holding 5,000 realistic Nodes and 50,000 Pods, slim (as kept now) and whole.
 * One child process per size and per mode. Results in `bench/results/admission-<date>.json`.
 * DRA: every node publishes its ResourceSlices; 30 % of the nodes hold cards by ResourceClaims
 * and 30 % of the Workloads ask through a ResourceClaimTemplate (`--claim-share`).
 * Topology (issue 44): the Nodes in blocks and racks, and every pass timed twice in turn — as
 * before and with the domains Kueue's TAS assigned each PodSet (`topology.ts`); `--topology=off`
 * leaves it out.
 * Options: `--sizes=1000,5000`, `--shares=0.01,0.05`, `--workloads=2000`, `--memory-nodes=5000`,
 * `--memory-pods=50000`, `--claim-share=0.3`, `--topology=compare|off`, `--no-memory`, `--no-write`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { StoreMemory } from './memory.js';
import { admissionTables } from './report.js';
import type { PassTiming } from './pass.js';
import { BENCH_DIR, finished, spawnScript } from '../shared/child.js';
import { logger, option } from '../shared/process.js';
import { resultsHeader } from '../shared/results-header.js';

/** Samples per size: a pass at 5,000 nodes takes longer. */
const SAMPLES: Readonly<Record<number, number>> = { 1000: 9, 5000: 7 };

const log = logger('admission');

async function main(): Promise<void> {
  const started = performance.now();
  const sizes = option('sizes', '1000,5000').split(',').map(Number);
  const shares = option('shares', '0.01,0.05');
  const workloads = option('workloads', '2000');
  const memoryNodes = option('memory-nodes', '5000');
  const memoryPods = option('memory-pods', '50000');
  const claimShare = option('claim-share', '0.3');
  const topology = option('topology', 'compare');
  const memoryModes = process.argv.includes('--no-memory') ? [] : (['slim', 'whole'] as const);
  const write = !process.argv.includes('--no-write');
  const loadAverageStart = os.loadavg();
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-bench-admission-'));
  const passes: PassTiming[] = [];
  const memory: StoreMemory[] = [];
  try {
    for (const nodes of sizes) {
      log(`${nodes} nodes: reconcile passes (${SAMPLES[nodes] ?? 5} samples per share)`);
      const out = path.join(directory, `pass-${nodes}.json`);
      await finished(
        spawnScript(
          'admission/pass.ts',
          [String(nodes), workloads, shares, String(SAMPLES[nodes] ?? 5), out, claimShare, topology],
          ['--expose-gc', '--max-old-space-size=8192'],
        ),
        `bench/admission/pass.ts ${nodes}`,
      );
      passes.push(...(JSON.parse(readFileSync(out, 'utf8')) as PassTiming[]));
    }
    for (const mode of memoryModes) {
      log(`stores of ${memoryNodes} nodes and ${memoryPods} pods, ${mode}`);
      const out = path.join(directory, `memory-${mode}.json`);
      await finished(
        spawnScript(
          'admission/memory.ts',
          [mode, memoryNodes, memoryPods, out],
          ['--expose-gc', '--max-old-space-size=8192'],
        ),
        `bench/admission/memory.ts ${mode}`,
      );
      memory.push(JSON.parse(readFileSync(out, 'utf8')) as StoreMemory);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  const results = { ...resultsHeader(started, loadAverageStart, ['src']), passes, memory };
  process.stdout.write(`${admissionTables(passes, memory)}\n`);
  if (write) {
    const resultsDir = path.join(BENCH_DIR, 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(path.join(resultsDir, `admission-${results.date}.json`), `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote bench/results/admission-${results.date}.json`);
  }
  log(`done in ${results.durationSeconds} s`);
}

await main();
