// Our hook server as the e2e suite runs it: the built CLI (`node dist/src/cli/main.js serve`) on a
// fixed loopback port, so it can be killed and started again at the same URL.
import path from 'node:path';

import { waitFor } from './apply.js';
import { REPO_ROOT } from './components.js';
import type { Stoppable } from './control-plane.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';

export interface HookServer extends Stoppable {
  /** `<scheme>://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** The managed process: `kill(signal)`, `restart()` (same port, same arguments). */
  process(): ManagedProcess;
  /** SIGKILL, no goodbye: what a crashed or evicted replica looks like to Metacontroller. */
  kill(): Promise<void>;
  /** Starts it again on the same port and waits until it is ready. */
  start(): Promise<void>;
}

export interface HookServerOptions {
  /** Extra `serve` arguments (e.g. a serving certificate), after host and port. */
  args?: readonly string[];
  /** Extra environment, over this process's. */
  env?: Readonly<Record<string, string>>;
  /** The URL scheme Metacontroller calls (default `http`). */
  scheme?: string;
  /** Readiness probe; default `GET <url>/readyz` answers 2xx (an https server needs its own). */
  ready?: (url: string) => Promise<boolean>;
  /** Where it listens: the port of the chart's Pod (the dashboard scenario scrapes it there); a free one by default. */
  port?: number;
}

export const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

async function readyz(url: string): Promise<boolean> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
  return response.ok;
}

export async function startHookServer(logsDir: string, options: HookServerOptions = {}): Promise<HookServer> {
  const port = options.port ?? ((await freePorts(1)) as [number])[0];
  const url = `${options.scheme ?? 'http'}://127.0.0.1:${port}`;
  const probe = options.ready ?? readyz;
  const proc = startProcess(
    'hook-server',
    process.execPath,
    [CLI, 'serve', '--host', '127.0.0.1', '--port', String(port), ...(options.args ?? [])],
    logsDir,
    { env: { ...process.env, ...options.env }, ready: () => probe(url), readyTimeoutMs: 30_000 },
  );
  await waitFor(
    async () => {
      if (!proc.running()) throw new Error(`hook server exited: ${proc.tail()}`);
      return probe(url);
    },
    30_000,
    `hook server did not become ready on ${url}`,
  );
  return {
    name: 'hook-server',
    url,
    port,
    process: () => proc,
    start: () => proc.restart(),
    kill: () => proc.kill('SIGKILL'),
    stop: () => proc.stop(),
  };
}
