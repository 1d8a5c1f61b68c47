import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { freePorts, startProcess, type ManagedProcess } from '../../harness/e2e/processes.js';

// A tiny server on a fixed port, as every harness process is: what restart() must bring back.
const SERVER = `
const port = Number(process.argv[1]);
require('node:http').createServer((_, res) => res.end(String(process.pid))).listen(port, '127.0.0.1', () => console.log('listening', port));
`;

const answer = async (port: number): Promise<string> =>
  (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })).text();

describe('a managed process of the e2e harness', () => {
  let dir = '';
  let proc: ManagedProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is killed with the signal given and restarts with the same arguments, on the same port and log', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'harness-process-'));
    const [port] = (await freePorts(1)) as [number];
    const ready = async (): Promise<boolean> => (await answer(port)) !== '';
    proc = startProcess('server', process.execPath, ['-e', SERVER, String(port)], dir, { ready });
    const first = proc;
    await expect.poll(() => ready().catch(() => false), { timeout: 10_000 }).toBe(true);
    const firstPid = first.pid;
    expect(await answer(port)).toBe(String(firstPid));

    await first.kill();
    expect(first.running()).toBe(false);
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await expect(answer(port)).rejects.toThrow();

    await first.restart();
    expect(first.running()).toBe(true);
    expect(first.starts).toBe(2);
    expect(first.pid).not.toBe(firstPid);
    expect(await answer(port)).toBe(String(first.pid));
    expect(readFileSync(first.logFile, 'utf8').match(/listening/g)).toHaveLength(2);

    // A restart of a live (even frozen) run stops it first.
    await first.kill('SIGSTOP');
    const frozenPid = first.pid;
    await first.restart();
    expect(first.pid).not.toBe(frozenPid);
    expect(await answer(port)).toBe(String(first.pid));
  });

  it('fails a restart whose process exits before it is ready, naming its log', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'harness-process-'));
    proc = startProcess('quitter', process.execPath, ['-e', 'setTimeout(() => process.exit(3), 50)'], dir, {
      ready: async () => false,
      readyTimeoutMs: 1500,
    });
    await proc.exited;
    await expect(proc.restart()).rejects.toThrow(/quitter did not become ready after restart 1; see .*quitter\.log/);
  });
});
