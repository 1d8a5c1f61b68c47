import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listParsed, type KubeApi } from '../../src/api-client/index.js';
import { RESOURCE_API, resourcePath } from '../../src/dra/index.js';

describe('the resource.k8s.io paths', () => {
  it('spells collections, namespaced objects and other versions one way, each segment encoded', () => {
    expect(RESOURCE_API).toBe('/apis/resource.k8s.io/v1');
    expect(resourcePath('resourceslices')).toBe('/apis/resource.k8s.io/v1/resourceslices');
    expect(resourcePath('resourceslices', { name: 'a b' })).toBe('/apis/resource.k8s.io/v1/resourceslices/a%20b');
    expect(resourcePath('resourceclaims', { namespace: 'team-a', name: 'train' })).toBe(
      '/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/train',
    );
    expect(resourcePath('devicetaintrules', { groupVersion: 'resource.k8s.io/v1beta2' })).toBe(
      '/apis/resource.k8s.io/v1beta2/devicetaintrules',
    );
  });
});

describe('listParsed', () => {
  it('keeps the items the schema accepts, passed through keep, and skips the others', async () => {
    const seen: string[] = [];
    const api = {
      listEach: async (path: string, onItem: (item: unknown) => void) => {
        seen.push(path);
        for (const item of [{ n: 1 }, { n: 'x' }, { n: 3 }]) onItem(item);
        return '7';
      },
    } as unknown as KubeApi;
    const schema = z.object({ n: z.number() });
    expect(await listParsed(api, '/p', schema)).toEqual([{ n: 1 }, { n: 3 }]);
    expect(await listParsed(api, '/q', schema, (item) => item.n * 2)).toEqual([2, 6]);
    expect(seen).toEqual(['/p', '/q']);
  });
});
