// Child processes of the e2e harness: output to one log file each, stopped by pid
// (SIGTERM, then SIGKILL), and killed synchronously if the test process exits first.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { sleep } from './apply.js';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
}

export interface ManagedProcess {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves when it exits (code or signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True while it runs. */
  running(): boolean;
  /** SIGTERM, then SIGKILL after graceMs; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
  /** The last `lines` lines of its log. */
  tail(lines?: number): string;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** Starts `binary args` with stdout+stderr appended to `<logsDir>/<name>.log`. */
export function startProcess(
  name: string,
  binary: string,
  args: readonly string[],
  logsDir: string,
  options: StartOptions = {},
): ManagedProcess {
  installExitHook();
  const logFile = path.join(logsDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(binary, args, {
      stdio: ['ignore', fd, fd],
      env: options.env ?? process.env,
      ...(options.cwd ? { cwd: options.cwd } : {}),
    });
  } finally {
    closeSync(fd);
  }
  live.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
    child.on('error', (error) => {
      live.delete(child);
      // spawn failure (ENOENT…): leave a trace in the log reader's view
      resolve({ code: -1, signal: null });
      lastSpawnError.set(name, error);
    });
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null && live.has(child);
  const tail = (lines = 40): string => {
    try {
      const spawnError = lastSpawnError.get(name);
      const text = readFileSync(logFile, 'utf8')
        .split('\n')
        .slice(-lines - 1)
        .join('\n');
      return spawnError ? `${spawnError.message}\n${text}` : text;
    } catch {
      return '';
    }
  };
  return {
    name,
    pid: child.pid ?? -1,
    logFile,
    exited,
    running,
    tail,
    async stop(graceMs = 10_000) {
      if (!running() || child.pid === undefined) return;
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        return;
      }
      const timer = sleep(graceMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited, timer])) === 'timeout' && running()) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
        await exited;
      }
    },
  };
}

const lastSpawnError = new Map<string, Error>();

/** `count` distinct free TCP ports on 127.0.0.1 (held open together, then released). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolve);
      });
      servers.push(server);
    }
    return servers.map((s) => (s.address() as net.AddressInfo).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** Throws (with the log's tail) if the process has exited. */
export function assertRunning(proc: ManagedProcess): void {
  if (!proc.running()) {
    throw new Error(`${proc.name} exited early; last lines of ${proc.logFile}:\n${proc.tail()}`);
  }
}
