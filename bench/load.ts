/**
 * @module Requests per second of the small hooks over loopback HTTP, against bare hono routes on the
 * same server: one answers `{}` without reading the body (the framework's own ceiling), one reads
 * and parses the body first (the ceiling of any JSON hook). The server runs in its own process
 * (built, bench/server.mjs); autocannon, the load generator, runs in this one, on 127.0.0.1 only.
 */
import autocannon from 'autocannon';

import { startServerChild } from './child.js';
import { summarize, type Summary } from './stats.js';

export interface LoadTarget {
  readonly name: string;
  readonly path: string;
  readonly body: string;
}

export interface LoadResult {
  readonly name: string;
  readonly requestBytes: number;
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
  /** Requests per second of the hook route, one value per round. */
  readonly hookRps: Summary;
  /** Requests per second of the bare route (ignores the body) with the same body, one value per round. */
  readonly bareRps: Summary;
  /** Requests per second of the bare route that reads and parses the body, one value per round. */
  readonly bareParseRps: Summary;
  /** Median of the per-round ratios hook / bare (rounds alternate, so drift cancels). */
  readonly ratio: number;
  /** Median of the per-round ratios hook / bare-parse. */
  readonly ratioParse: number;
  readonly hookLatencyP99Ms: number;
}

const CONNECTIONS = 8;

async function hammer(port: number, path: string, body: string, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  if (result.errors > 0 || result.non2xx > 0)
    throw new Error(`${path}: ${result.errors} errors, ${result.non2xx} non-2xx answers under load`);
  return result;
}

/** Alternates bare and hook runs (`rounds` each, `seconds` long) after a 1 s warm-up of both. */
export async function measureLoad(
  targets: readonly LoadTarget[],
  seconds: number,
  rounds: number,
): Promise<LoadResult[]> {
  const server = await startServerChild();
  const results: LoadResult[] = [];
  try {
    for (const target of targets) {
      for (const path of ['/bench/bare', '/bench/bare-parse', target.path])
        await hammer(server.port, path, target.body, 1);
      const hook: number[] = [];
      const bare: number[] = [];
      const bareParse: number[] = [];
      const ratios: number[] = [];
      const ratiosParse: number[] = [];
      let p99 = 0;
      for (let round = 0; round < rounds; round++) {
        const b = (await hammer(server.port, '/bench/bare', target.body, seconds)).requests.total / seconds;
        const bp = (await hammer(server.port, '/bench/bare-parse', target.body, seconds)).requests.total / seconds;
        const h = await hammer(server.port, target.path, target.body, seconds);
        const hookRps = h.requests.total / seconds;
        bare.push(b);
        bareParse.push(bp);
        hook.push(hookRps);
        ratios.push(hookRps / b);
        ratiosParse.push(hookRps / bp);
        p99 = Math.max(p99, h.latency.p99);
      }
      results.push({
        name: target.name,
        requestBytes: Buffer.byteLength(target.body),
        seconds,
        rounds,
        connections: CONNECTIONS,
        hookRps: summarize(hook),
        bareRps: summarize(bare),
        bareParseRps: summarize(bareParse),
        ratio: summarize(ratios).median,
        ratioParse: summarize(ratiosParse).median,
        hookLatencyP99Ms: p99,
      });
    }
  } finally {
    await server.stop();
  }
  return results;
}
