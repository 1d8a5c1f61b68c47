// Runs against the real driver only on a host that has one; elsewhere it is reported as
// skipped, with the reason in its title.
import { existsSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { detect } from '../../native/index.js';

const hasNvidiaDriver = existsSync('/dev/nvidiactl');

describe.runIf(hasNvidiaDriver)('real NVIDIA driver (runs only where /dev/nvidiactl exists)', () => {
  it('enumerates the GPUs through the host libnvidia-ml.so.1', async () => {
    const override = process.env.GPUSTACK_NVIDIA_LIBRARY;
    delete process.env.GPUSTACK_NVIDIA_LIBRARY;
    try {
      const { devices, errors } = await detect({ manufacturers: ['nvidia'] });

      expect(errors).toEqual([]);
      expect(devices.length).toBeGreaterThan(0);
      for (const device of devices) {
        expect(device.uuid).toMatch(/^GPU-[0-9a-f-]{36}$/);
        expect(device.memoryMiB).toBeGreaterThan(1024);
        expect(device.memoryMiB).toBeLessThan(16 * 1024 * 1024);
        expect(device.pciBusId).toMatch(/^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.0$/);
        expect(device.computeCapability).toMatch(/^\d+\.\d+$/);
        expect(device.driverVersion).toMatch(/^\d+\.\d+/);
      }
    } finally {
      if (override !== undefined) process.env.GPUSTACK_NVIDIA_LIBRARY = override;
    }
  });
});
