// The compiled agent with a kubeconfig whose API server does not answer (a closed port on
// 127.0.0.1): it keeps running and retrying, /healthz (liveness) stays 200 because detection
// works, and /readyz says 503 with the reason. Needs the addon (a fake card is detected), so it
// lives in the native project; it runs the CLI the root global setup compiled once for the run.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { compiledCli } from '../support/compiled-cli.js';
import { ADDON_PATH } from './cli-process.js';
import { FAKE_LIBRARIES, machineFile, MiB, REPO_ROOT } from '../../harness/native/fake-machine.js';

/** Hang guard for one test: a start on a busy machine takes seconds. Nothing here is timed. */
const TEST_TIMEOUT_MS = 120_000;

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-agent-api-'));

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** stdout and stderr together (the logs). */
  readonly output: string;
}

function exited(child: ChildProcess): Promise<Exit> {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** A port nobody listens on right now (the kernel's pick, released again). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const res = await fetch(url);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

describe('agent with an API server that does not answer', () => {
  it(
    'keeps running and retrying; /healthz 200 (detection works), /readyz 503 with the reason; exits 0 on SIGTERM',
    async () => {
      const [apiPort, healthPort] = [await freePort(), await freePort()];
      const kubeconfig = path.join(scratch, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: closed',
          '  cluster:',
          `    server: http://127.0.0.1:${apiPort}`,
          '    insecure-skip-tls-verify: true',
          'users:',
          '- name: agent',
          '  user:',
          '    token: t',
          'contexts:',
          '- name: closed',
          '  context:',
          '    cluster: closed',
          '    user: agent',
          'current-context: closed',
          '',
        ].join('\n'),
      );
      const machine = { devices: { nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB }] } };
      const child = spawn(
        process.execPath,
        [
          compiledCli(),
          'agent',
          '--node',
          'node-a',
          '--publish',
          'node-labels',
          '--kubeconfig',
          kubeconfig,
          '--manufacturers',
          'nvidia',
          '--health-port',
          String(healthPort),
          '--log-level',
          'warn',
        ],
        {
          cwd: REPO_ROOT,
          env: {
            PATH: process.env['PATH'] ?? '/usr/bin:/bin',
            HOME: scratch,
            GPUSTACK_NATIVE_ADDON: ADDON_PATH,
            GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
            GPUSTACK_FAKE_DEVICES: machineFile(machine, scratch),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const done = exited(child);
      try {
        let ready: Awaited<ReturnType<typeof probe>>;
        for (;;) {
          ready = await probe(`http://127.0.0.1:${healthPort}/readyz`);
          if (typeof ready?.body['reason'] === 'string' && ready.body['reason'].includes('ECONNREFUSED')) break;
          if (child.exitCode !== null || child.signalCode !== null) throw new Error('the agent exited');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }

        expect(ready?.status).toBe(503);
        expect(ready?.body).toMatchObject({ ready: false, lastPublished: null });
        expect(ready?.body['reason']).toContain(`ECONNREFUSED 127.0.0.1:${apiPort}`);
        expect((ready?.body['failures'] as number) >= 1).toBe(true);
        const live = await probe(`http://127.0.0.1:${healthPort}/healthz`);
        expect(live?.status).toBe(200);
        expect(live?.body).toMatchObject({ healthy: true, lastPublish: null });
        expect(live?.body['lastError']).toContain('ECONNREFUSED');

        child.kill('SIGTERM');
        const exit = await done;
        expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
        expect(exit.output).toMatch(/agent cycle failed; will retry/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
    TEST_TIMEOUT_MS,
  );
});
