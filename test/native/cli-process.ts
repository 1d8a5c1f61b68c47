// Runs the real `gpustack-operator` CLI in a child process, so that a crash inside the addon
// (a signal from the dynamic loader, say) is seen as the child's exit, not as a dead test
// runner. The sources are compiled once per test file without type checking (that is
// `npm run typecheck`'s job) into a private folder under build/, next to the addon.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll } from 'vitest';

import { REPO_ROOT } from './fake-machine.js';

export const ADDON_PATH = path.join(REPO_ROOT, 'native', 'build', 'Release', 'gpustack_native.node');
const TSC = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
/** A start imports the Kubernetes client: seconds on a loaded machine. */
const CHILD_TIMEOUT_MS = 20_000;
/** For the tests that run it: the child's own limit, plus room to report. */
export const CLI_TIMEOUT_MS = CHILD_TIMEOUT_MS + 10_000;

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
    // A child stuck in the loader (a FIFO opened as a library) is killed, and that shows.
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
  dispose(): void;
}

async function compileCli(): Promise<Cli> {
  mkdirSync(path.join(REPO_ROOT, 'build'), { recursive: true });
  const outDir = mkdtempSync(path.join(REPO_ROOT, 'build', 'cli-test-'));
  const build = await run(
    process.execPath,
    [TSC, '-p', 'tsconfig.build.json', '--outDir', outDir, '--noCheck', '--sourceMap', 'false'],
    process.env,
  );
  if (build.code !== 0) throw new Error(`tsc failed (${build.code}):\n${build.stdout}${build.stderr}`);
  const cli = path.join(outDir, 'src', 'cli', 'main.js');
  return {
    run: (args, env = {}) =>
      run(process.execPath, [cli, ...args], {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        GPUSTACK_NATIVE_ADDON: ADDON_PATH,
        ...env,
      }),
    start: (args, env = {}) =>
      spawn(process.execPath, [cli, ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GPUSTACK_NATIVE_ADDON: ADDON_PATH, ...env },
        stdio: 'pipe',
      }),
    dispose: () => rmSync(outDir, { recursive: true, force: true }),
  };
}

/**
 * For a test file: compiles the CLI before its tests, and removes it and a scratch folder
 * (named after `name`) after them.
 */
export function useCli(name: string): {
  readonly scratch: string;
  readonly run: Cli['run'];
  readonly start: Cli['start'];
} {
  const scratch = mkdtempSync(path.join(os.tmpdir(), `gpustack-${name}-`));
  let cli: Cli | undefined;
  beforeAll(async () => {
    cli = await compileCli();
  }, 120_000);
  afterAll(() => {
    cli?.dispose();
    rmSync(scratch, { recursive: true, force: true });
  });
  return {
    scratch,
    run: (args, env) => {
      if (cli === undefined) throw new Error('the CLI is compiled in beforeAll: run it from a test');
      return cli.run(args, env);
    },
    start: (args, env) => {
      if (cli === undefined) throw new Error('the CLI is compiled in beforeAll: start it from a test');
      return cli.start(args, env);
    },
  };
}
