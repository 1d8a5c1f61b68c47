import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { detectOn, FAKE_LIBRARIES, fleet, MiB, type FakeFields } from '../../harness/native/fake-machine.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-vendors-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A ROCm install root holding only `.info/version`. */
function rocmRoot(name: string, version: string): string {
  const root = path.join(scratch, name);
  mkdirSync(path.join(root, '.info'), { recursive: true });
  writeFileSync(path.join(root, '.info', 'version'), `${version}\n`);
  return root;
}

const mi300x = (i: number) => ({
  name: 'AMD Instinct MI300X OAM',
  uuid: `3dff74a1-0000-1000-80a5-00000000000${i}`,
  memory: 196592n * MiB,
  cores: 304,
  gfx: 0x942,
  bus: `0000:${(0x11 + i * 0x20).toString(16)}:00.0`,
  numa: i < 4 ? 0 : 1,
});

describe('AMD', () => {
  it('reports 8× MI300X through AMD SMI, with the ROCm release as runtime', async () => {
    const { devices, errors } = await detectOn(
      { lib: { amd: { driver: '6.10.5' } }, devices: { amd: fleet(8, mi300x) } },
      { libraries: { amd: FAKE_LIBRARIES.amd }, env: { ROCM_PATH: rocmRoot('rocm-6.4', '6.4.1-120') } },
    );

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(8);
    expect(devices[0]).toEqual({
      manufacturer: 'amd',
      index: 0,
      uuid: '3dff74a1-0000-1000-80a5-000000000000',
      product: 'AMD Instinct MI300X OAM',
      memoryMiB: 196592,
      cores: 304,
      computeCapability: 'gfx942',
      pciBusId: '0000:11:00.0',
      numaNode: 0,
      driverVersion: '6.10.5',
      runtimeVersion: '6.4',
    });
    expect(devices[7]).toMatchObject({ index: 7, pciBusId: '0000:f1:00.0', numaNode: 1 });
  });

  it('falls back to ROCm SMI under $ROCM_PATH when AMD SMI is absent', async () => {
    const cards = fleet(2, (i) => ({
      name: 'AMD Instinct MI210',
      uniqueId: 0xabc0 + i,
      memory: 65520n * MiB,
      gfx: 910,
    }));
    const { devices, errors, trace } = await detectOn(
      { devices: { amd: cards } },
      // No override: the search plan must find ROCM_PATH/lib/librocm_smi64.so by itself.
      {
        libraries: {},
        manufacturers: ['amd'],
        env: { GPUSTACK_AMD_LIBRARY: '', ROCM_PATH: FAKE_LIBRARIES.amdRocmRoot },
      },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.product, d.memoryMiB, d.computeCapability, d.uuid])).toEqual([
      ['AMD Instinct MI210', 65520, 'gfx910', 'GPU-000000000000abc0'],
      ['AMD Instinct MI210', 65520, 'gfx910', 'GPU-000000000000abc1'],
    ]);
    expect(trace).toContain('rsmi_init');
  });

  it('ignores Hygon DCUs that a ROCm SMI build reports', async () => {
    const machine = { devices: { hygon: [{ name: 'K100_AI', memory: 65520n * MiB }] } };
    const { devices, errors } = await detectOn(machine, { libraries: { amd: FAKE_LIBRARIES.hygon } });

    expect(errors).toEqual([]);
    expect(devices).toEqual([]);
  });
});

describe('Hygon (ROCm SMI, hyhal build)', () => {
  it('reports a K100_AI with its gfx target', async () => {
    const card = {
      name: 'K100_AI',
      uniqueId: '0x1d94aa0011',
      memory: 65520n * MiB,
      gfx: 928,
      bus: '0000:3d:00.0',
      numa: 0,
    };
    const { devices, errors } = await detectOn(
      { lib: { hygon: { driver: '6.3.11-V1.5.2' } }, devices: { hygon: [card] } },
      { libraries: { hygon: FAKE_LIBRARIES.hygon } },
    );

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      {
        manufacturer: 'hygon',
        index: 0,
        uuid: 'GPU-0000001d94aa0011',
        product: 'K100_AI',
        memoryMiB: 65520,
        cores: 0,
        computeCapability: 'gfx928',
        pciBusId: '0000:3d:00.0',
        numaNode: 0,
        driverVersion: '6.3.11-V1.5.2',
      },
    ]);
  });
});

describe('Ascend (DCMI)', () => {
  const npu = (i: number) => ({
    name: '910B2',
    cores: 24,
    memory: 65536, // MB: DCMI's unit
    die: `E0F4EE6${i} 802061B1 6A691492 89528485 104301E3`,
    bus: `0000:${(0xc1 + i).toString(16)}:00.0`,
  });

  it('reports 8× 910B2 from MB, one card each, with die-id UUIDs and the soc family', async () => {
    const { devices, errors } = await detectOn(
      { lib: { ascend: { driver: '25.5.1' } }, devices: { ascend: fleet(8, npu) } },
      { libraries: { ascend: FAKE_LIBRARIES.ascend } },
    );

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(8);
    expect(devices[0]).toEqual({
      manufacturer: 'ascend',
      index: 0,
      uuid: 'E0F4EE60-802061B1-6A691492-89528485-104301E3',
      product: 'Ascend910B2',
      memoryMiB: 65536,
      cores: 24,
      family: '910B',
      pciBusId: '0000:c1:00.0',
      driverVersion: '25.5.1',
    });
  });

  it('uses logic ids as indexes, skips non-NPU units and reads DDR memory when HBM is absent', async () => {
    const chips: FakeFields[] = [
      { name: '310P3', cores: 8, memory: 44280, card: 3, chip: 0, logic: 1, fail: 'hbm' },
      { name: '310P3', cores: 8, memory: 44280, card: 3, chip: 1, logic: 0, fail: 'hbm' },
      { name: 'MCU', card: 3, chip: 2, type: 1 },
    ];
    const { devices, errors } = await detectOn(
      { devices: { ascend: chips } },
      { libraries: { ascend: FAKE_LIBRARIES.ascend } },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.index, d.product, d.memoryMiB, d.family])).toEqual([
      [0, 'Ascend310P3', 44280, '310P'],
      [1, 'Ascend310P3', 44280, '310P'],
    ]);
  });

  it('reports a DCMI init failure (-8013 in a container) as InitFailed', async () => {
    const { errors } = await detectOn(
      { lib: { ascend: { init: -8013 } } },
      { libraries: { ascend: FAKE_LIBRARIES.ascend } },
    );

    expect(errors).toEqual([
      { manufacturer: 'ascend', code: 'InitFailed', message: expect.stringContaining('not supported in container') },
    ]);
  });
});

describe('Cambricon (CNDev)', () => {
  it('reports an MLU370-X8 from MB with handle-addressed calls', async () => {
    const card = {
      name: 'MLU370-X8',
      uuid: '5f3ca1d2e7b64c8f9a0b1c2d3e4f5a6b7c8',
      memory: 49152,
      bus: '0000:4f:00.0',
      numa: 1,
    };
    const { devices, errors } = await detectOn(
      { lib: { cambricon: { driver: '5.10.22' } }, devices: { cambricon: [card] } },
      { libraries: { cambricon: FAKE_LIBRARIES.cambricon } },
    );

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      {
        manufacturer: 'cambricon',
        index: 0,
        uuid: 'MLU-5f3ca1d2e7b64c8f9a0b1c2d3e4f5a6b7c8',
        product: 'MLU370-X8',
        memoryMiB: 49152,
        cores: 0,
        pciBusId: '0000:4f:00.0',
        numaNode: 1,
        driverVersion: '5.10.22',
      },
    ]);
  });

  it('reports LOW_DRIVER_VERSION at init as DriverMismatch', async () => {
    const { errors } = await detectOn(
      { lib: { cambricon: { init: 2 } } },
      { libraries: { cambricon: FAKE_LIBRARIES.cambricon } },
    );

    expect(errors).toEqual([
      { manufacturer: 'cambricon', code: 'DriverMismatch', message: expect.stringContaining('low driver version') },
    ]);
  });
});

describe('MetaX (MXSML)', () => {
  it('reports an MXC500 from KiB, skips VF entries and reports the MACA release', async () => {
    const cards: FakeFields[] = [
      { name: 'MXC500', uuid: 'GPU-8c2a1f00-5e6b', memory: 65536 * 1024, bus: '0000:0a:00.0', numa: 0 },
      { name: 'MXC500', uuid: 'GPU-vf', memory: 8192 * 1024, mode: 2 },
    ];
    const { devices, errors } = await detectOn(
      { lib: { metax: { driver: '3.6.11', runtime: '3.5.0.18' } }, devices: { metax: cards } },
      { libraries: { metax: FAKE_LIBRARIES.metax } },
    );

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      {
        manufacturer: 'metax',
        index: 0,
        uuid: 'GPU-8c2a1f00-5e6b',
        product: 'MXC500',
        memoryMiB: 65536,
        cores: 0,
        family: 'MXC',
        pciBusId: '0000:0a:00.0',
        numaNode: 0,
        driverVersion: '3.6.11',
        runtimeVersion: '3.5',
      },
    ]);
  });
});

describe('Moore Threads (MTML)', () => {
  it('reports an MTT S4000 through the library/device/memory objects', async () => {
    const card = {
      name: 'MTT S4000',
      uuid: 'c1e5f0aa-0000-4000-9000-000000000001',
      memory: 49152n * MiB,
      cores: 8192,
      bus: '0000:2b:00.0',
    };
    const { devices, errors, trace } = await detectOn(
      { lib: { mthreads: { driver: '2.7.0' } }, devices: { mthreads: [card] } },
      { libraries: { mthreads: FAKE_LIBRARIES.mthreads } },
    );

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      {
        manufacturer: 'mthreads',
        index: 0,
        uuid: 'c1e5f0aa-0000-4000-9000-000000000001',
        product: 'MTT S4000',
        memoryMiB: 49152,
        cores: 8192,
        pciBusId: '0000:2b:00.0',
        driverVersion: '2.7.0',
      },
    ]);
    // Every object the addon asked for is released again.
    expect(trace).toEqual(
      expect.arrayContaining([
        'mtmlDeviceFreeMemory',
        'mtmlLibraryFreeDevice',
        'mtmlLibraryFreeSystem',
        'mtmlLibraryShutDown',
      ]),
    );
  });

  it('reports DRIVER_TOO_OLD at init as DriverMismatch', async () => {
    const { errors } = await detectOn(
      { lib: { mthreads: { init: 9 } } },
      { libraries: { mthreads: FAKE_LIBRARIES.mthreads } },
    );

    expect(errors).toEqual([{ manufacturer: 'mthreads', code: 'DriverMismatch', message: expect.any(String) }]);
  });
});

describe('T-Head (HGML)', () => {
  it('reports PPU-ZW810E cards through the hgml* names, MIG mode included', async () => {
    const ppu = (i: number) => ({
      name: 'PPU-ZW810E',
      uuid: `GPU-ppu-${i}`,
      memory: 98304n * MiB,
      cores: 16384,
      cc: '8.0',
      mig: i === 0 ? 1 : 0,
    });
    const { devices, errors, trace } = await detectOn(
      { lib: { thead: { driver: '2.1.0-ra1f23041713', runtime: 12030 } }, devices: { thead: fleet(16, ppu) } },
      { libraries: { thead: FAKE_LIBRARIES.thead } },
    );

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(16);
    expect(devices[0]).toEqual({
      manufacturer: 'thead',
      index: 0,
      uuid: 'GPU-ppu-0',
      product: 'PPU-ZW810E',
      memoryMiB: 98304,
      cores: 16384,
      computeCapability: '8.0',
      driverVersion: '2.1.0-ra1f23041713',
      runtimeVersion: '12.3',
      partitioning: { mode: 'mig', enabled: true },
    });
    expect(devices[1]?.partitioning).toEqual({ mode: 'mig', enabled: false });
    expect(trace).toEqual(expect.arrayContaining(['hgmlInit_v2', 'hgmlDeviceGetHggcComputeCapability']));
  });
});

describe('NUMA node from sysfs', () => {
  const card = { name: 'Iluvatar BI-V150', uuid: 'GPU-ix', memory: 65536n * MiB, bus: '0000:5e:00.0' };

  it.each([
    ['1', 1],
    ['-1', undefined],
  ])('reads numa_node %s when the library does not tell', async (content, expected) => {
    const { devices } = await detectOn(
      { devices: { iluvatar: [card] } },
      { libraries: { iluvatar: FAKE_LIBRARIES.iluvatar }, sysfsNumaNodes: { '0000:5e:00.0': content } },
    );

    expect(devices[0]?.numaNode).toBe(expected);
  });

  it("prefers the library's answer", async () => {
    const { devices } = await detectOn(
      { devices: { iluvatar: [{ ...card, numa: 3 }] } },
      { libraries: { iluvatar: FAKE_LIBRARIES.iluvatar }, sysfsNumaNodes: { '0000:5e:00.0': '1' } },
    );

    expect(devices[0]?.numaNode).toBe(3);
  });
});

describe('Iluvatar (IXML)', () => {
  it("reports CoreX cards through libixml's nvml* names, without an NVIDIA family", async () => {
    const card = {
      name: 'Iluvatar BI-V150',
      uuid: 'GPU-ix-150',
      memory: 65536n * MiB,
      cores: 64,
      cc: '8.0',
      bus: '0000:5e:00.0',
    };
    const { devices, errors } = await detectOn(
      { lib: { iluvatar: { driver: '4.2.0', runtime: 10020 } }, devices: { iluvatar: [card] } },
      { libraries: { iluvatar: FAKE_LIBRARIES.iluvatar } },
    );

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      {
        manufacturer: 'iluvatar',
        index: 0,
        uuid: 'GPU-ix-150',
        product: 'Iluvatar BI-V150',
        memoryMiB: 65536,
        cores: 64,
        computeCapability: '8.0',
        pciBusId: '0000:5e:00.0',
        driverVersion: '4.2.0',
        runtimeVersion: '10.2',
      },
    ]);
  });
});
