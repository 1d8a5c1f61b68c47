/** @module Child processes of the bench: TypeScript entry points run through tsx, one per size or role. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/: where the results, RESULTS.md and the entry points (by their folder: `hooks/load.ts`) are. */
export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(BENCH_DIR, '..');

/** Runs `bench/<script>` in a fresh Node with `nodeFlags` (TypeScript through tsx); stdout is piped, stderr inherited. */
export function spawnScript(
  script: string,
  args: readonly string[],
  nodeFlags: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  return spawn(process.execPath, [...nodeFlags, ...loader, path.join(BENCH_DIR, script), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

export const BUILT_SERVER = path.join(ROOT, 'dist', 'src', 'server', 'index.js');

/** Waits for a child to exit; rejects on a non-zero exit code. Resolves with everything it printed. */
export function finished(child: ChildProcess, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      const output = Buffer.concat(chunks).toString('utf8');
      if (code === 0) resolve(output);
      else reject(new Error(`${what} exited with ${code ?? signal}:\n${output.slice(-2000)}`));
    });
  });
}

export interface ServerChild {
  readonly port: number;
  /** Largest V8 heap in use before any GC (MB), read from `--trace-gc` lines when traced. */
  peakHeapMB(): number;
  stop(): Promise<void>;
}

// "[1234:0x5a…]   5310 ms: Mark-Compact 1203.4 (1240.9) -> 980.1 (1010.2) MB, …"
const GC_LINE = /:\s+\S[^:]*?\s(\d+(?:\.\d+)?) \((\d+(?:\.\d+)?)\) -> (\d+(?:\.\d+)?) \(/;

/**
 * The V8 flags the hook server runs with in the cluster (NODE_OPTIONS of manifests/server/deployment.yaml
 * and the chart): the bench's server and in-process measurements run with them too.
 * BENCH_SERVER_V8_FLAGS (space-separated) replaces them, to compare flags in one run of a size.
 */
export const SERVER_V8_FLAGS: readonly string[] = process.env.BENCH_SERVER_V8_FLAGS?.split(' ').filter(Boolean) ?? [
  '--max-semi-space-size=16',
];

/** Starts `bench/shared/server.mjs` (the built hook server in its own process) and waits for its port. */
export function startServerChild(options: { traceGc?: boolean; maxOldSpaceMB?: number } = {}): Promise<ServerChild> {
  const flags = [
    ...SERVER_V8_FLAGS,
    ...(options.traceGc ? ['--trace-gc'] : []),
    ...(options.maxOldSpaceMB ? [`--max-old-space-size=${options.maxOldSpaceMB}`] : []),
  ];
  if (!existsSync(BUILT_SERVER))
    throw new Error(`${BUILT_SERVER} is missing: run \`npm run build\` (npm run bench does)`);
  const child = spawnScript('shared/server.mjs', [], flags);
  let peak = 0;
  let pending = '';
  return new Promise((resolve, reject) => {
    let port: number | undefined;
    child.on('error', reject);
    child.on('exit', (code) => {
      if (port === undefined) reject(new Error(`bench server exited with ${code} before listening`));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const gc = GC_LINE.exec(line);
        if (gc) peak = Math.max(peak, Number(gc[1]));
        else if (port === undefined && line.startsWith('{')) {
          port = (JSON.parse(line) as { port: number }).port;
          resolve({
            port,
            peakHeapMB: () => peak,
            stop: () =>
              new Promise((done) => {
                child.once('exit', () => done());
                child.kill('SIGTERM');
              }),
          });
        }
      }
    });
  });
}

/**
 * Runs `<cli> serve` on a free port of 127.0.0.1 (warnings only) and resolves once it prints where
 * it listens; `extra` are more `serve` flags.
 */
export function startServeChild(
  cli: string,
  extra: readonly string[] = [],
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [cli, 'serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', ...extra],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let seen = '';
    child.on('exit', (code) => reject(new Error(`serve exited ${code} before listening:\n${seen}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /hook server on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(seen);
      if (match?.[1]) {
        child.stdout?.resume();
        resolve({ port: Number(match[1]), child });
      }
    });
  });
}
