// The sources the root global setup compiled once for this test run (test/global-setup.ts).
import path from 'node:path';

import { inject } from 'vitest';

/** A folder laid out like the image's /src after `npm run build`: its `dist/` is the compiled project. */
export function compiledProject(): string {
  return inject('compiledProject');
}

/** The compiled `gpustack-operator` entry point, `dist/src/cli/main.js`. */
export function compiledCli(): string {
  return path.join(compiledProject(), 'dist', 'src', 'cli', 'main.js');
}
