import { describe, expect, it } from 'vitest';
import { MANUFACTURER_NAMES, isDnsSubdomain, isLabelKey, isLabelValue } from '../../src/k8s/index.js';
import {
  DeviceClassSchema,
  buildDeviceClasses,
  deviceClassExpression,
  modelClassKey,
  sharedExtendedResource,
} from '../../src/dra/index.js';
import { MANUFACTURERS } from '../../src/contracts/index.js';

const ALL = new Set(MANUFACTURER_NAMES);

describe('buildDeviceClasses', () => {
  it('gives every manufacturer a whole and a shared class, and each model the same pair', () => {
    const classes = buildDeviceClasses(ALL, ['nvidia-h200', 'ascend-910b2']);
    const names = classes.map((c) => c.metadata.name);
    expect(names).toHaveLength(2 * 9 + 2 * 2);
    for (const mfr of MANUFACTURER_NAMES)
      expect(names).toEqual(expect.arrayContaining([`gpustack-${mfr}`, `gpustack-${mfr}-shared`]));
    expect(names).toEqual(
      expect.arrayContaining(['gpustack-nvidia-h200', 'gpustack-nvidia-h200-shared', 'gpustack-ascend-910b2']),
    );
    expect(names).toEqual([...names].sort());
    for (const deviceClass of classes) {
      expect(DeviceClassSchema.parse(deviceClass)).toEqual(deviceClass);
      for (const [key, value] of Object.entries(deviceClass.metadata.labels)) {
        expect(isLabelKey(key), key).toBe(true);
        expect(isLabelValue(value), value).toBe(true);
      }
    }
  });

  it('selects by driver and mode, and by productKey for a model; attributes are qualified by the driver domain', () => {
    expect(deviceClassExpression({ manufacturer: 'nvidia' }, 'whole')).toBe(
      'device.driver == "nvidia.gpustack.ai" && device.attributes["nvidia.gpustack.ai"].mode == "whole"',
    );
    expect(deviceClassExpression({ manufacturer: 'ascend', productKey: 'ascend-910b2' }, 'shared')).toBe(
      'device.driver == "ascend.gpustack.ai" && device.attributes["ascend.gpustack.ai"].productKey == "ascend-910b2"' +
        ' && device.attributes["ascend.gpustack.ai"].mode == "shared"',
    );
  });

  it("maps <base> on the manufacturer's whole class and <base>.shared on its shared class, nothing on a model's", () => {
    const classes = buildDeviceClasses(ALL, ['nvidia-h200']);
    const mapped = classes.filter((c) => c.spec.extendedResourceName !== undefined);
    expect(mapped.map((c) => [c.metadata.name, c.spec.extendedResourceName])).toEqual(
      MANUFACTURER_NAMES.flatMap((m) => [
        [`gpustack-${m}`, MANUFACTURERS[m].deviceResource],
        [`gpustack-${m}-shared`, sharedExtendedResource(m)],
      ]),
    );
    expect(sharedExtendedResource('ascend')).toBe('huawei.com/npu.shared');
    expect(classes.find((c) => c.metadata.name === 'gpustack-nvidia')?.spec.extendedResourceName).toBe(
      'nvidia.com/gpu',
    );
    expect(classes.find((c) => c.metadata.name === 'gpustack-nvidia-h200')?.spec.extendedResourceName).toBeUndefined();
    // No two classes serve one extended resource.
    expect(new Set(mapped.map((c) => c.spec.extendedResourceName)).size).toBe(mapped.length);
  });

  it("maps the settings' device resource on the whole class when one is given", () => {
    const classes = buildDeviceClasses(new Set(['nvidia'] as const), [], (mfr) => `${mfr}.example.com/card`);
    expect(classes.map((c) => [c.metadata.name, c.spec.extendedResourceName])).toEqual([
      ['gpustack-nvidia', 'nvidia.example.com/card'],
      ['gpustack-nvidia-shared', 'nvidia.com/gpu.shared'],
    ]);
  });

  it('emits only the enabled manufacturers, and is deterministic whatever the order of the keys', () => {
    const a = buildDeviceClasses(new Set(['amd'] as const), ['amd-mi300x', 'amd-mi250', 'amd-mi300x']);
    const b = buildDeviceClasses(new Set(['amd'] as const), ['amd-mi250', 'amd-mi300x']);
    expect(a).toEqual(b);
    expect(a.map((c) => c.metadata.name)).toEqual([
      'gpustack-amd',
      'gpustack-amd-mi250',
      'gpustack-amd-mi250-shared',
      'gpustack-amd-mi300x',
      'gpustack-amd-mi300x-shared',
      'gpustack-amd-shared',
    ]);
  });

  it('names classes validly from any aKey a label may carry, and skips what cannot be a class', () => {
    expect(modelClassKey('nvidia-a100_sxm4')).toBe('nvidia-a100-sxm4');
    expect(modelClassKey('NVIDIA-T4')).toBe('nvidia-t4');
    expect(modelClassKey('nvidia-a.b')).toBe('nvidia-a.b');
    const longest = `nvidia-${'x'.repeat(31)}`; // aKey ≤ 38 characters (docs/architecture.md#keys)
    const classes = buildDeviceClasses(new Set(), [
      longest,
      'nvidia-a100_sxm4',
      'nvidia-a100-sxm4',
      'unknownvendor-x',
      'nvidia-.',
    ]);
    const names = classes.map((c) => c.metadata.name);
    expect(names).toEqual([
      'gpustack-nvidia-a100-sxm4',
      'gpustack-nvidia-a100-sxm4-shared',
      `gpustack-${longest}`,
      `gpustack-${longest}-shared`,
    ]);
    for (const name of names) expect(isDnsSubdomain(name), name).toBe(true);
    // The selector keeps the aKey as published: productKey is the label's aKey, not the class name.
    const first = classes.find((c) => c.metadata.name === 'gpustack-nvidia-a100-sxm4');
    expect(first?.spec.selectors[0]?.cel.expression).toContain('.productKey == "nvidia-a100-sxm4"');
  });
});
