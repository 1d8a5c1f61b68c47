// Compiles the sources once per test run, as `npm run build` does but without type checking (that
// is `npm run typecheck`'s job), into a private project folder under build/: its dist/ is what the
// tests that run the real CLI in a child process start (test/support/compiled-cli.ts). Under the
// repository, so that the compiled files import node_modules; private, so that a concurrent
// `npm run build` into dist/ cannot race with the tests. Removed after the run.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A folder whose `dist/` holds the compiled sources (`dist/src/cli/main.js`). */
    compiledProject: string;
  }
}

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

export default async function setup(project: TestProject): Promise<() => void> {
  mkdirSync(path.join(REPO_ROOT, 'build'), { recursive: true });
  const folder = mkdtempSync(path.join(REPO_ROOT, 'build', 'cli-test-'));
  const remove = () => rmSync(folder, { recursive: true, force: true });
  try {
    // No time limit: on a loaded machine this takes as long as it takes.
    await promisify(execFile)(
      process.execPath,
      [TSC, '-p', 'tsconfig.build.json', '--outDir', path.join(folder, 'dist'), '--noCheck', '--sourceMap', 'false'],
      { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    remove();
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p tsconfig.build.json failed:\n${stdout}${stderr}`, { cause: error });
  }
  project.provide('compiledProject', folder);
  return remove;
}
