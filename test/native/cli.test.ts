// `gpustack-operator detect` as an operator runs it: the compiled CLI in a child process.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CLI_TIMEOUT_MS, compileCli, type Cli } from './cli-process.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-cli-native-'));
let cli: Cli;
beforeAll(async () => {
  cli = await compileCli();
}, 120_000);
afterAll(() => {
  cli.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('GPUSTACK_NATIVE_ADDON', () => {
  it(
    'naming a missing file: exit 1 with one line naming the path, no output, no stack trace',
    async () => {
      const missing = path.join(scratch, 'gpustack_native.node');

      const run = await cli.run(['detect', '-o', 'json'], { GPUSTACK_NATIVE_ADDON: missing });

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^error: GPUSTACK_NATIVE_ADDON names ${missing}, which does not load:\n`));
      expect(run.stderr).not.toMatch(/\n\s+at /);
    },
    CLI_TIMEOUT_MS,
  );
});
