// Builds the addon (cmake-js, Node-API mode: no header download, works offline) and the
// fake vendor libraries (plain cmake): once per test run (test/native/global-setup.ts), or when a
// bench needs them. Both builds are incremental.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { FAKES_BUILD_DIR, REPO_ROOT } from './fake-machine.js';

function run(command: string, args: readonly string[]): void {
  try {
    execFileSync(command, args, { cwd: REPO_ROOT, stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed:\n${stdout}\n${stderr}`, { cause: error });
  }
}

export function buildNativeAndFakes(): void {
  const parallel = String(Math.max(1, os.availableParallelism()));
  const cmakeJs = createRequire(import.meta.url).resolve('cmake-js/bin/cmake-js');
  run(process.execPath, [cmakeJs, 'build', '--directory', 'native', '--parallel', parallel, '--log-level', 'warn']);
  run('cmake', ['-S', path.join('test', 'native', 'fakes'), '-B', FAKES_BUILD_DIR, '-DCMAKE_BUILD_TYPE=Release']);
  run('cmake', ['--build', FAKES_BUILD_DIR, '--parallel', parallel]);
}
