/**
 * @module Requests per second of the small hooks over loopback HTTP (keep-alive, one connection),
 * against bare hono routes on the same server: the floor route reads and parses the same body and
 * answers the same response (`JSON.stringify` of the hook's own answer, taken once before the
 * rounds): the ceiling of a JSON hook with that answer; and, as context, a route that answers `{}`
 * without reading the body (the framework's own ceiling). The server runs in its own process
 * (built, bench/shared/server.mjs); autocannon, the load generator, runs in this one, on 127.0.0.1 only.
 */
import autocannon from 'autocannon';

import { startServerChild } from '../shared/child.js';
import { summarize, type Summary } from '../shared/stats.js';

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
  /** Requests per second of the floor route (parses the body, answers the hook's response), one value per round. */
  readonly floorRps: Summary;
  /** Requests per second of the bare route (ignores the body, answers `{}`) with the same body, one value per round. */
  readonly bareRps: Summary;
  /** Median of the per-round ratios hook / floor (rounds alternate, so drift cancels): the target. */
  readonly ratio: number;
  /** Median of the per-round ratios hook / bare (context). */
  readonly ratioBare: number;
  readonly hookLatencyP99Ms: number;
}

const CONNECTIONS = 1;

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

/** Teaches the server's floor route for `path` the answer of the hook at `path` to `body`. */
async function setFloor(port: number, path: string, body: string): Promise<void> {
  const answer = await fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await answer.text();
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${text.slice(0, 500)}`);
  const set = await fetch(`http://127.0.0.1:${port}/bench/floor-response${path}`, { method: 'PUT', body: text });
  if (set.status !== 204) throw new Error(`setting the floor of ${path}: ${set.status}`);
}

/** Alternates bare, floor and hook runs (`rounds` each, `seconds` long) after a 1 s warm-up of each. */
export async function measureLoad(
  targets: readonly LoadTarget[],
  seconds: number,
  rounds: number,
): Promise<LoadResult[]> {
  const server = await startServerChild();
  const results: LoadResult[] = [];
  try {
    for (const target of targets) {
      await setFloor(server.port, target.path, target.body);
      const floorPath = `/bench/floor${target.path}`;
      for (const path of ['/bench/bare', floorPath, target.path]) await hammer(server.port, path, target.body, 1);
      const hook: number[] = [];
      const floor: number[] = [];
      const bare: number[] = [];
      const ratios: number[] = [];
      const ratiosBare: number[] = [];
      let p99 = 0;
      for (let round = 0; round < rounds; round++) {
        const b = (await hammer(server.port, '/bench/bare', target.body, seconds)).requests.total / seconds;
        const f = (await hammer(server.port, floorPath, target.body, seconds)).requests.total / seconds;
        const h = await hammer(server.port, target.path, target.body, seconds);
        const hookRps = h.requests.total / seconds;
        bare.push(b);
        floor.push(f);
        hook.push(hookRps);
        ratios.push(hookRps / f);
        ratiosBare.push(hookRps / b);
        p99 = Math.max(p99, h.latency.p99);
      }
      results.push({
        name: target.name,
        requestBytes: Buffer.byteLength(target.body),
        seconds,
        rounds,
        connections: CONNECTIONS,
        hookRps: summarize(hook),
        floorRps: summarize(floor),
        bareRps: summarize(bare),
        ratio: summarize(ratios).median,
        ratioBare: summarize(ratiosBare).median,
        hookLatencyP99Ms: p99,
      });
    }
  } finally {
    await server.stop();
  }
  return results;
}
