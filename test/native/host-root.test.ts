// detect({ hostRoot }): the vendor libraries of a host mounted at some folder, found by full
// path in their usual install folders under it, as the agent's DaemonSet runs it (/host).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import type { ManufacturerName } from '../../native/index.js';
import { detectOn, FAKE_LIBRARIES, MiB, type FakeFields } from '../../harness/native/fake-machine.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-host-root-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let hosts = 0;

/** A fresh host root holding `files`: host path → file to copy there (or bytes to write). */
function fakeHost(files: Readonly<Record<string, string | Buffer>> = {}): string {
  const root = path.join(scratch, `host-${hosts++}`);
  mkdirSync(root);
  for (const [hostPath, content] of Object.entries(files)) {
    const target = path.join(root, hostPath);
    mkdirSync(path.dirname(target), { recursive: true });
    if (typeof content === 'string') copyFileSync(content, target);
    else writeFileSync(target, content);
  }
  return root;
}

const h200: FakeFields = { name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB };

interface Placement {
  readonly title: string;
  readonly manufacturer: ManufacturerName;
  readonly library: string;
  readonly hostPath: string;
  readonly device: FakeFields;
}

const PLACEMENTS: readonly Placement[] = [
  {
    title: 'NVML in the Debian multiarch folder',
    manufacturer: 'nvidia',
    library: FAKE_LIBRARIES.nvidia,
    hostPath: '/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1',
    device: h200,
  },
  {
    title: "NVML in the GPU Operator's driver container root",
    manufacturer: 'nvidia',
    library: FAKE_LIBRARIES.nvidia,
    hostPath: '/run/nvidia/driver/usr/lib64/libnvidia-ml.so.1',
    device: h200,
  },
  {
    title: 'AMD SMI under /opt/rocm',
    manufacturer: 'amd',
    library: FAKE_LIBRARIES.amd,
    hostPath: '/opt/rocm/lib/libamd_smi.so',
    device: { name: 'AMD Instinct MI300X OAM', uuid: 'amd-0', memory: 196592n * MiB },
  },
  {
    title: 'ROCm SMI under /opt/rocm',
    manufacturer: 'amd',
    library: FAKE_LIBRARIES.amdRocmSmi,
    hostPath: '/opt/rocm/lib/librocm_smi64.so',
    device: { name: 'AMD Instinct MI210', memory: 65520n * MiB },
  },
  {
    title: "DCMI in the Ascend driver's folder",
    manufacturer: 'ascend',
    library: FAKE_LIBRARIES.ascend,
    hostPath: '/usr/local/Ascend/driver/lib64/driver/libdcmi.so',
    device: { name: 'Ascend910B2', cores: 24, memory: 65536n },
  },
  {
    title: 'CNDev under /usr/local/neuware',
    manufacturer: 'cambricon',
    library: FAKE_LIBRARIES.cambricon,
    hostPath: '/usr/local/neuware/lib64/libcndev.so',
    device: { name: 'MLU370-X8', uuid: 'mlu-0', memory: 49152n },
  },
  {
    title: "Hygon's ROCm SMI under /opt/hyhal",
    manufacturer: 'hygon',
    library: FAKE_LIBRARIES.hygon,
    hostPath: '/opt/hyhal/lib/librocm_smi64.so',
    device: { name: 'K100_AI', memory: 65520n * MiB },
  },
  {
    title: 'IXML under /usr/local/corex',
    manufacturer: 'iluvatar',
    library: FAKE_LIBRARIES.iluvatar,
    hostPath: '/usr/local/corex/lib64/libixml.so',
    device: { name: 'Iluvatar BI-V150', uuid: 'GPU-ix-0', memory: 32768n * MiB },
  },
  {
    title: 'MXSML under /opt/mxdriver',
    manufacturer: 'metax',
    library: FAKE_LIBRARIES.metax,
    hostPath: '/opt/mxdriver/lib/libmxsml.so',
    device: { name: 'MXC500', uuid: 'GPU-mx-0', memory: 67108864n },
  },
  {
    title: 'MTML in a system library folder',
    manufacturer: 'mthreads',
    library: FAKE_LIBRARIES.mthreads,
    hostPath: '/usr/lib64/libmtml.so',
    device: { name: 'MTT S4000', uuid: 'mt-0', memory: 49152n * MiB },
  },
  {
    title: 'HGML under /usr/local/PPU_SDK',
    manufacturer: 'thead',
    library: FAKE_LIBRARIES.thead,
    hostPath: '/usr/local/PPU_SDK/lib64/libhgml.so',
    device: { name: 'PPU-ZW810E', uuid: 'GPU-ppu-0', memory: 98304n * MiB },
  },
];

describe('detect() with a host root', () => {
  it.each(PLACEMENTS)('finds $title, by full path under the root', async (placement) => {
    const hostRoot = fakeHost({ [placement.hostPath]: placement.library });

    const { devices, errors } = await detectOn(
      { devices: { [placement.manufacturer]: [placement.device] } },
      { libraries: {}, manufacturers: [placement.manufacturer], hostRoot },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.manufacturer, d.product])).toEqual([[placement.manufacturer, placement.device.name]]);
  });

  it("the fake NVML placed as a driver, its machine in `fake-devices` beside it, answers a process whose environment nobody set (the image e2e's DaemonSet Pod)", async () => {
    const lib64 = '/usr/local/nvidia/lib64';
    const hostRoot = fakeHost({
      [`${lib64}/libnvidia-ml.so.1`]: FAKE_LIBRARIES.nvidia,
      [`${lib64}/fake-devices`]: Buffer.from(
        `dev:nvidia\tname=NVIDIA H200\tuuid=GPU-beside-0\tmemory=${143771n * MiB}\n`,
      ),
    });

    const { devices, errors } = await detectOn(
      { devices: { nvidia: [{ name: 'NVIDIA L4', uuid: 'GPU-env-0', memory: 23034n * MiB }] } },
      { libraries: {}, manufacturers: ['nvidia'], hostRoot, env: { GPUSTACK_FAKE_DEVICES: '' } },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.product, d.uuid])).toEqual([['NVIDIA H200', 'GPU-beside-0']]);
  });

  it('reports LibraryNotFound naming the folders under the root when the host has no library', async () => {
    const hostRoot = fakeHost();

    const { errors } = await detectOn({}, { libraries: {}, manufacturers: ['nvidia'], hostRoot });

    expect(errors).toEqual([
      {
        manufacturer: 'nvidia',
        code: 'LibraryNotFound',
        message: expect.stringMatching(
          new RegExp(`^${hostRoot}/usr/lib64/libnvidia-ml\\.so\\.1: cannot open shared object file: .*` + hostRoot),
        ),
      },
    ]);
    // Only full paths under the root: the loader's own search would look in this process's filesystem.
    expect(errors[0]?.message).not.toMatch(/(^|[ :])libnvidia-ml\.so\.1/);
  });

  it("follows an absolute symlink on the host to the host's file, not to this process's", async () => {
    const hostRoot = fakeHost({ '/opt/nvidia/lib/libnvidia-ml.so.570.124.06': FAKE_LIBRARIES.nvidia });
    mkdirSync(path.join(hostRoot, 'usr', 'lib64'), { recursive: true });
    symlinkSync('/opt/nvidia/lib/libnvidia-ml.so.570.124.06', path.join(hostRoot, 'usr/lib64/libnvidia-ml.so.1'));

    const { devices, errors } = await detectOn(
      { devices: { nvidia: [h200] } },
      { libraries: {}, manufacturers: ['nvidia'], hostRoot },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => d.product)).toEqual(['NVIDIA H200']);
  });

  it('never lets a relative symlink climb out of the root', async () => {
    const hostRoot = fakeHost();
    mkdirSync(path.join(hostRoot, 'usr', 'lib64'), { recursive: true });
    // Followed by the kernel from <root>/usr/lib64, this reaches the real fake library outside the root.
    symlinkSync(
      `${'../'.repeat(32)}${FAKE_LIBRARIES.nvidia.slice(1)}`,
      path.join(hostRoot, 'usr/lib64/libnvidia-ml.so.1'),
    );

    const { devices, errors } = await detectOn(
      { devices: { nvidia: [h200] } },
      { libraries: {}, manufacturers: ['nvidia'], hostRoot },
    );

    expect(devices).toEqual([]);
    expect(errors.map((e) => e.code)).toEqual(['LibraryNotFound']);
    expect(errors[0]?.message).toContain(`${hostRoot}${FAKE_LIBRARIES.nvidia}: cannot open shared object file`);
  });

  it("takes GPUSTACK_<MFR>_LIBRARY as a path in this process's filesystem, not under the root", async () => {
    const { devices, errors } = await detectOn(
      { devices: { nvidia: [h200] } },
      { libraries: { nvidia: FAKE_LIBRARIES.nvidia }, hostRoot: fakeHost() },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => d.product)).toEqual(['NVIDIA H200']);
  });

  it('takes install-root variables (NEUWARE_HOME, ROCM_PATH) as host folders, under the root', async () => {
    const hostRoot = fakeHost({
      '/vendor/neuware/lib64/libcndev.so': FAKE_LIBRARIES.cambricon,
      '/vendor/rocm/lib/libamd_smi.so': FAKE_LIBRARIES.amd,
      '/vendor/rocm/.info/version': Buffer.from('6.4.1-120\n'),
    });

    const { devices, errors } = await detectOn(
      {
        devices: {
          amd: [{ name: 'AMD Instinct MI300X OAM', uuid: 'amd-0', memory: 196592n * MiB }],
          cambricon: [{ name: 'MLU370-X8', uuid: 'mlu-0', memory: 49152n }],
        },
      },
      {
        libraries: {},
        manufacturers: ['amd', 'cambricon'],
        hostRoot,
        env: { NEUWARE_HOME: '/vendor/neuware', ROCM_PATH: '/vendor/rocm' },
      },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.product, d.runtimeVersion])).toEqual([
      ['AMD Instinct MI300X OAM', '6.4'],
      ['MLU370-X8', undefined],
    ]);
  });

  it('skips a damaged copy in one usual folder for a sound one in the next', async () => {
    const hostRoot = fakeHost({
      '/usr/lib64/libnvidia-ml.so.1': readFileSync(FAKE_LIBRARIES.nvidia).subarray(0, 1000),
      '/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1': FAKE_LIBRARIES.nvidia,
    });

    const { devices, errors } = await detectOn(
      { devices: { nvidia: [h200] } },
      { libraries: {}, manufacturers: ['nvidia'], hostRoot },
    );

    expect(errors).toEqual([]);
    expect(devices.map((d) => d.product)).toEqual(['NVIDIA H200']);
  });

  it('reports InvalidLibrary naming the file when a damaged copy is all the host has', async () => {
    const hostRoot = fakeHost({
      '/usr/lib64/libnvidia-ml.so.1': readFileSync(FAKE_LIBRARIES.nvidia).subarray(0, 1000),
    });

    const { errors } = await detectOn({}, { libraries: {}, manufacturers: ['nvidia'], hostRoot });

    expect(errors).toEqual([
      {
        manufacturer: 'nvidia',
        code: 'InvalidLibrary',
        message: expect.stringMatching(
          new RegExp(`^${hostRoot}/usr/lib64/libnvidia-ml\\.so\\.1: segment 0 .* is cut off`),
        ),
      },
    ]);
  });
});
