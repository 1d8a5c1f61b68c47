import { describe, expect, it } from 'vitest';
import { isDnsLabel } from '../../src/k8s/index.js';
import { fnv1a64Hex, localQueueName } from '../../src/nodefeature/index.js';

describe('fnv1a64Hex', () => {
  it.each([
    { name: 'hashes the empty string to the offset basis', input: '', want: 'cbf29ce484222325' },
    { name: 'hashes "a" (published FNV-1a 64 vector)', input: 'a', want: 'af63dc4c8601ec8c' },
    { name: 'hashes "foobar" (published FNV-1a 64 vector)', input: 'foobar', want: '85944171f73967e8' },
    { name: 'hashes the custom type of the reference note', input: 'a10g-12c128g', want: 'd4c0e6cd72686015' },
  ])('$name', ({ input, want }) => {
    expect(fnv1a64Hex(input)).toBe(want);
  });

  it('hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // "é" is 0xc3 0xa9 in UTF-8; hashing those two bytes by hand must agree.
    let hash = 0xcbf29ce484222325n;
    for (const byte of [0xc3, 0xa9]) hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & ((1n << 64n) - 1n);
    expect(fnv1a64Hex('é')).toBe(hash.toString(16).padStart(16, '0'));
  });

  it('zero-pads to 16 hex digits', () => {
    for (let i = 0; i < 2000; i++) expect(fnv1a64Hex(`q${i}`)).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('localQueueName', () => {
  // every vector the modelled Go project verifies (docs/architecture.md#object-names)
  it.each([
    {
      name: 'RTX 4090 queue (upstream test vector)',
      input: 'gpustack--nvidia-geforce-rtx-4090-linux-amd64',
      want: 'gpustack-fnv64-1a7145d0a5248d55',
    },
    { name: 'A10G queue', input: 'gpustack--nvidia-a10g-linux-amd64', want: 'gpustack-fnv64-c4680bb149644f1c' },
    { name: 'generic amd64 queue', input: 'gpustack--generic-linux-amd64', want: 'gpustack-fnv64-3b93966fd73eb9ec' },
    { name: 'Tesla T4 queue', input: 'gpustack--nvidia-tesla-t4-linux-amd64', want: 'gpustack-fnv64-6b371caa2da0b799' },
    {
      name: 'H100 queue',
      input: 'gpustack--nvidia-h100-80gb-hbm3-linux-amd64',
      want: 'gpustack-fnv64-e4768a65ca0ce96b',
    },
    {
      name: 'EPYC 7R13 CPU queue',
      input: 'gpustack--amd-epyc-7r13-linux-amd64',
      want: 'gpustack-fnv64-8dde992f64a17a2f',
    },
    {
      name: 'CPU-aware A10G queue',
      input: 'gpustack--amd-epyc-7r32--nvidia-a10g-linux-amd64',
      want: 'gpustack-fnv64-029fd9550e0c70bd',
    },
    {
      name: 'Xeon 8259CL CPU queue',
      input: 'gpustack--intel-xeon-platinum-8259cl-linux-amd64',
      want: 'gpustack-fnv64-c6aee2b7b5c4dc6b',
    },
    {
      name: 'CPU-aware H100 queue',
      input: 'gpustack--intel-xeon-platinum-8480--nvidia-h100-80gb-hbm3-linux-amd64',
      want: 'gpustack-fnv64-0cf610a1ef8b8974',
    },
    {
      name: 'Xeon 8480 CPU queue',
      input: 'gpustack--intel-xeon-platinum-8480-linux-amd64',
      want: 'gpustack-fnv64-0749cbc29f1f0e90',
    },
    {
      name: 'EPYC 7763 CPU queue',
      input: 'gpustack--amd-epyc-7763-linux-amd64',
      want: 'gpustack-fnv64-f185b7b11c7b3eb3',
    },
    {
      name: 'Ascend 910B2 queue',
      input: 'gpustack--ascend-910b2-linux-arm64',
      want: 'gpustack-fnv64-d63887c050d9dbde',
    },
    {
      name: 'generic arm64 queue',
      input: 'gpustack--generic-linux-arm64',
      want: 'gpustack-fnv64-80be98524a2c0f44',
    },
  ])('$name', ({ input, want }) => {
    const got = localQueueName(input);
    expect(got).toBe(want);
    expect(got).toHaveLength(31);
    expect(isDnsLabel(got)).toBe(true);
  });

  it('names the topology profile of the default level list like the modelled system', () => {
    expect(`fnv64-${fnv1a64Hex('kubernetes.io/hostname')}`).toBe('fnv64-87bf574bea2a4f23');
  });

  it('is 31 characters even for a 253-character queue name', () => {
    expect(localQueueName(`gpustack-${'x'.repeat(244)}`)).toHaveLength(31);
  });
});
