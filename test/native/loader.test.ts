import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it, vi } from 'vitest';

import {
  _loadAddon,
  AddonLoadError,
  addonCandidates,
  detect,
  DeviceError,
  type DetectOptions,
} from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { detectOn, libraryVariable, REPO_ROOT } from '../../harness/native/fake-machine.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-loader-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('detect() arguments', () => {
  it.each([
    ['a non-object', 'nvidia', TypeError, /^options must be an object/],
    ['null', null, TypeError, /^options must be an object/],
    ['a misspelt option', { manufacturer: ['nvidia'] }, TypeError, /unknown option "manufacturer"/],
    ['a non-array list', { manufacturers: 'nvidia' }, TypeError, /^options\.manufacturers must be an array/],
    [
      'a non-string entry',
      { manufacturers: ['nvidia', 7] },
      TypeError,
      /^options\.manufacturers\[1\] must be a string/,
    ],
    ['a non-string host root', { hostRoot: 7 }, TypeError, /^options\.hostRoot must be a string, got number/],
    [
      'a relative host root',
      { hostRoot: 'host' },
      RangeError,
      /^options\.hostRoot is "host", expected an absolute path or ""/,
    ],
    [
      'an unknown manufacturer',
      { manufacturers: ['intel'] },
      RangeError,
      /^options\.manufacturers\[0\] is "intel", expected one of amd, /,
    ],
  ])('rejects %s, naming the option', async (_name, options, type, message) => {
    const call = detect(options as DetectOptions);

    await expect(call).rejects.toThrow(type);
    await expect(call).rejects.toThrow(message);
  });

  it('enumerates nothing for an empty list', async () => {
    await expect(detect({ manufacturers: [] })).resolves.toEqual({ devices: [], errors: [] });
  });
});

describe('a CPU node (no vendor library anywhere)', () => {
  it('resolves with one LibraryNotFound per manufacturer, in order, and no devices', async () => {
    const { devices, errors } = await detectOn({}, { libraries: {}, manufacturers: [...MANUFACTURER_NAMES] });

    expect(devices).toEqual([]);
    expect(errors.map((e) => [e.manufacturer, e.code])).toEqual(MANUFACTURER_NAMES.map((m) => [m, 'LibraryNotFound']));
    expect(errors[7]?.message).toMatch(/missing-nvidia\.so: cannot open shared object file/);
  });

  it('enumerates every manufacturer by default and runs concurrent calls one after another', async () => {
    const missing = Object.fromEntries(
      MANUFACTURER_NAMES.map((m) => [libraryVariable(m), path.join(scratch, `${m}.so`)]),
    );
    const saved = { ...process.env };
    Object.assign(process.env, missing);
    try {
      const results = await Promise.all([detect(), detect(), detect({ manufacturers: ['nvidia', 'nvidia'] })]);

      expect(results[0]?.errors).toHaveLength(9);
      expect(results[1]).toEqual(results[0]);
      expect(results[2]?.errors.map((e) => e.manufacturer)).toEqual(['nvidia']);
    } finally {
      for (const key of Object.keys(missing)) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });
});

describe('addon loading', () => {
  it('tries the cmake-js build folder when GPUSTACK_NATIVE_ADDON is not set', () => {
    const candidates = addonCandidates({});

    expect(candidates[0]).toBe(path.join(REPO_ROOT, 'native', 'build', 'Release', 'gpustack_native.node'));
    expect(existsSync(candidates[0] ?? '')).toBe(true);
  });

  it('tries only GPUSTACK_NATIVE_ADDON when it is set, relative to the working directory', () => {
    expect(addonCandidates({ GPUSTACK_NATIVE_ADDON: '/opt/gpustack/gpustack_native.node' })).toEqual([
      '/opt/gpustack/gpustack_native.node',
    ]);
    expect(addonCandidates({ GPUSTACK_NATIVE_ADDON: 'lib/gpustack_native.node' })).toEqual([
      path.resolve('lib/gpustack_native.node'),
    ]);
  });

  it('fails with an AddonLoadError naming GPUSTACK_NATIVE_ADDON when it points at a missing file, though the built addon is there', async () => {
    const missing = path.join(scratch, 'moved', 'gpustack_native.node');
    const saved = process.env['GPUSTACK_NATIVE_ADDON'];
    process.env['GPUSTACK_NATIVE_ADDON'] = missing;
    vi.resetModules();
    try {
      // A fresh copy of the loader: this file's own copy has loaded the addon already.
      const fresh = await import('../../native/index.js');

      const error: unknown = await fresh.detect({ manufacturers: [] }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );

      expect(error).toBeInstanceOf(fresh.AddonLoadError);
      expect(error).toMatchObject({ override: missing, attempts: [`${missing}: not found`] });
      expect((error as Error).message).toMatch(
        /^GPUSTACK_NATIVE_ADDON names .*moved\/gpustack_native\.node, which does not load/,
      );
    } finally {
      if (saved === undefined) delete process.env['GPUSTACK_NATIVE_ADDON'];
      else process.env['GPUSTACK_NATIVE_ADDON'] = saved;
    }
  });

  it('names every path it tried and why when none loads', () => {
    const notAnAddon = path.join(scratch, 'not-an-addon.node');
    writeFileSync(notAnAddon, 'plain text');
    const missing = path.join(scratch, 'missing.node');

    let thrown: unknown;
    try {
      _loadAddon([missing, notAnAddon]);
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(AddonLoadError);
    const error = thrown as AddonLoadError;
    expect(error.attempts).toEqual([
      `${missing}: not found`,
      expect.stringMatching(/^.*not-an-addon\.node: .*(ELF|header|short)/i),
    ]);
    expect(error.message).toContain(missing);
    expect(error.message).toContain('npm run build:native');
  });

  it('loads the built addon', () => {
    const addon = _loadAddon(addonCandidates({}));

    expect(typeof addon.detect).toBe('function');
  });
});

describe('DeviceError', () => {
  it('carries the code and manufacturer of an entry', () => {
    const error = new DeviceError({ manufacturer: 'nvidia', code: 'DriverMismatch', message: 'nvmlInit_v2 failed' });

    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'DeviceError', code: 'DriverMismatch', manufacturer: 'nvidia' });
    expect(error.message).toBe('nvidia: DriverMismatch: nvmlInit_v2 failed');
  });
});
