/**
 * @module One cluster size, in one process: generate the cluster, then for each hook time the JSON
 * floor, the in-process app and the same request over loopback HTTP, interleaved sample by sample.
 * Then a separate server process answers the same requests so its peak RSS is the hook server's own.
 * Usage: `node --expose-gc --import tsx bench/hooks/measure-size.ts <nodes> <samples> <out.json>`
 */
import { writeFileSync } from 'node:fs';

import { startServerChild } from '../shared/child.js';
import { HOOKS, generateCluster, type HookName } from '../shared/cluster.js';
import { createBenchApp, get, listen, post } from '../shared/http.js';
import { floorSink, measureHook, type HookTiming } from './timing.js';

export type { HookTiming } from './timing.js';

export interface MemoryProbe {
  /** RSS of the idle server process before the first request. */
  readonly idleRssBytes: number;
  readonly peakRssBytes: number;
  /** Largest V8 heap in use seen by a GC (before collecting). */
  readonly peakHeapBytes: number;
  readonly requestBytes: number;
}

export interface SizeResult {
  readonly nodes: number;
  readonly nodeBytes: number;
  readonly flavors: number;
  readonly namespaces: number;
  readonly generateMs: number;
  readonly hooks: Record<HookName, HookTiming>;
  readonly memory: MemoryProbe;
}

/** Peak RSS of a server process that answers the largest request (twice) and the small ones. */
async function probeMemory(bodies: Record<HookName, string>): Promise<MemoryProbe> {
  const server = await startServerChild({ traceGc: true, maxOldSpaceMB: 16384 });
  try {
    const idle = JSON.parse((await get(server.port, '/bench/memory')).body.toString('utf8')) as { rssBytes: number };
    for (const hook of [...HOOKS, 'scheduling-chain/sync'] as const) {
      const answer = await post(server.port, `/hooks/${hook}`, Buffer.from(bodies[hook]));
      if (answer.status !== 200) throw new Error(`memory probe ${hook}: ${answer.status}`);
    }
    const memory = JSON.parse((await get(server.port, '/bench/memory')).body.toString('utf8')) as {
      maxRssBytes: number;
    };
    return {
      idleRssBytes: idle.rssBytes,
      peakRssBytes: memory.maxRssBytes,
      peakHeapBytes: Math.round(server.peakHeapMB() * 1024 * 1024),
      requestBytes: Buffer.byteLength(bodies['scheduling-chain/sync']),
    };
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  const [nodesText, samplesText, out] = process.argv.slice(2);
  const nodes = Number(nodesText);
  const samples = Number(samplesText);
  if (!Number.isInteger(nodes) || !Number.isInteger(samples) || !out)
    throw new Error('usage: measure-size.ts <nodes> <samples> <out.json>');
  const started = performance.now();
  const cluster = generateCluster(nodes);
  const generateMs = performance.now() - started;
  const app = createBenchApp();
  const server = await listen(app);
  const hooks = {} as Record<HookName, HookTiming>;
  try {
    for (const hook of HOOKS) hooks[hook] = await measureHook(hook, cluster.bodies[hook], samples, server.port, app);
  } finally {
    await server.close();
  }
  const memory = await probeMemory(cluster.bodies);
  const result: SizeResult = {
    nodes,
    nodeBytes: Math.round(cluster.nodeBytes),
    flavors: cluster.flavors,
    namespaces: cluster.namespaces,
    generateMs: Math.round(generateMs),
    hooks,
    memory,
  };
  writeFileSync(out, JSON.stringify(result, null, 2));
  if (floorSink() < 0) process.stdout.write('');
}

await main();
