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

describe('resourceSlicePublisher: a name held by someone else (issue 43)', () => {
  const SLICES = '/apis/resource.k8s.io/v1/resourceslices';
  const squatter = (name: string, nodeName: string, driver = 'nvidia.gpustack.ai') => ({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name },
    spec: { driver, nodeName, pool: { name: nodeName, generation: 1, resourceSliceCount: 1 }, devices: [] },
  });
  const names = async (api: ReturnType<typeof recordingApi>, node: string): Promise<string[]> => {
    const out: string[] = [];
    await api.listEach(`${SLICES}?fieldSelector=spec.nodeName%3D${node}`, (item) =>
      out.push((item as { metadata: { name: string } }).metadata.name),
    );
    return out.sort();
  };

  it("publishes under a generated name when another node's slice holds the name, reports it, and keeps that name", async () => {
    const api = recordingApi();
    // Node a took node b's fixed name before the node restriction was in force.
    await api.create(SLICES, squatter('b-nvidia-devices-0', 'a'));
    const publisher = resourceSlicePublisher(api, 'b', { resyncEvery: 1 });
    const first = await publisher.publish([card(0)], NONE);
    expect(first).toMatchObject({ result: 'published', written: 2 });
    expect(first.problems).toEqual([
      expect.stringMatching(
        /^ResourceSlice b-nvidia-devices-0 is held by another \(spec.nodeName "a", driver "nvidia.gpustack.ai"\), which this agent may not delete: published as b-nvidia-devices-0-g\d+; deleting it frees the name$/,
      ),
    ]);
    const published = await names(api, 'b');
    expect(published).toEqual(['b-nvidia-counters-0', expect.stringMatching(/^b-nvidia-devices-0-g\d+$/)]);
    // The next calls find it under its generated name: nothing written, nothing created again.
    expect(await publisher.publish([card(0)], NONE)).toMatchObject({ result: 'unchanged', written: 0 });
    // Changed cards replace it in place, under the name it has.
    expect(await publisher.publish([card(0), card(1)], NONE)).toMatchObject({ result: 'published', deleted: 0 });
    expect(await names(api, 'b')).toEqual(published);
    // The squatter is left alone: it is not this agent's to delete.
    expect(await names(api, 'a')).toEqual(['b-nvidia-devices-0']);
  });

  it('a 409 for a slice of its own node (another agent of the node wrote it first) is retried, not given up', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n');
    const create = api.create.bind(api);
    let raced = false;
    // The other agent creates the same slice between this one's list and its create.
    api.create = async (path, body) => {
      if (!raced) {
        raced = true;
        await create(path, body);
      }
      return create(path, body);
    };
    const outcome = await publisher.publish([card(0)], NONE);
    expect(outcome.problems).toEqual([]);
    expect(await names(api, 'n')).toEqual(['n-nvidia-counters-0', 'n-nvidia-devices-0']);
  });

  it('of two slices for one wanted name (two agents fell back at once), one stays', async () => {
    const api = recordingApi();
    const publisher = resourceSlicePublisher(api, 'n');
    await publisher.publish([card(0)], NONE);
    const twin = (await new Promise<Record<string, unknown>>((resolve) => {
      void api.listEach(`${SLICES}?fieldSelector=metadata.name%3Dn-nvidia-devices-0`, (item) =>
        resolve(item as Record<string, unknown>),
      );
    })) as { metadata: Record<string, unknown> };
    await api.create(SLICES, { ...twin, metadata: { generateName: 'n-nvidia-devices-0-' } });
    expect(await names(api, 'n')).toHaveLength(3);
    await resourceSlicePublisher(api, 'n').publish([card(0)], NONE);
    expect(await names(api, 'n')).toHaveLength(2);
  });
});
