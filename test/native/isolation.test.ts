// detectIsolated() runs detection in a child process: whatever a vendor library does to that
// child (a signal, exit(), a hang) costs its manufacturer one entry, and the manufacturers after
// it are detected by a new child. The runner is driven here by a stand-in child that follows a
// script per manufacturer; the real child (native/detect-child.ts) must give what detect() gives.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { detect, detectIsolated, type DetectResult, type ManufacturerName } from '../../native/index.js';
import { runIsolated } from '../../native/isolation.js';
import { FAKE_LIBRARIES, libraryVariable, machineFile, MiB } from '../../harness/native/fake-machine.js';

type Act = 'ok' | 'segv' | 'exit' | 'hang' | 'segv-before-load' | 'garbage';

/** Speaks the child's protocol on fd 3, doing to itself what FAKE_SCRIPT says for each manufacturer. */
const STAND_IN = `
import { writeSync } from 'node:fs';
const { manufacturers } = JSON.parse(process.argv.at(-1));
const script = JSON.parse(process.env.FAKE_SCRIPT);
for (const m of manufacturers) {
  const act = script[m] ?? 'ok';
  if (act === 'segv-before-load') process.kill(process.pid, 'SIGSEGV');
  writeSync(3, 'L/lib/' + m + '.so\\0');
  if (act === 'segv') process.kill(process.pid, 'SIGSEGV');
  if (act === 'exit') process.exit(3);
  if (act === 'hang') await new Promise(() => setInterval(() => {}, 60000));
  if (act === 'garbage') writeSync(3, 'R{"devices":\\0');
  const device = { manufacturer: m, index: 0, uuid: m, product: m + '-card', memoryMiB: 1024, cores: 0 };
  writeSync(3, 'R' + JSON.stringify({ devices: [device], errors: [] }) + '\\0');
}
`;

const MANUFACTURERS: readonly ManufacturerName[] = ['amd', 'cambricon', 'nvidia', 'thead'];

function isolated(script: Partial<Record<ManufacturerName, Act>>, timeoutMs = 60_000): Promise<DetectResult> {
  return runIsolated({
    manufacturers: MANUFACTURERS,
    hostRoot: '',
    command: ['--input-type=module', '--eval', STAND_IN],
    env: { ...process.env, FAKE_SCRIPT: JSON.stringify(script) },
    timeoutMs,
    check: (raw) => raw as DetectResult,
  });
}

const products = (result: DetectResult) => result.devices.map((d) => d.product);

/** Generous: each case starts a few Node processes on what may be a busy machine. */
const HANG_GUARD_MS = 120_000;

describe('runIsolated', () => {
  it(
    'a child killed by a signal while using a library: InvalidLibrary naming it; the later manufacturers get a new child',
    async () => {
      const result = await isolated({ nvidia: 'segv' });

      expect(products(result)).toEqual(['amd-card', 'cambricon-card', 'thead-card']);
      expect(result.errors).toEqual([
        {
          manufacturer: 'nvidia',
          code: 'InvalidLibrary',
          message:
            '/lib/nvidia.so: the detection process was killed by SIGSEGV while loading or using this library (a damaged file? reinstall the driver)',
        },
      ]);
    },
    HANG_GUARD_MS,
  );

  it(
    'a child that exits: InvalidLibrary with the exit code; two failing manufacturers cost one entry each',
    async () => {
      const result = await isolated({ amd: 'exit', thead: 'segv' });

      expect(products(result)).toEqual(['cambricon-card', 'nvidia-card']);
      expect(result.errors.map((e) => [e.manufacturer, e.code, e.message.split(' while ')[0]])).toEqual([
        ['amd', 'InvalidLibrary', '/lib/amd.so: the detection process exited with code 3'],
        ['thead', 'InvalidLibrary', '/lib/thead.so: the detection process was killed by SIGSEGV'],
      ]);
    },
    HANG_GUARD_MS,
  );

  it(
    'a child that stops answering is killed after timeoutMs: CallFailed naming the library',
    async () => {
      // Long enough that a busy machine cannot stall a healthy child that long between two writes.
      const result = await isolated({ cambricon: 'hang' }, 3000);

      expect(products(result)).toEqual(['amd-card', 'nvidia-card', 'thead-card']);
      expect(result.errors).toEqual([
        {
          manufacturer: 'cambricon',
          code: 'CallFailed',
          message:
            '/lib/cambricon.so: the detection process gave no answer within 3 s and was killed while using this library',
        },
      ]);
    },
    HANG_GUARD_MS,
  );

  it(
    'rejects when a child dies before loading any library (nothing to blame on a vendor)',
    async () => {
      await expect(isolated({ nvidia: 'segv-before-load' })).rejects.toThrow(
        'detecting nvidia: the detection process was killed by SIGSEGV before it loaded a library',
      );
    },
    HANG_GUARD_MS,
  );

  it(
    'rejects a malformed report',
    async () => {
      await expect(isolated({ amd: 'garbage' })).rejects.toThrow(SyntaxError);
    },
    HANG_GUARD_MS,
  );
});

describe('detectIsolated', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-isolation-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it(
    'gives what detect() gives, in the same order, for any order of the requested manufacturers',
    async () => {
      const h100 = (i: number) => ({ name: 'NVIDIA H100 80GB HBM3', uuid: `GPU-${i}`, memory: 81559n * MiB });
      const machine = {
        devices: {
          nvidia: [h100(0), h100(1)],
          amd: [{ name: 'AMD Instinct MI300X OAM', uuid: 'amd-0', memory: 196592n * MiB }],
          thead: [{ name: 'PPU-ZW810E', uuid: 'GPU-ppu-0', memory: 98304n * MiB }],
        },
      };
      const env: Record<string, string> = {
        GPUSTACK_FAKE_DEVICES: machineFile(machine, directory),
        [libraryVariable('nvidia')]: FAKE_LIBRARIES.nvidia,
        [libraryVariable('amd')]: FAKE_LIBRARIES.amd,
        [libraryVariable('thead')]: FAKE_LIBRARIES.thead,
        [libraryVariable('cambricon')]: path.join(directory, 'missing.so'),
      };
      Object.assign(process.env, env);
      try {
        const options = { manufacturers: ['thead', 'nvidia', 'cambricon', 'amd', 'nvidia'] as const };

        const [inChild, inProcess] = [await detectIsolated(options), await detect(options)];

        expect(inChild).toEqual(inProcess);
        expect(inChild.devices.map((d) => d.manufacturer)).toEqual(['amd', 'nvidia', 'nvidia', 'thead']);
        expect(inChild.errors.map((e) => [e.manufacturer, e.code])).toEqual([['cambricon', 'LibraryNotFound']]);
      } finally {
        for (const key of Object.keys(env)) delete process.env[key];
      }
    },
    HANG_GUARD_MS,
  );
});
