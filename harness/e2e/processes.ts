// Child processes of the e2e harness: output to one log file each, stopped by pid
// (SIGTERM, then SIGKILL), and killed synchronously if the test process exits first.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { sleep, waitFor } from './apply.js';

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
  /** The binary and arguments it runs, the same on every restart. */
  readonly binary: string;
  readonly args: readonly string[];
  /** The current run's pid (a restart changes it). */
  readonly pid: number;
  logFile: string;
  /** Resolves when the current run exits (code or signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** How many times it was started (1 before any restart). */
  readonly starts: number;
  /** True while it runs. */
  running(): boolean;
  /** SIGTERM, then SIGKILL after graceMs; resolves when it is gone. */
  stop(graceMs?: number): Promise<void>;
  /**
   * Sends `signal` (default SIGKILL: a crash, no goodbye) and resolves when the run has exited
   * (SIGSTOP resolves at once: the process is frozen, not gone).
   */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /**
   * Stops the current run if it still runs, starts the same binary with the same arguments and
   * environment (so the same ports and data dirs), the output appended to the same log, and waits
   * for the readiness probe given at start, if any.
   */
  restart(): Promise<void>;
  /** The last `lines` lines of its log. */
  tail(lines?: number): string;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Readiness probe restart() waits for (true = ready); the first start's caller waits itself. */
  ready?: () => Promise<boolean>;
  /** How long restart() waits for `ready`; default 120 s. */
  readyTimeoutMs?: number;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** One run of the process: spawned with output appended to logFile. */
function spawnRun(
  name: string,
  binary: string,
  args: readonly string[],
  logFile: string,
  options: StartOptions,
): { child: ChildProcess; exited: Promise<Exit> } {
  installExitHook();
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
  const exited = new Promise<Exit>((resolve) => {
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
  return { child, exited };
}

/** Starts `binary args` with stdout+stderr appended to `<logsDir>/<name>.log`. */
export function startProcess(
  name: string,
  binary: string,
  args: readonly string[],
  logsDir: string,
  options: StartOptions = {},
): ManagedProcess {
  const logFile = path.join(logsDir, `${name}.log`);
  let run = spawnRun(name, binary, args, logFile, options);
  let starts = 1;
  const running = (): boolean => run.child.exitCode === null && run.child.signalCode === null && live.has(run.child);
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
  const signal = (sig: NodeJS.Signals): boolean => {
    if (!running() || run.child.pid === undefined) return false;
    try {
      process.kill(run.child.pid, sig);
      return true;
    } catch {
      return false; // gone meanwhile
    }
  };
  const managed: ManagedProcess = {
    name,
    binary,
    args,
    logFile,
    get pid() {
      return run.child.pid ?? -1;
    },
    get exited() {
      return run.exited;
    },
    get starts() {
      return starts;
    },
    running,
    tail,
    async stop(graceMs = 10_000) {
      const { exited } = run;
      if (!signal('SIGTERM')) return;
      const timer = sleep(graceMs).then(() => 'timeout' as const);
      if ((await Promise.race([exited, timer])) === 'timeout' && running()) {
        signal('SIGKILL');
        await exited;
      }
    },
    async kill(sig = 'SIGKILL') {
      const { exited } = run;
      if (signal(sig) && sig !== 'SIGSTOP' && sig !== 'SIGCONT') await exited;
    },
    async restart() {
      if (running()) {
        signal('SIGCONT'); // a frozen run cannot act on SIGTERM
        await managed.stop();
      }
      lastSpawnError.delete(name);
      run = spawnRun(name, binary, args, logFile, options);
      starts++;
      const { ready } = options;
      if (!ready) return;
      await waitFor(
        async () => {
          assertRunning(managed);
          return ready();
        },
        options.readyTimeoutMs ?? 120_000,
        `${name} did not become ready after restart ${starts - 1}; see ${logFile}`,
        250,
      );
    },
  };
  return managed;
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
