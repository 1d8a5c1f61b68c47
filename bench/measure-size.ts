/**
 * @module One cluster size, in one process: generate the cluster, then for each hook time the JSON
 * floor, the in-process app and the same request over loopback HTTP, interleaved sample by sample.
 * Then a separate server process answers the same requests so its peak RSS is the hook server's own.
 * Usage: `node --expose-gc --import tsx bench/measure-size.ts <nodes> <samples> <out.json>`
 */
import { writeFileSync } from 'node:fs';

import { startServerChild } from './child.js';
import { HOOKS, generateCluster, type HookName } from './cluster.js';
import { createBenchApp, get, listen, post } from './http.js';
import { summarize, type Summary } from './stats.js';

export interface HookTiming {
  readonly requestBytes: number;
  readonly responseBytes: number;
  /** Calls per sample (small hooks are timed in batches so one sample lasts ~100 ms). */
  readonly batch: number;
  readonly floorMs: Summary;
  readonly inProcessMs: Summary;
  readonly httpMs: Summary;
  /** The same samples in process CPU time (ms per call). */
  readonly cpuMs: { readonly floor: Summary; readonly inProcess: Summary; readonly http: Summary };
}

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

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
let sink = 0;

/** Process CPU time (all threads, user + system) of the last {@link time}, per call: steadier than wall time on a busy machine. */
let lastCpuMs = 0;

async function time(calls: number, body: () => unknown): Promise<number> {
  gc();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await body();
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000 / calls;
  return elapsed / calls;
}

async function measureHook(
  hook: HookName,
  text: string,
  samples: number,
  port: number,
  app: ReturnType<typeof createBenchApp>,
): Promise<HookTiming> {
  const bytes = Buffer.from(text);
  const path = `/hooks/${hook}`;
  // The body as a one-chunk byte stream, the way a server adapter hands it over: a Buffer would make
  // the Request constructor copy it first, a cost of the fetch API and not of the hook.
  const init = (): RequestInit & { duplex: 'half' } => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
    duplex: 'half',
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
  });
  const inProcess = async (): Promise<string> => {
    const response = await app.request(path, init());
    const answer = await response.text();
    if (response.status !== 200)
      throw new Error(
        `${path}: ${response.status} ${answer.slice(0, 500)} (sent ${bytes.length} bytes: ${bytes.toString('utf8', 0, 120)}…)`,
      );
    return answer;
  };
  const overHttp = async (): Promise<Buffer> => {
    const answer = await post(port, path, bytes);
    if (answer.status !== 200)
      throw new Error(`${path} over HTTP: ${answer.status} ${answer.body.toString('utf8', 0, 500)}`);
    return answer.body;
  };
  const responseText = await inProcess();
  const response: unknown = JSON.parse(responseText);
  const floor = (): void => {
    const parsed = JSON.parse(text) as object;
    sink += JSON.stringify(response).length + (parsed ? 1 : 0);
  };
  // Warm-up, which also sizes the batch.
  const estimate = Math.max(await time(1, inProcess), await time(1, overHttp), await time(1, floor));
  const batch = Math.max(1, Math.min(2000, Math.round(100 / Math.max(estimate, 0.001))));
  if (batch > 1) for (const run of [floor, inProcess, overHttp]) await time(batch, run);
  const wall = { floor: [] as number[], inProcess: [] as number[], http: [] as number[] };
  const cpu = { floor: [] as number[], inProcess: [] as number[], http: [] as number[] };
  const modes = { floor, inProcess, http: overHttp };
  for (let i = 0; i < samples; i++) {
    for (const mode of ['floor', 'inProcess', 'http'] as const) {
      wall[mode].push(await time(batch, modes[mode]));
      cpu[mode].push(lastCpuMs);
    }
  }
  return {
    requestBytes: bytes.length,
    responseBytes: Buffer.byteLength(responseText),
    batch,
    floorMs: summarize(wall.floor),
    inProcessMs: summarize(wall.inProcess),
    httpMs: summarize(wall.http),
    cpuMs: { floor: summarize(cpu.floor), inProcess: summarize(cpu.inProcess), http: summarize(cpu.http) },
  };
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
  if (sink < 0) process.stdout.write('');
}

await main();
