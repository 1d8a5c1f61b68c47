import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { CPU_UNIT_RESOURCES, DEFAULT_LOCAL_STORAGE, unitResourcesFor } from '../../src/nodefeature/index.js';

const XLARGE = { cpu: '12', ram: '192Gi' };
const LARGE = { cpu: '12', ram: '128Gi' };
const MEDIUM = { cpu: '8', ram: '64Gi' };
const SMALL = { cpu: '8', ram: '32Gi' };
const FALLBACK = { cpu: '4', ram: '16Gi' };

describe('unitResourcesFor (reference §9.2)', () => {
  it.each<{ name: string; input: [ManufacturerName, string]; want: { cpu: string; ram: string } }>([
    { name: 'H100 is xlarge (recorded 12/192Gi)', input: ['nvidia', 'NVIDIA H100 80GB HBM3'], want: XLARGE },
    { name: 'H200 is xlarge', input: ['nvidia', 'NVIDIA H200'], want: XLARGE },
    { name: 'GH200 is xlarge', input: ['nvidia', 'NVIDIA GH200 480GB'], want: XLARGE },
    { name: 'B200 is xlarge', input: ['nvidia', 'NVIDIA B200'], want: XLARGE },
    { name: 'A100 80GB is large (capacity refinement)', input: ['nvidia', 'NVIDIA A100-SXM4-80GB'], want: LARGE },
    { name: 'A100 80GB PCIe is large', input: ['nvidia', 'NVIDIA A100 80GB PCIe'], want: LARGE },
    { name: 'A100 40GB is medium', input: ['nvidia', 'NVIDIA A100-SXM4-40GB'], want: MEDIUM },
    { name: 'A100 without capacity is medium', input: ['nvidia', 'NVIDIA A100'], want: MEDIUM },
    { name: 'A10G is medium (recorded 8/64Gi)', input: ['nvidia', 'NVIDIA A10G'], want: MEDIUM },
    { name: 'RTX 4090 is medium', input: ['nvidia', 'NVIDIA GeForce RTX 4090'], want: MEDIUM },
    { name: 'L40 is medium', input: ['nvidia', 'NVIDIA L40'], want: MEDIUM },
    { name: 'Tesla T4 is small after dropping "tesla" (recorded 8/32Gi)', input: ['nvidia', 'Tesla T4'], want: SMALL },
    { name: 'L4 is small, not matched by L40', input: ['nvidia', 'NVIDIA L4'], want: SMALL },
    { name: 'A30 is small', input: ['nvidia', 'NVIDIA A30'], want: SMALL },
    { name: 'Ascend 910B2 is medium', input: ['ascend', 'Ascend910B2'], want: MEDIUM },
    { name: 'Ascend 910B4 is medium by token prefix', input: ['ascend', 'Ascend 910B4'], want: MEDIUM },
    { name: 'AMD MI300X is xlarge', input: ['amd', 'AMD Instinct MI300X OAM'], want: XLARGE },
    { name: 'a partial token does not match (H1000)', input: ['nvidia', 'NVIDIA H1000'], want: FALLBACK },
    { name: "another manufacturer's table is not consulted", input: ['amd', 'NVIDIA H100'], want: FALLBACK },
    { name: 'unknown product falls back to 4/16Gi', input: ['nvidia', 'NVIDIA RTX A6000'], want: FALLBACK },
    { name: 'manufacturer without a table falls back', input: ['hygon', 'K100_AI'], want: FALLBACK },
    { name: 'empty product falls back', input: ['nvidia', ''], want: FALLBACK },
    { name: 'non-ASCII product falls back', input: ['metax', '曦云 C500'], want: FALLBACK },
  ])('$name', ({ input, want }) => {
    expect(unitResourcesFor(...input)).toEqual(want);
  });

  it('gives CPU-only pools 1 core / 2Gi and every pool 100Gi local storage', () => {
    expect(CPU_UNIT_RESOURCES).toEqual({ cpu: '1', ram: '2Gi' });
    expect(DEFAULT_LOCAL_STORAGE).toBe('100Gi');
  });
});
