// The one vitest configuration scripts/real-card/run.sh uses on the lent GPU machine: only the
// real-hardware file, with none of the root configuration's global set-ups (they compile the
// addon, the fake vendor libraries and the sources, all of which travel there already built).
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/native/real-hardware.test.ts'],
    // The addon reads GPUSTACK_* with getenv(): a process of its own, as in the native project.
    pool: 'forks',
    testTimeout: 120_000,
  },
});
