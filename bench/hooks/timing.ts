/**
 * @module One hook timed three ways, interleaved sample by sample: the JSON floor (`JSON.parse` of the
 * request + `JSON.stringify` of the hook's answer), the app in process (`app.request()`) and the same
 * request over loopback HTTP. Used by measure-size.ts (every hook at one size) and small-hooks.ts.
 */
import type { HookName } from '../shared/cluster.js';
import { post, type createBenchApp } from '../shared/http.js';
import { summarize, type Summary } from '../shared/stats.js';

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

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
let sink = 0;

/** Process CPU time (all threads, user + system) of the last {@link time}, per call: steadier than wall time on a busy machine. */
let lastCpuMs = 0;

/** Wall ms per call of `calls` calls of `body`, after a forced GC; {@link lastCpuMsPerCall} gives the CPU time. */
export async function time(calls: number, body: () => unknown): Promise<number> {
  gc();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await body();
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  lastCpuMs = (used.user + used.system) / 1000 / calls;
  return elapsed / calls;
}

/** Process CPU ms per call of the last {@link time}. */
export function lastCpuMsPerCall(): number {
  return lastCpuMs;
}

export async function measureHook(
  hook: HookName,
  text: string,
  samples: number,
  port: number,
  app: ReturnType<typeof createBenchApp>,
): Promise<HookTiming> {
  const bytes = Buffer.from(text);
  const path = `/hooks/${hook}`;
  const init = (): RequestInit & { duplex: 'half' } => streamedPost(bytes);
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
  // Warm-up: up to 200 ms or 200 calls of each, so the batch is sized by warm code (a hook measured
  // first in its process was sized by its cold first call: 7 calls per sample instead of ~50).
  for (const run of [inProcess, overHttp, floor]) {
    const until = performance.now() + 200;
    for (let i = 0; i < 200 && performance.now() < until; i++) await run();
  }
  const estimate = Math.max(await time(3, inProcess), await time(3, overHttp), await time(3, floor));
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

/** Keeps the floor's work observable, so it is not optimised away. */
export function floorSink(): number {
  return sink;
}

/**
 * A JSON POST whose body is a one-chunk byte stream, the way a server adapter hands it over: a
 * Buffer would make the Request constructor copy it first, a cost of the fetch API, not the hook's.
 */
export function streamedPost(bytes: Uint8Array): RequestInit & { duplex: 'half' } {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length) },
    duplex: 'half',
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    }),
  };
}
