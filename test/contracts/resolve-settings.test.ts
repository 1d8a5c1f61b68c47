import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/contracts/index.js';

describe('resolveSettings', () => {
  it.each([
    {
      name: 'in a selector',
      spec: '{"localQueueNamespaces":{"matchLabels":{"__proto__":"x"}}}',
      path: 'spec.localQueueNamespaces.matchLabels.__proto__',
    },
    { name: 'at the top', spec: '{"__proto__":{"mixedOnNode":false}}', path: 'spec.__proto__' },
    {
      name: 'in a list',
      spec: '{"manufacturers":[{"name":"nvidia"},{"__proto__":"x","name":"amd"}]}',
      path: 'spec.manufacturers[1].__proto__',
    },
  ])('names a __proto__ key $name instead of parsing without it', ({ spec, path }) => {
    expect(resolveSettings(JSON.parse(spec))).toEqual({
      ok: false,
      message: `${path}: "__proto__" is not a valid key`,
    });
  });

  it('names array items by index', () => {
    const resolution = resolveSettings({ manufacturers: [{ name: 'nvidia' }, { name: 'acme' }] });

    expect(resolution).toEqual({
      ok: false,
      message: expect.stringMatching(/^spec\.manufacturers\[1\]\.name: Invalid option/),
    });
  });
});
