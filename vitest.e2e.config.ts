import { defineConfig } from 'vitest/config';

// `npm run test:e2e`: the real control plane (test/e2e). The global setups build the addon and the
// fake vendor libraries the agent scenarios run on, and every upstream component at once.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    globalSetup: ['test/native/global-setup.ts', 'harness/e2e/global-setup.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 3_600_000,
    reporters: ['verbose'],
  },
});
