/**
 * @module `npm run bench:card-metrics`: one scrape of the admission checker's `/metrics` with the
 * per-card gauges (docs/operations.md#card-metrics) at 5,000 Nodes × 8 cards (`--nodes=`): the
 * agent's slices of every node as the checker keeps them, claims on 30 % of the nodes (whole cards
 * and shares, `bench/admission/dra.ts`), one InstanceType pool. Times the first scrape after a pass
 * (the rows built from the ledger, then the text) and the later ones (the text only), and the size
 * of the text, plain and gzipped. Writes `bench/results/card-metrics-<date>.json` and its section of
 * `bench/RESULTS.md` (`--no-write`: neither).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

import { createAdmissionMetrics } from '../../src/admission/index.js';
import { slimResourceClaim, slimResourceSlice } from '../../src/admission/store-fields.js';
import {
  ReceivedResourceClaimSchema,
  ReceivedResourceSliceSchema,
  buildCardRows,
  buildDeviceLedger,
  cardPoolsOf,
  poolResolver,
} from '../../src/dra/index.js';
import { clusterQueueName, MANAGED_LABEL } from '../../src/nodefeature/index.js';
import { generateDra } from './dra.js';
import { BENCH_DIR } from '../shared/child.js';
import { logger, option } from '../shared/process.js';
import { resultsHeader } from '../shared/results-header.js';
import { round, summarize } from '../shared/stats.js';

const AKEY = 'nvidia-h100-80gb-hbm3';
const SAMPLES = 7;

const log = logger('card-metrics');

const START = '<!-- bench:card-metrics start -->';
const END = '<!-- bench:card-metrics end -->';

async function main(): Promise<void> {
  const started = performance.now();
  const loadAverageStart = os.loadavg();
  const nodeCount = Number(option('nodes', '5000'));
  const claimShare = Number(option('claim-share', '0.3'));
  // Node names as the bench's fleet spells them (`h100-8x-00042`).
  const names = Array.from({ length: nodeCount }, (_, i) => `h100-8x-${String(i).padStart(5, '0')}`);
  const dra = generateDra(names, AKEY, claimShare);
  const slices = dra.slices.map((s) => slimResourceSlice(ReceivedResourceSliceSchema.parse(s)));
  const claims = dra.claims.map((c) => slimResourceClaim(ReceivedResourceClaimSchema.parse(c)));
  const pool = clusterQueueName(AKEY, 'linux', 'amd64');
  const pools = cardPoolsOf([
    { metadata: { name: pool }, spec: { acceleratable: true, acceleratorGroup: AKEY, os: 'linux', arch: 'amd64' } },
  ]);
  const nodes = names.map((name) => ({
    metadata: { name, labels: { [MANAGED_LABEL]: 'true', 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' } },
  }));
  const ledger = buildDeviceLedger(slices, claims);
  const cards = ledger.nodeNames().reduce((n, node) => n + ledger.cards(node).length, 0);
  log(`${nodeCount} nodes, ${cards} cards, ${claims.length} claims`);

  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const metrics = createAdmissionMetrics();
  const first: number[] = [];
  const firstCpu: number[] = [];
  const later: number[] = [];
  const laterCpu: number[] = [];

  for (let i = 0; i < SAMPLES; i++) {
    // A pass hands over a new ledger: the next scrape builds the rows and the text again.
    metrics.cards(() => buildCardRows(ledger, { poolOf: poolResolver(pools, nodes) }));
    const cpu = process.cpuUsage();
    let t = performance.now();
    await metrics.registry.metrics();
    first.push(performance.now() - t);
    const used = process.cpuUsage(cpu);
    firstCpu.push((used.user + used.system) / 1000);
    const cpuLater = process.cpuUsage();
    t = performance.now();
    await metrics.registry.metrics();
    later.push(performance.now() - t);
    const usedLater = process.cpuUsage(cpuLater);
    laterCpu.push((usedLater.user + usedLater.system) / 1000);
  }
  // What a checker holds between scrapes: the last pass's rows and its rendered text.
  gc?.();
  const retainedBytes = gc === undefined ? undefined : process.memoryUsage().heapUsed - heapBefore;
  const text = await metrics.registry.metrics();
  const bytes = Buffer.byteLength(text);
  const gzipBytes = gzipSync(text).length;
  const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
  const result = {
    ...resultsHeader(started, loadAverageStart, ['src']),
    nodes: nodeCount,
    cards,
    claims: claims.length,
    series,
    bytes,
    gzipBytes,
    firstScrapeMs: summarize(first),
    firstScrapeCpuMs: summarize(firstCpu),
    laterScrapeMs: summarize(later),
    laterScrapeCpuMs: summarize(laterCpu),
    retainedHeapBytes: retainedBytes,
  };
  const MB = (b: number) => round(b / 1_000_000);
  const section = [
    START,
    `## Per-card metrics scrape (\`npm run bench:card-metrics\`), ${result.date}`,
    '',
    `Commit \`${result.commit}\`; ${result.machine.cpus} × ${result.machine.cpuModel}, Node ${result.machine.node}; load average ${result.machine.loadAverageStart.map((l) => l.toFixed(2)).join(' / ')} at the start (shared machine).` +
      ` The checker's registry (\`createAdmissionMetrics\`, default process metrics included) after a pass over ${nodeCount.toLocaleString('en-US')} Nodes × 8 cards` +
      ` with claims on ${Math.round(claimShare * 100)} % of the nodes; first scrape = the rows built from the ledger + the text, later = the text of the same pass; heap held = what the registry keeps between scrapes (the last pass's rows and text, after a GC). Medians of ${SAMPLES}.`,
    '',
    '| nodes | cards | claims | series | text MB | gzip MB | first scrape ms (CPU ms) | later scrape ms (CPU ms) | heap held MB | target |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    `| ${nodeCount.toLocaleString('en-US')} | ${cards.toLocaleString('en-US')} | ${claims.length.toLocaleString('en-US')} | ${series.toLocaleString('en-US')} | ${MB(bytes)} | ${MB(gzipBytes)} | ${round(result.firstScrapeMs.median)} (${round(result.firstScrapeCpuMs.median)}) | ${round(result.laterScrapeMs.median)} (${round(result.laterScrapeCpuMs.median)}) | ${retainedBytes === undefined ? '-' : MB(retainedBytes)} | < 1,000 ms (CPU: the machine is shared) and < 20 MB: ${result.firstScrapeCpuMs.median < 1000 && bytes < 20_000_000 ? 'met' : '**not met**'} |`,
    END,
  ].join('\n');
  process.stdout.write(`${section}\n`);
  if (!process.argv.includes('--no-write')) {
    const resultsDir = path.join(BENCH_DIR, 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(path.join(resultsDir, `card-metrics-${result.date}.json`), `${JSON.stringify(result, null, 2)}\n`);
    const file = path.join(BENCH_DIR, 'RESULTS.md');
    const current = readFileSync(file, 'utf8');
    const at = current.indexOf(START);
    const next =
      at >= 0
        ? `${current.slice(0, at)}${section}${current.slice(current.indexOf(END) + END.length)}`
        : `${current.trimEnd()}\n\n${section}\n`;
    writeFileSync(file, next);
    log(`wrote bench/results/card-metrics-${result.date}.json and bench/RESULTS.md`);
  }
}

await main();
