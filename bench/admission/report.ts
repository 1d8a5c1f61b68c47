/** @module `npm run bench:admission`'s output: the tables of the reconcile passes and of the stores' memory. */
import { round } from '../shared/stats.js';
import type { StoreMemory } from './memory.js';
import type { PassTiming } from './pass.js';

const MB = (bytes: number) => round(bytes / 1048576);

/** A pass's TAS column: `—` without assigned domains, else the levels and the blocks and racks. */
export function topologyCell(pass: Pick<PassTiming, 'topology'>): string {
  const scene = pass.topology;
  if (scene === undefined) return '—';
  return `${scene.levels.length} levels, ${scene.blocks.toLocaleString('en-US')} blocks, ${scene.racks.toLocaleString('en-US')} racks`;
}

export function admissionTables(passes: readonly PassTiming[], memory: readonly StoreMemory[]): string {
  const lines = [
    '| nodes | pods | slices / claims | TAS domains | Workloads awaiting (with claims) / all | pass ms (median) | CPU ms | ms per awaiting Workload | CV | samples |',
    '|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
    ...passes.map(
      (p) =>
        `| ${p.nodes.toLocaleString('en-US')} | ${p.pods.toLocaleString('en-US')} | ${p.dra.slices.toLocaleString('en-US')} / ${p.dra.claims.toLocaleString('en-US')} | ${topologyCell(p)} | ${p.awaiting} (${p.dra.awaitingWithClaims}) / ${p.workloads} | ${round(p.passMs.median)} | ${round(p.cpuMs.median)} | ${round(p.msPerAwaiting)} | ${Math.round(p.passMs.cv * 100)} % | ${p.passMs.n} |`,
    ),
    '',
    '| stores | nodes | pods | received JSON MB (nodes + pods) | store heap MB | ledger stores: slices / claims, JSON MB, heap MB | RSS MB after GC (baseline) | peak RSS MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...memory.map(
      (m) =>
        `| ${m.mode} | ${m.nodes.toLocaleString('en-US')} | ${m.pods.toLocaleString('en-US')} | ${MB(m.receivedBytes.nodes)} + ${MB(m.receivedBytes.pods)} | ${MB(m.storeHeapBytes)} | ${m.ledger.slices.toLocaleString('en-US')} / ${m.ledger.claims.toLocaleString('en-US')}, ${MB(m.ledger.receivedBytes)}, ${MB(m.ledger.heapBytes)} | ${MB(m.rssBytes)} (${MB(m.rssBaselineBytes)}) | ${MB(m.peakRssBytes)} |`,
    ),
  ];
  return lines.join('\n');
}
