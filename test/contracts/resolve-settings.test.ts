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

  it('looks for __proto__ keys in a spec 100,000 levels deep in one linear walk', () => {
    // Read outside the server too (the admission checker, render), where no body bound applies.
    const deep = JSON.parse(`{"x":${'['.repeat(100_000)}{"__proto__":1}${']'.repeat(100_000)}}`) as unknown;

    const resolution = resolveSettings(deep);

    expect(resolution.ok).toBe(false);
    // spec.x, 100,000 × [0], .__proto__: 300,016 characters, cut at 1,024.
    expect(!resolution.ok && resolution.message).toMatch(
      /^spec\.x(\[0\]){300}.*… \(300016 characters\): "__proto__" is not a valid key$/,
    );
  });
});
