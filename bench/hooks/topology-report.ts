/**
 * @module `npm run bench:topology`'s output (issue 44): per cluster size and hook, the request's
 * size and the in-process hook time with topology off and on, and how each grows with the cluster.
 */
import { round, type Summary } from '../shared/stats.js';
import type { TopologyHook } from './topology-bodies.js';

export interface TopologyHookTiming {
  readonly hook: TopologyHook;
  readonly requestBytes: number;
  /** In-process (`createApp().request()`): body read, parse, validation, sync, serialisation. */
  readonly inProcessMs: Summary;
  readonly cpuMs: Summary;
  readonly batch: number;
}

export interface TopologyCase {
  readonly nodes: number;
  readonly topology: boolean;
  readonly flavors: number;
  readonly topologies: number;
  readonly summaryGroups: number;
  readonly shards: number;
  readonly hooks: readonly TopologyHookTiming[];
}

const KB = (bytes: number) => round(bytes / 1024);

function find(cases: readonly TopologyCase[], nodes: number, topology: boolean): TopologyCase | undefined {
  return cases.find((c) => c.nodes === nodes && c.topology === topology);
}

/** `after / before` of two numbers, as `1.23×`; `—` when either is missing. */
export function ratio(after: number | undefined, before: number | undefined): string {
  if (after === undefined || before === undefined || before === 0) return '—';
  return `${(after / before).toFixed(2)}×`;
}

/**
 * One row per size and hook: bytes and median in-process ms off → on, and the ratio on / off;
 * then, per hook and mode, how the request grows from the smallest to the largest size.
 */
export function topologyTables(cases: readonly TopologyCase[]): string {
  const sizes = [...new Set(cases.map((c) => c.nodes))].sort((a, b) => a - b);
  const hooks = [...new Set(cases.flatMap((c) => c.hooks.map((h) => h.hook)))];
  const lines = [
    '| nodes | hook | request KB off → on | on / off | in-process ms off → on (median) | on / off | CPU ms off → on | samples × calls |',
    '|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const nodes of sizes) {
    const off = find(cases, nodes, false);
    const on = find(cases, nodes, true);
    for (const hook of hooks) {
      const a = off?.hooks.find((h) => h.hook === hook);
      const b = on?.hooks.find((h) => h.hook === hook);
      lines.push(
        `| ${nodes.toLocaleString('en-US')} | ${hook} | ${a ? KB(a.requestBytes) : '—'} → ${b ? KB(b.requestBytes) : '—'} | ${ratio(b?.requestBytes, a?.requestBytes)} | ${a ? round(a.inProcessMs.median) : '—'} → ${b ? round(b.inProcessMs.median) : '—'} | ${ratio(b?.inProcessMs.median, a?.inProcessMs.median)} | ${a ? round(a.cpuMs.median) : '—'} → ${b ? round(b.cpuMs.median) : '—'} | ${b?.inProcessMs.n ?? a?.inProcessMs.n ?? 0} × ${b?.batch ?? a?.batch ?? 0} |`,
      );
    }
  }
  const first = sizes[0];
  const last = sizes[sizes.length - 1];
  if (first !== undefined && last !== undefined && first !== last) {
    lines.push(
      '',
      `| hook | topology | request KB at ${first.toLocaleString('en-US')} → ${last.toLocaleString('en-US')} nodes | growth (nodes × ${round(last / first)}) |`,
      '|---|---|---:|---:|',
    );
    for (const hook of hooks) {
      for (const topology of [false, true]) {
        const small = find(cases, first, topology)?.hooks.find((h) => h.hook === hook)?.requestBytes;
        const large = find(cases, last, topology)?.hooks.find((h) => h.hook === hook)?.requestBytes;
        lines.push(
          `| ${hook} | ${topology ? 'on' : 'off'} | ${small !== undefined ? KB(small) : '—'} → ${large !== undefined ? KB(large) : '—'} | ${ratio(large, small)} |`,
        );
      }
    }
  }
  lines.push(
    '',
    '| nodes | topology | flavors | Topologies | NodeShards | node groups in the summaries |',
    '|---:|---|---:|---:|---:|---:|',
    ...sizes.flatMap((nodes) =>
      [false, true].flatMap((topology) => {
        const c = find(cases, nodes, topology);
        return c === undefined
          ? []
          : [
              `| ${nodes.toLocaleString('en-US')} | ${topology ? 'on' : 'off'} | ${c.flavors} | ${c.topologies} | ${c.shards} | ${c.summaryGroups} |`,
            ];
      }),
    ),
  );
  return lines.join('\n');
}
