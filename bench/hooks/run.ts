/**
 * @module `npm run bench`: hook cost against the JSON floor from 10 to 10,000 nodes, small hooks
 * under load, agent detection. One child process per cluster size (so sizes do not share a heap),
 * results in `bench/results/<date>.json`, `bench/RESULTS.md`, `bench/results/cost-per-node.svg` and the README's
 * Performance section in `bench/README-section.md`.
 * Options: `--sizes=10,100` (default all), `--load-seconds=5`, `--rounds=2`, `--no-write`; `--small-hooks` runs only
 * bench/hooks/small-hooks.ts (the small hooks in process and under load; `--samples=9`, `--load-seconds=3`, `--rounds=5`;
 * writes nothing).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { BENCH_DIR, SERVER_V8_FLAGS, finished, spawnScript } from '../shared/child.js';
import { generateCluster } from '../shared/cluster.js';
import { keptSectionsOf } from '../cluster/control-plane-report.js';
import { benchDetect } from '../detect/run.js';
import { measureLoad } from './load.js';
import type { SizeResult } from './measure-size.js';
import { costPerNodeSvg, judge, readmeSection, resultsMarkdown, tables, type BenchResults } from './report.js';
import { resultsHeader } from '../shared/results-header.js';
import { summarize, type Summary } from '../shared/stats.js';

const SIZES = [10, 100, 1000, 5000, 10000];
/** Samples per size: the big sizes take seconds per call, so fewer of them. */
const SAMPLES: Readonly<Record<number, number>> = { 10: 9, 100: 9, 1000: 9, 5000: 7, 10000: 5 };

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  return process.argv
    .slice(2)
    .find((a) => a.startsWith(prefix))
    ?.slice(prefix.length);
}

function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** A fixed CPU task (JSON parse + stringify of the 100-node chain request) timed 25 times after 5 warm-ups: its spread is the machine's noise. */
function noise(document: string): Summary {
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    JSON.stringify(JSON.parse(document));
    times.push(performance.now() - started);
  }
  return summarize(times.slice(5));
}

async function measureSize(nodes: number, directory: string): Promise<SizeResult> {
  const out = path.join(directory, `size-${nodes}.json`);
  const flags = ['--expose-gc', '--max-old-space-size=16384', ...SERVER_V8_FLAGS];
  await finished(
    spawnScript('hooks/measure-size.ts', [String(nodes), String(SAMPLES[nodes] ?? 5), out], flags),
    `bench/hooks/measure-size.ts ${nodes}`,
  );
  return JSON.parse(readFileSync(out, 'utf8')) as SizeResult;
}

async function main(): Promise<void> {
  if (process.argv.includes('--small-hooks')) {
    const child = spawnScript('hooks/small-hooks.ts', process.argv.slice(2), ['--expose-gc', ...SERVER_V8_FLAGS]);
    child.stdout?.pipe(process.stdout);
    await finished(child, 'bench/hooks/small-hooks.ts');
    return;
  }
  const started = performance.now();
  const sizes = option('sizes')?.split(',').map(Number) ?? SIZES;
  const loadSeconds = Number(option('load-seconds') ?? 5);
  const rounds = Number(option('rounds') ?? 2);
  const write = !process.argv.includes('--no-write');
  const loadAverageStart = os.loadavg();
  const reference = generateCluster(100);
  const noiseDocument = reference.bodies['scheduling-chain/sync'];
  const noiseStart = noise(noiseDocument);
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-bench-'));
  const results: SizeResult[] = [];
  try {
    for (const nodes of sizes) {
      log(`${nodes} nodes: generating and measuring (${SAMPLES[nodes] ?? 5} samples)`);
      const result = await measureSize(nodes, directory);
      const chain = result.hooks['scheduling-chain/sync'];
      log(
        `${nodes} nodes: floor ${chain.floorMs.median.toFixed(1)} ms, in-process ${chain.inProcessMs.median.toFixed(1)} ms, HTTP ${chain.httpMs.median.toFixed(1)} ms, peak RSS ${(result.memory.peakRssBytes / 1048576).toFixed(0)} MB`,
      );
      results.push(result);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  log(`small hooks under load (${rounds} × ${loadSeconds} s each, alternating with the bare route)`);
  const load =
    loadSeconds > 0
      ? await measureLoad(
          [
            {
              name: 'node-profile sync (one Node)',
              path: '/hooks/node-profile/sync',
              body: reference.bodies['node-profile/sync'],
            },
            {
              name: 'instance-type sync (one pool, 100-node cluster)',
              path: '/hooks/instance-type/sync',
              body: reference.bodies['instance-type/sync'],
            },
          ],
          loadSeconds,
          rounds,
        )
      : [];
  log('agent detection against the fake NVML');
  const detect = await benchDetect();
  const noiseEnd = noise(noiseDocument);
  const bench: BenchResults = {
    ...resultsHeader(started, loadAverageStart, ['src', 'native']),
    noise: { start: noiseStart, end: noiseEnd },
    sizes: results,
    load,
    detect,
    targets: judge(results, load),
  };
  process.stdout.write(`${tables(bench)}\n`);
  if (write) {
    const resultsDir = path.join(BENCH_DIR, 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(path.join(resultsDir, `${bench.date}.json`), `${JSON.stringify(bench, null, 2)}\n`);
    writeFileSync(path.join(resultsDir, 'cost-per-node.svg'), costPerNodeSvg(results));
    // The sections of the other benches (bench:admission, bench:cluster: separate runs) stay as they were.
    const resultsFile = path.join(BENCH_DIR, 'RESULTS.md');
    const kept = existsSync(resultsFile) ? keptSectionsOf(readFileSync(resultsFile, 'utf8')) : [];
    writeFileSync(
      resultsFile,
      resultsMarkdown(bench).replace('](cost-per-node.svg)', '](results/cost-per-node.svg)') +
        kept.map((section) => `\n${section}\n`).join(''),
    );
    writeFileSync(path.join(BENCH_DIR, 'README-section.md'), readmeSection(bench));
    log(
      `wrote bench/results/${bench.date}.json, bench/results/cost-per-node.svg, bench/RESULTS.md and bench/README-section.md`,
    );
  }
  log(`done in ${bench.durationSeconds} s`);
}

await main();
