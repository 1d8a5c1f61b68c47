// Runs the real `gpustack-operator` CLI in a child process, so that a crash inside the addon
// (a signal from the dynamic loader, say) is seen as the child's exit, not as a dead test
// runner. The CLI is the one the root global setup compiled once for the whole run
// (test/global-setup.ts).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll } from 'vitest';

import { compiledCli } from '../support/compiled-cli.js';
import { REPO_ROOT } from '../../harness/native/fake-machine.js';

export const ADDON_PATH = path.join(REPO_ROOT, 'native', 'build', 'Release', 'gpustack_native.node');
/**
 * A hang guard, not a speed limit: a child stuck in the loader (a FIFO opened as a library) is
 * killed and that shows as its signal. A start takes well under a second on an idle machine.
 */
const CHILD_TIMEOUT_MS = 120_000;
/** For the tests that run it: the child's own limit, plus room to report. */
export const CLI_TIMEOUT_MS = CHILD_TIMEOUT_MS + 30_000;

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  const child = spawn(file, args, {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: CHILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

interface Cli {
  /**
   * Runs `gpustack-operator <args>` with exactly `env` plus PATH: nothing of the test
   * runner's environment (GPUSTACK_* variables) leaks in. `GPUSTACK_NATIVE_ADDON` names the
   * built addon unless `env` says otherwise.
   */
  run(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<CliRun>;
  /** Starts `gpustack-operator <args>` (the agent) with the environment of run(), without a time limit: the caller stops it. */
  start(args: readonly string[], env?: Readonly<Record<string, string>>): ChildProcessWithoutNullStreams;
}

/**
 * For a test file: the compiled CLI, and a scratch folder (named after `name`) removed after
 * the file's tests.
 */
export function useCli(name: string): {
  readonly scratch: string;
  readonly run: Cli['run'];
  readonly start: Cli['start'];
} {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `gpustack-${name}-`));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  return {
    scratch,
    run: (args, env = {}) =>
      run(process.execPath, [compiledCli(), ...args], {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        GPUSTACK_NATIVE_ADDON: ADDON_PATH,
        ...env,
      }),
    start: (args, env = {}) =>
      spawn(process.execPath, [compiledCli(), ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GPUSTACK_NATIVE_ADDON: ADDON_PATH, ...env },
        stdio: 'pipe',
      }),
  };
}
