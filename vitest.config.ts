import os from 'node:os';

import { defineConfig } from 'vitest/config';

// Limits are hang guards only: a test waits for what it needs, never for a time that a loaded
// machine may exceed. Vitest's defaults (5 s a test, 10 s a hook) were hit at load 40 on two cores.
const HANG_GUARD_MS = 180_000;

// Two projects so the pure suite never needs a compiler toolchain: `unit` covers
// k8s, nodefeature, sync, server, cli; `native` builds the addon and the fake
// vendor libraries first (see test/native/global-setup.ts). The root global setup compiles
// the sources once for the tests that run the real CLI (see test/global-setup.ts).
export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Vitest's default leaves a core to its own process, which mostly waits: one worker on two cores.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    testTimeout: HANG_GUARD_MS,
    hookTimeout: HANG_GUARD_MS,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/native/**', 'test/e2e/**', 'node_modules/**'],
          // The files of a worker share its imported modules instead of importing them again
          // (client-node, hono, zod...): half the suite's CPU time. Fine while no test leaves
          // state behind in a module (spies are restored, nothing writes process.env); a file
          // that must not share belongs in a project of its own.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'native',
          include: ['test/native/**/*.test.ts'],
          globalSetup: ['test/native/global-setup.ts'],
          // The addon reads GPUSTACK_* with getenv(): tests that set process.env need a
          // real process per file, not a worker thread with a copied environment.
          pool: 'forks',
        },
      },
    ],
  },
});
