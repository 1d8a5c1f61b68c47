import { defineConfig } from 'vitest/config';

// `npm run test:e2e`: the real control plane (test/e2e). The native global setup builds the
// addon and the fake vendor libraries the agent scenario runs on.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.test.ts'],
    globalSetup: ['test/native/global-setup.ts'],
    fileParallelism: false,
    pool: 'forks',
    testTimeout: 300_000,
    hookTimeout: 3_600_000,
    reporters: ['verbose'],
  },
});
