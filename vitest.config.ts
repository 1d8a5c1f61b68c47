import { defineConfig } from 'vitest/config';

// Two projects so the pure suite never needs a compiler toolchain: `unit` covers
// k8s, nodefeature, sync, server, cli; `native` builds the addon and the fake
// vendor libraries first (see test/native/global-setup.ts). The root global setup compiles
// the sources once for the tests that run the real CLI (see test/global-setup.ts).
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/native/**', 'test/e2e/**', 'node_modules/**'],
        },
      },
      {
        test: {
          name: 'native',
          include: ['test/native/**/*.test.ts'],
          globalSetup: ['test/native/global-setup.ts'],
          // The addon reads GPUSTACK_* with getenv(): tests that set process.env need a
          // real process per file, not a worker thread with a copied environment.
          pool: 'forks',
          testTimeout: 30_000,
        },
      },
    ],
  },
});
