// The addon uses Node-API only, so one build loads on every supported Node.js. Proven here: the
// addon the global setup built (under the Node.js running this suite) is loaded by every other
// Node.js found on PATH (the machine's own, e.g. 20, beside the 24 that npm scripts run from
// node_modules/.bin) and detects a fake card there.
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { FAKE_LIBRARIES, REPO_ROOT, machineFile, MiB } from '../../harness/native/fake-machine.js';

const ADDON = path.join(REPO_ROOT, 'native', 'build', 'Release', 'gpustack_native.node');

/** Every distinct Node.js binary on PATH, and the one running this file. */
function nodeBinaries(): string[] {
  const found = new Set<string>([realpathSync(process.execPath)]);
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      found.add(realpathSync(candidate));
    } catch {
      // not on this PATH entry
    }
  }
  return [...found];
}

const version = (node: string): string => execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
const major = (v: string): number => Number(/^v(\d+)/.exec(v)?.[1]);

const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-node-versions-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const SCRIPT = `
const addon = require(process.argv[1]);
addon.detect({ manufacturers: ['nvidia'] }).then((result) => process.stdout.write(JSON.stringify(result)));
`;

describe('one addon build on every Node.js', () => {
  const binaries = nodeBinaries().map((node) => ({ node, version: version(node) }));

  it('runs this suite on a supported Node.js (engines: 24 LTS)', () => {
    expect(major(process.version)).toBeGreaterThanOrEqual(24);
  });

  it.each(binaries)('loads and detects a fake H100 on $version ($node)', ({ node }) => {
    const env = {
      ...process.env,
      GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
      GPUSTACK_FAKE_DEVICES: machineFile(
        {
          devices: {
            nvidia: [{ name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-cross-node', memory: 81559n * MiB, cc: '9.0' }],
          },
        },
        directory,
      ),
    };
    const out = execFileSync(node, ['-e', SCRIPT, ADDON], { env, encoding: 'utf8' });
    const result = JSON.parse(out) as { devices: { uuid: string; product: string }[]; errors: unknown[] };
    expect(result.errors).toEqual([]);
    expect(result.devices.map((d) => [d.uuid, d.product])).toEqual([['GPU-cross-node', 'NVIDIA H100 80GB HBM3']]);
  });
});
