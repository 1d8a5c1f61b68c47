// Our hook server as the e2e suite runs it: the built CLI (`node dist/src/cli/main.js serve`) on a
// fixed loopback port, so it can be killed and started again at the same URL.
import path from 'node:path';

import { waitFor } from './apply.js';
import { REPO_ROOT } from './components.js';
import type { Stoppable } from './control-plane.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';

export interface HookServer extends Stoppable {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  process(): ManagedProcess;
  /** SIGKILL, no goodbye: what a crashed or evicted replica looks like to Metacontroller. */
  kill(): Promise<void>;
  /** Starts it again on the same port and waits for /readyz. */
  start(): Promise<void>;
}

export const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** `options.port`: where the chart's Pod serves (the dashboard scenario scrapes it there); a free port by default. */
export async function startHookServer(logsDir: string, options: { port?: number } = {}): Promise<HookServer> {
  const port = options.port ?? ((await freePorts(1)) as [number])[0];
  const url = `http://127.0.0.1:${port}`;
  let current: ManagedProcess | undefined;
  let starts = 0;
  const start = async (): Promise<void> => {
    starts++;
    current = startProcess(
      `hook-server-${starts}`,
      process.execPath,
      [CLI, 'serve', '--host', '127.0.0.1', '--port', String(port)],
      logsDir,
    );
    const proc = current;
    await waitFor(
      async () => {
        if (!proc.running()) throw new Error(`hook server exited: ${proc.tail()}`);
        const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
        return response.ok;
      },
      30_000,
      `hook server did not become ready on ${url}`,
    );
  };
  await start();
  return {
    name: 'hook-server',
    url,
    port,
    process: () => current as ManagedProcess,
    start,
    kill: async () => {
      const proc = current as ManagedProcess;
      process.kill(proc.pid, 'SIGKILL');
      await proc.exited;
    },
    stop: async () => {
      await current?.stop();
    },
  };
}
