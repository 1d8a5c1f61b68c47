import { describe, expect, it } from 'vitest';
import { DEVICE_LABEL_SOURCES } from '../../src/k8s/index.js';
import { resolveSettings } from '../../src/contracts/index.js';

describe('resolveSettings: deviceLabelSources', () => {
  it('defaults to our agent first, then every vendor source', () => {
    const resolution = resolveSettings(undefined);
    expect(resolution.ok && resolution.settings.deviceLabelSources).toEqual([
      'Agent',
      'NVIDIAGFD',
      'AMDNodeLabeller',
      'AscendDevicePlugin',
    ]);
    expect(DEVICE_LABEL_SOURCES[0]).toBe('Agent');
  });

  it.each([
    { name: 'our agent alone (derivation off)', input: ['Agent'] },
    { name: 'one vendor source', input: ['Agent', 'NVIDIAGFD'] },
    { name: 'vendor sources in another order', input: ['Agent', 'AscendDevicePlugin', 'NVIDIAGFD'] },
  ])('accepts $name', ({ input }) => {
    const resolution = resolveSettings({ deviceLabelSources: input });
    expect(resolution.ok && resolution.settings.deviceLabelSources).toEqual(input);
  });

  it.each([
    { name: 'a vendor before our agent', input: ['NVIDIAGFD', 'Agent'], message: 'must start with Agent' },
    { name: 'no Agent at all', input: ['NVIDIAGFD'], message: 'must start with Agent' },
    { name: 'a repeated source', input: ['Agent', 'NVIDIAGFD', 'NVIDIAGFD'], message: 'each source at most once' },
    { name: 'an empty list', input: [], message: 'spec.deviceLabelSources' },
    { name: 'an unknown source', input: ['Agent', 'IntelGPUPlugin'], message: /spec\.deviceLabelSources(\.1|\[1\])/ },
  ])('refuses $name, naming the field', ({ input, message }) => {
    const resolution = resolveSettings({ deviceLabelSources: input });
    expect(resolution.ok).toBe(false);
    expect(!resolution.ok && resolution.message).toMatch(message);
    expect(!resolution.ok && resolution.message).toContain('spec.deviceLabelSources');
  });
});
