import { describe, expect, it } from 'vitest';
import { claimAllocationOnNode, parseCardDeviceName } from '../../src/dra/index.js';

const ref = { namespace: 'ns', name: 'c', uid: 'u1' };
const claim = (status: object | undefined, uid = 'u1') => ({
  metadata: { name: 'c', namespace: 'ns', uid },
  ...(status ? { status } : {}),
});
const results = (...r: object[]) => ({ allocation: { devices: { results: r } } });
const result = (device: string, extra: object = {}) => ({
  request: 'r',
  driver: 'nvidia.gpustack.ai',
  pool: 'node-a',
  device,
  ...extra,
});

describe('claimAllocationOnNode', () => {
  const on = (raw: unknown) => claimAllocationOnNode(raw, ref, 'nvidia.gpustack.ai', 'node-a');

  it("takes our driver's devices in this node's pool, with consumed capacity as numbers", () => {
    const raw = claim(
      results(
        result('card-0'),
        result('card-1-shared', { shareID: 's', consumedCapacity: { memory: '1Gi', cores: '10', units: 160000 } }),
        { request: 'nic', driver: 'nic.example.com', pool: 'node-a', device: 'eth0' },
      ),
    );
    expect(on(raw)).toEqual({
      ok: true,
      devices: [
        { request: 'r', pool: 'node-a', device: 'card-0', index: 0, shared: false },
        {
          request: 'r',
          pool: 'node-a',
          device: 'card-1-shared',
          index: 1,
          shared: true,
          shareID: 's',
          consumed: { memory: 1073741824, cores: 10, units: 160000 },
        },
      ],
    });
  });

  it('refuses, saying why: not a claim, another uid, not allocated, no device of ours, another pool, a device we do not publish', () => {
    expect(on({ metadata: {} })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^ResourceClaim ns\/c: not a ResourceClaim/),
    });
    expect(on(claim(results(result('card-0')), 'u2'))).toEqual({
      ok: false,
      error: 'ResourceClaim ns/c: uid is u2, the kubelet asked for u1 (the claim was replaced)',
    });
    expect(on(claim(undefined))).toEqual({ ok: false, error: 'ResourceClaim ns/c is not allocated' });
    expect(on(claim(results({ ...result('card-0'), driver: 'amd.gpustack.ai' })))).toEqual({
      ok: false,
      error: 'ResourceClaim ns/c has no device of driver nvidia.gpustack.ai',
    });
    expect(on(claim(results(result('card-0'), result('card-1', { pool: 'node-b' }))))).toEqual({
      ok: false,
      error:
        'ResourceClaim ns/c: device card-1 of nvidia.gpustack.ai is allocated in pool node-b, not on this node (node-a)',
    });
    expect(on(claim(results(result('gpu-0'))))).toEqual({
      ok: false,
      error: 'ResourceClaim ns/c: device gpu-0 is not a device nvidia.gpustack.ai publishes',
    });
  });
});

describe('parseCardDeviceName', () => {
  it('reads the devices we publish and nothing else', () => {
    expect(parseCardDeviceName('card-0')).toEqual({ index: 0, shared: false });
    expect(parseCardDeviceName('card-12-shared')).toEqual({ index: 12, shared: true });
    for (const bad of ['card-01', 'card-', 'card-1-shared-x', 'xcard-1', 'card-1-Shared'])
      expect(parseCardDeviceName(bad), bad).toBeUndefined();
  });
});
