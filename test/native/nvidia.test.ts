import { describe, expect, it } from 'vitest';

import { detectOn, FAKE_LIBRARIES, fleet, MiB, type FakeFields } from '../../harness/native/fake-machine.js';

const H100_MIB = 81559n;
const H200_MIB = 143771n;

function h100(i: number): FakeFields {
  return {
    name: 'NVIDIA H100 80GB HBM3',
    uuid: `GPU-8e4f00c1-0000-4000-8000-00000000000${i}`,
    memory: H100_MIB * MiB,
    cores: 132,
    cc: '9.0',
    bus: `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase()}:00.0`,
    numa: i < 4 ? 0 : 1,
  };
}

const hgx = { lib: { nvidia: { driver: '570.124.06', runtime: 12080 } }, devices: { nvidia: fleet(8, h100) } };
const nvidiaOnly = { libraries: { nvidia: FAKE_LIBRARIES.nvidia } };

describe('NVIDIA (NVML)', () => {
  it('reports 8× H100 80GB HBM3 with memory in MiB and the NVML facts', async () => {
    const { devices, errors } = await detectOn(hgx, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(8);
    expect(devices.map((d) => d.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(devices[0]).toEqual({
      manufacturer: 'nvidia',
      index: 0,
      uuid: 'GPU-8e4f00c1-0000-4000-8000-000000000000',
      product: 'NVIDIA H100 80GB HBM3',
      memoryMiB: 81559,
      cores: 132,
      computeCapability: '9.0',
      family: 'Hopper',
      pciBusId: '0000:18:00.0',
      numaNode: 0,
      driverVersion: '570.124.06',
      runtimeVersion: '12.8',
    });
    expect(devices[7]).toMatchObject({ pciBusId: '0000:88:00.0', numaNode: 1 });
  });

  it('reports an H200 with 143771 MiB, flooring bytes that are not a whole MiB', async () => {
    const h200 = { name: 'NVIDIA H200', uuid: 'GPU-h200', memory: H200_MIB * MiB + 524287n, cc: '9.0' };
    const { devices, errors } = await detectOn({ devices: { nvidia: [h200] } }, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices).toEqual([
      expect.objectContaining({ product: 'NVIDIA H200', memoryMiB: 143771, cores: 0, family: 'Hopper' }),
    ]);
    expect(devices[0]).not.toHaveProperty('pciBusId');
    expect(devices[0]).not.toHaveProperty('driverVersion');
  });

  it('calls the versioned symbols when the library exports them', async () => {
    const { trace } = await detectOn(hgx, nvidiaOnly);

    expect(trace).toEqual(
      expect.arrayContaining([
        'nvmlInit_v2',
        'nvmlDeviceGetCount_v2',
        'nvmlDeviceGetHandleByIndex_v2',
        'nvmlDeviceGetMemoryInfo_v2',
        'nvmlDeviceGetPciInfo_v3',
        'nvmlSystemGetCudaDriverVersion_v2',
        'nvmlShutdown',
      ]),
    );
    expect(trace).not.toContain('nvmlInit');
    expect(trace).not.toContain('nvmlDeviceGetMemoryInfo');
    expect(trace.filter((s) => s === 'nvmlInit_v2')).toHaveLength(1);
  });

  it('falls back to the unversioned symbols of an old driver', async () => {
    const { devices, errors, trace } = await detectOn(hgx, { libraries: { nvidia: FAKE_LIBRARIES.nvidiaLegacy } });

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(8);
    expect(devices[3]).toMatchObject({ memoryMiB: 81559, pciBusId: '0000:48:00.0', runtimeVersion: '12.8' });
    expect(trace).toEqual(
      expect.arrayContaining(['nvmlInit', 'nvmlDeviceGetCount', 'nvmlDeviceGetMemoryInfo', 'nvmlDeviceGetPciInfo']),
    );
    expect(trace.some((symbol) => symbol.endsWith('_v2') || symbol.endsWith('_v3'))).toBe(false);
  });

  it('maps NVML_ERROR_LIB_RM_VERSION_MISMATCH (18) at init to DriverMismatch', async () => {
    const machine = { lib: { nvidia: { init: 18 } }, devices: hgx.devices };
    const { devices, errors, trace } = await detectOn(machine, nvidiaOnly);

    expect(devices).toEqual([]);
    expect(errors).toEqual([
      { manufacturer: 'nvidia', code: 'DriverMismatch', message: expect.stringContaining('version mismatch') },
    ]);
    expect(trace).not.toContain('nvmlShutdown');
  });

  it('maps other init failures (9, driver not loaded) to InitFailed', async () => {
    const { errors } = await detectOn({ lib: { nvidia: { init: 9 } } }, nvidiaOnly);

    expect(errors).toEqual([
      { manufacturer: 'nvidia', code: 'InitFailed', message: expect.stringContaining('(code 9)') },
    ]);
  });

  it('reports SymbolNotFound when a required symbol is missing, without calling init', async () => {
    const { devices, errors, trace } = await detectOn(hgx, { libraries: { nvidia: FAKE_LIBRARIES.nvidiaNoName } });

    expect(devices).toEqual([]);
    expect(errors).toEqual([
      {
        manufacturer: 'nvidia',
        code: 'SymbolNotFound',
        message: expect.stringContaining('nvmlDeviceGetName'),
      },
    ]);
    expect(trace).toEqual([]);
  });

  it('reports the MIG mode per card', async () => {
    const devices = fleet(4, (i) => ({ ...h100(i), ...(i < 2 ? { mig: 1 } : { mig: 0 }) }));
    devices.push({ ...h100(4) });
    const result = await detectOn({ devices: { nvidia: devices } }, nvidiaOnly);

    expect(result.devices.map((d) => d.partitioning)).toEqual([
      { mode: 'mig', enabled: true },
      { mode: 'mig', enabled: true },
      { mode: 'mig', enabled: false },
      { mode: 'mig', enabled: false },
      undefined,
    ]);
  });

  it('reports the current, not the pending, MIG mode', async () => {
    const card = { ...h100(0), mig: 0, migPending: 1 };
    const { devices } = await detectOn({ devices: { nvidia: [card] } }, nvidiaOnly);

    expect(devices[0]?.partitioning).toEqual({ mode: 'mig', enabled: false });
  });

  it('turns one failing device into an error entry and keeps the others', async () => {
    const cards = fleet(3, h100).map((card, i) => (i === 1 ? { ...card, fail: 'name' } : card));
    const { devices, errors } = await detectOn({ devices: { nvidia: cards } }, nvidiaOnly);

    expect(devices.map((d) => d.index)).toEqual([0, 2]);
    expect(errors).toEqual([
      { manufacturer: 'nvidia', code: 'CallFailed', message: expect.stringMatching(/^device 1: DeviceGetName/) },
    ]);
  });

  it("keeps Iluvatar's nvml* exports apart from NVIDIA's in one process", async () => {
    const machine = {
      devices: {
        nvidia: [h100(0)],
        iluvatar: [{ name: 'Iluvatar BI-V100', uuid: 'GPU-ix-0', memory: 32768n * MiB, cc: '7.1' }],
      },
    };
    const { devices, errors } = await detectOn(machine, {
      libraries: { nvidia: FAKE_LIBRARIES.nvidia, iluvatar: FAKE_LIBRARIES.iluvatar },
    });

    expect(errors).toEqual([]);
    expect(devices.map((d) => [d.manufacturer, d.product, d.memoryMiB])).toEqual([
      ['iluvatar', 'Iluvatar BI-V100', 32768],
      ['nvidia', 'NVIDIA H100 80GB HBM3', 81559],
    ]);
    expect(devices[0]).not.toHaveProperty('family');
  });
});

describe('NVIDIA GPU fabric info (the NVLink clique)', () => {
  // As NVML hands them over: 16 raw bytes, here written as 32 hex digits.
  const CLUSTER_BYTES = '7F1D3C520B7E4A6E9C1D6A2B8E4F0C11';
  const CLUSTER_UUID = '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11';
  const machine = (fabric: (i: number) => FakeFields, lib: FakeFields = {}) => ({
    lib: { nvidia: lib },
    devices: { nvidia: fleet(4, (i) => ({ ...h100(i), ...fabric(i) })) },
  });

  it('reports the cluster UUID in its 8-4-4-4-12 form and the clique of a completed registration', async () => {
    const cards = machine((i) => ({
      fabricUuid: CLUSTER_BYTES,
      fabricClique: i < 3 ? 7 : 4294967295,
      fabricHealth: 1,
    }));
    const { devices, errors, trace } = await detectOn(cards, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices.map((d) => d.fabric)).toEqual([
      { clusterUuid: CLUSTER_UUID, cliqueId: 7 },
      { clusterUuid: CLUSTER_UUID, cliqueId: 7 },
      { clusterUuid: CLUSTER_UUID, cliqueId: 7 },
      // The clique id is unsigned: the largest one is no negative number.
      { clusterUuid: CLUSTER_UUID, cliqueId: 4294967295 },
    ]);
    expect(trace.filter((s) => s === 'nvmlDeviceGetGpuFabricInfoV')).toHaveLength(4);
    expect(trace).not.toContain('nvmlDeviceGetGpuFabricInfo');
  });

  it('reports no fabric while the registration is not started or in progress, or ended in an error', async () => {
    const states = [
      { fabricState: 1 }, // NVML_GPU_FABRIC_STATE_NOT_STARTED
      { fabricState: 2 }, // NVML_GPU_FABRIC_STATE_IN_PROGRESS
      { fabricState: 3, fabricStatus: 999 }, // completed, with an error status
      { fabricState: 0 }, // NVML_GPU_FABRIC_STATE_NOT_SUPPORTED
    ];
    const cards = machine((i) => ({ fabricUuid: CLUSTER_BYTES, fabricClique: 7, ...states[i] }));
    const { devices, errors } = await detectOn(cards, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(4);
    for (const device of devices) expect(device, `card ${device.index}`).not.toHaveProperty('fabric');
  });

  it('reports the card without a fabric, and no error, when the call is not supported or fails', async () => {
    const cards = machine((i) => (i === 0 ? { fail: 'fabric', fabricUuid: CLUSTER_BYTES } : {}));
    const { devices, errors, trace } = await detectOn(cards, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(4);
    for (const device of devices) expect(device).not.toHaveProperty('fabric');
    expect(trace.filter((s) => s === 'nvmlDeviceGetGpuFabricInfoV')).toHaveLength(4);
  });

  it('falls back to nvmlDeviceGetGpuFabricInfo (v1) where the V call is not exported', async () => {
    const cards = machine(() => ({ fabricUuid: CLUSTER_BYTES, fabricClique: 2 }));
    const { devices, errors, trace } = await detectOn(cards, { libraries: { nvidia: FAKE_LIBRARIES.nvidiaLegacy } });

    expect(errors).toEqual([]);
    expect(devices.map((d) => d.fabric)).toEqual(fleet(4, () => ({ clusterUuid: CLUSTER_UUID, cliqueId: 2 })));
    expect(trace.filter((s) => s === 'nvmlDeviceGetGpuFabricInfo')).toHaveLength(4);
    // The state is read from the v1 struct too.
    const pending = machine(() => ({ fabricUuid: CLUSTER_BYTES, fabricClique: 2, fabricState: 2 }));
    const waiting = await detectOn(pending, { libraries: { nvidia: FAKE_LIBRARIES.nvidiaLegacy } });
    expect(waiting.devices.map((d) => d.fabric)).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('falls back to v1 where the V call refuses the v2 version word', async () => {
    const cards = machine(() => ({ fabricUuid: CLUSTER_BYTES, fabricClique: 5 }), { fabricV: 'refuse' });
    const { devices, errors, trace } = await detectOn(cards, nvidiaOnly);

    expect(errors).toEqual([]);
    expect(devices[0]?.fabric).toEqual({ clusterUuid: CLUSTER_UUID, cliqueId: 5 });
    expect(trace).toEqual(expect.arrayContaining(['nvmlDeviceGetGpuFabricInfoV', 'nvmlDeviceGetGpuFabricInfo']));
  });

  it('reports no fabric, and no error, from a driver that exports neither call', async () => {
    const cards = machine(() => ({ fabricUuid: CLUSTER_BYTES, fabricClique: 5 }));
    const { devices, errors, trace } = await detectOn(cards, { libraries: { nvidia: FAKE_LIBRARIES.nvidiaNoFabric } });

    expect(errors).toEqual([]);
    expect(devices).toHaveLength(4);
    for (const device of devices) expect(device).not.toHaveProperty('fabric');
    expect(trace.some((s) => s.includes('Fabric'))).toBe(false);
    // The same machine through the full fake does report it: the fields were there to read.
    const full = await detectOn(cards, nvidiaOnly);
    expect(full.devices[0]?.fabric).toEqual({ clusterUuid: CLUSTER_UUID, cliqueId: 5 });
  });
});
