// Libraries that answer nonsense must produce error entries, never a crash or a garbage
// value: implausible counts, names without a NUL inside the caller's buffer, and memory
// sizes no card has.
import { describe, expect, it } from 'vitest';

import type { ManufacturerName } from '../../native/index.js';
import { detectOn, FAKE_LIBRARIES, MiB, type FakeFields } from '../../harness/native/fake-machine.js';

interface Vendor {
  readonly title: string;
  readonly manufacturer: ManufacturerName;
  readonly library: string;
  readonly device: FakeFields;
  /** The raw memory field for `mib` MiB, in the vendor's unit. */
  readonly memory: (mib: bigint) => bigint;
  /** A count the library might answer that no node has (negative where the type is signed). */
  readonly hugeCount: number;
}

const bytes = (mib: bigint) => mib * MiB;
const megabytes = (mib: bigint) => mib;
const kibibytes = (mib: bigint) => mib * 1024n;

const VENDORS: readonly Vendor[] = [
  {
    title: 'NVML',
    manufacturer: 'nvidia',
    library: FAKE_LIBRARIES.nvidia,
    device: { name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-a' },
    memory: bytes,
    hugeCount: 4294967295,
  },
  {
    title: 'IXML',
    manufacturer: 'iluvatar',
    library: FAKE_LIBRARIES.iluvatar,
    device: { name: 'Iluvatar BI-V150', uuid: 'GPU-b' },
    memory: bytes,
    hugeCount: 4294967295,
  },
  {
    title: 'HGML',
    manufacturer: 'thead',
    library: FAKE_LIBRARIES.thead,
    device: { name: 'PPU-ZW810E', uuid: 'GPU-c' },
    memory: bytes,
    hugeCount: 4294967295,
  },
  {
    title: 'AMD SMI',
    manufacturer: 'amd',
    library: FAKE_LIBRARIES.amd,
    device: { name: 'AMD Instinct MI300X OAM', uuid: 'd' },
    memory: bytes,
    hugeCount: 5000,
  },
  {
    title: 'ROCm SMI (AMD)',
    manufacturer: 'amd',
    library: FAKE_LIBRARIES.amdRocmSmi,
    device: { name: 'AMD Instinct MI210' },
    memory: bytes,
    hugeCount: 4294967295,
  },
  {
    title: 'ROCm SMI (Hygon)',
    manufacturer: 'hygon',
    library: FAKE_LIBRARIES.hygon,
    device: { name: 'K100_AI' },
    memory: bytes,
    hugeCount: 4294967295,
  },
  {
    title: 'DCMI',
    manufacturer: 'ascend',
    library: FAKE_LIBRARIES.ascend,
    device: { name: '910B2', cores: 24 },
    memory: megabytes,
    hugeCount: -1,
  },
  {
    title: 'CNDev',
    manufacturer: 'cambricon',
    library: FAKE_LIBRARIES.cambricon,
    device: { name: 'MLU370-X8', uuid: 'e' },
    memory: megabytes,
    hugeCount: 4294967295,
  },
  {
    title: 'MXSML',
    manufacturer: 'metax',
    library: FAKE_LIBRARIES.metax,
    device: { name: 'MXC500', uuid: 'GPU-f' },
    memory: kibibytes,
    hugeCount: 4294967295,
  },
  {
    title: 'MTML',
    manufacturer: 'mthreads',
    library: FAKE_LIBRARIES.mthreads,
    device: { name: 'MTT S4000', uuid: 'g' },
    memory: bytes,
    hugeCount: 4294967295,
  },
];

const SIXTEEN_TIB_MIB = 16n << 20n;

function run(vendor: Vendor, devices: readonly FakeFields[], lib: FakeFields = {}) {
  return detectOn(
    { lib: { [vendor.manufacturer]: lib }, devices: { [vendor.manufacturer]: devices } },
    { libraries: { [vendor.manufacturer]: vendor.library } },
  );
}

describe.each(VENDORS)('$title answering nonsense', (vendor) => {
  const card = (mib: bigint, extra: FakeFields = {}): FakeFields => ({
    ...vendor.device,
    memory: vendor.memory(mib),
    ...extra,
  });

  it('turns an implausible device count into one CallFailed entry', async () => {
    const { devices, errors } = await run(vendor, [card(1024n)], { count: vendor.hugeCount });

    expect(devices).toEqual([]);
    expect(errors).toEqual([
      { manufacturer: vendor.manufacturer, code: 'CallFailed', message: expect.stringMatching(/implausible .*count/) },
    ]);
  });

  it('rejects a name that is not NUL-terminated and keeps the other cards', async () => {
    const { devices, errors } = await run(vendor, [card(1024n), card(1024n, { unterminated: 'name' }), card(1024n)]);

    expect(devices.map((d) => d.index)).toEqual([0, 2]);
    expect(devices.every((d) => !d.product.includes('XXXX'))).toBe(true);
    expect(errors).toEqual([
      {
        manufacturer: vendor.manufacturer,
        code: 'CallFailed',
        message: expect.stringMatching(/^device 1: .*NUL-terminated/),
      },
    ]);
  });

  it('rejects more than 16 TiB per card and accepts exactly 16 TiB', async () => {
    const { devices, errors } = await run(vendor, [card(SIXTEEN_TIB_MIB), card(SIXTEEN_TIB_MIB + 1n)]);

    expect(devices.map((d) => [d.index, d.memoryMiB])).toEqual([[0, 16777216]]);
    expect(errors).toEqual([
      {
        manufacturer: vendor.manufacturer,
        code: 'CallFailed',
        message: 'device 1: implausible memory size 16777217 MiB (more than 16 TiB)',
      },
    ]);
  });
});

describe('signed memory fields', () => {
  it.each([
    ['cambricon', FAKE_LIBRARIES.cambricon, { name: 'MLU370-X8', uuid: 'e', memory: -49152 }],
    ['metax', FAKE_LIBRARIES.metax, { name: 'MXC500', uuid: 'GPU-f', memory: -1 }],
  ] as const)('%s: a negative total is an error entry, not a wrapped huge number', async (mfr, library, device) => {
    const { devices, errors } = await detectOn({ devices: { [mfr]: [device] } }, { libraries: { [mfr]: library } });

    expect(devices).toEqual([]);
    expect(errors).toEqual([
      { manufacturer: mfr, code: 'CallFailed', message: expect.stringMatching(/^device 0: .*negative memory size/) },
    ]);
  });
});

describe('counts larger than the devices behind them', () => {
  it('reports each index the library cannot hand out and keeps the real device', async () => {
    const { devices, errors } = await detectOn(
      {
        lib: { nvidia: { count: 3 } },
        devices: { nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h', memory: bytes(143771n) }] },
      },
      { libraries: { nvidia: FAKE_LIBRARIES.nvidia } },
    );

    expect(devices.map((d) => d.product)).toEqual(['NVIDIA H200']);
    expect(errors.map((e) => [e.code, e.message.split(':')[0]])).toEqual([
      ['CallFailed', 'device 1'],
      ['CallFailed', 'device 2'],
    ]);
  });
});
