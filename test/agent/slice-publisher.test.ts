import { describe, expect, it } from 'vitest';
import { SlicesNotServedError, resourceSlicePublisher } from '../../src/agent/index.js';
import { ApiError } from '../../src/api-client/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import { recordingApi } from './fake-slice-api.js';

const card = (index: number): SliceCard => ({
  manufacturer: 'nvidia',
  index,
  product: 'NVIDIA H200',
  memoryMiB: 143771,
});
const NONE = new Set<string>();

describe('resourceSlicePublisher: requests per cycle', () => {
  it('answers the cards it last verified from memory, and lists and compares again every resyncEvery calls', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n', { resyncEvery: 3 });
    expect((await publisher.publish([card(0)], NONE)).result).toBe('published');
    const afterWrite = api.calls.length;
    // Calls 2 and 3 of the same cards: no request at all.
    expect((await publisher.publish([card(0)], NONE)).result).toBe('unchanged');
    expect((await publisher.publish([card(0)], NONE)).result).toBe('unchanged');
    expect(api.calls.length).toBe(afterWrite);
    // Call 4: listed again (and the Node read for its uid), nothing written.
    expect((await publisher.publish([card(0)], NONE)).result).toBe('unchanged');
    expect(api.calls.slice(afterWrite).map((c) => c[0])).toEqual(['list', 'get']);
    // Other cards: listed and written at once.
    expect((await publisher.publish([card(0), card(1)], NONE)).result).toBe('published');
  });

  it('repairs a slice deleted behind its back at the next resync', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n', { resyncEvery: 2 });
    await publisher.publish([card(0)], NONE);
    await api.remove('/apis/resource.k8s.io/v1/resourceslices/n-nvidia-devices-0');
    expect((await publisher.publish([card(0)], NONE)).result).toBe('unchanged');
    expect(await publisher.publish([card(0)], NONE)).toMatchObject({ result: 'published', written: 2 });
  });

  it('a failed call is not remembered: the next one asks the API again', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n');
    const create = api.create;
    api.create = () => Promise.reject(new Error('connection refused'));
    await expect(publisher.publish([card(0)], NONE)).rejects.toThrow('connection refused');
    api.create = create;
    expect((await publisher.publish([card(0)], NONE)).result).toBe('published');
  });

  it('a 404 for the collection says resource.k8s.io/v1 is not served (DRA off); any other failure is itself', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n');
    const path = '/apis/resource.k8s.io/v1/resourceslices';
    api.listEach = () => Promise.reject(new ApiError(404, 'GET', path, '404 page not found'));
    const notServed = await publisher.publish([card(0)], NONE).catch((error: unknown) => error);
    expect(notServed).toBeInstanceOf(SlicesNotServedError);
    expect((notServed as Error).message).toMatch(/resource.k8s.io\/v1 is not served.*HTTP 404/);
    api.listEach = () => Promise.reject(new ApiError(503, 'GET', path, 'the server is shutting down'));
    const down = await publisher.publish([card(0)], NONE).catch((error: unknown) => error);
    expect(down).toBeInstanceOf(ApiError);
  });
});
