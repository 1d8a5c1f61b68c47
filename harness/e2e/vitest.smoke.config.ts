import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

// Runs only the control-plane smoke test (not part of `npm test`):
//   npx vitest run --config harness/e2e/vitest.smoke.config.ts
// The first run builds the upstream components (scripts/e2e/build-components.sh).
export default defineConfig({
  root: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..'),
  test: {
    include: ['harness/e2e/*.smoke.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 3_600_000,
  },
});
