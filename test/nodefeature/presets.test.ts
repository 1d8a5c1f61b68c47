import { describe, expect, it } from 'vitest';
import type { ManufacturerName } from '../../src/k8s/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  CPU_UNIT_RESOURCES,
  DEFAULT_LOCAL_STORAGE,
  UNIT_PRESET_STRIP,
  UNIT_PRESET_TABLE,
  UNIT_TIERS,
  presetTokens,
  unitResourcesFor,
  unitTierFor,
} from '../../src/nodefeature/index.js';

const XLARGE = { cpu: '12', ram: '192Gi' };
const LARGE = { cpu: '12', ram: '128Gi' };
const MEDIUM = { cpu: '8', ram: '64Gi' };
const SMALL = { cpu: '8', ram: '32Gi' };
const FALLBACK = { cpu: '4', ram: '16Gi' };

describe('unitResourcesFor (the modelled system’s preset table, docs/architecture.md#modelled-system)', () => {
  it.each<{ name: string; input: [ManufacturerName, string]; want: { cpu: string; ram: string } }>([
    // the modelled system's own lookup vectors
    { name: 'H100 is xlarge (recorded 12/192Gi)', input: ['nvidia', 'NVIDIA H100 80GB HBM3'], want: XLARGE },
    { name: 'the label-sanitised H100 is xlarge too', input: ['nvidia', 'NVIDIA-H100-80GB-HBM3'], want: XLARGE },
    { name: 'H100 PCIe is xlarge', input: ['nvidia', 'NVIDIA H100 PCIe'], want: XLARGE },
    { name: 'the bare chip name H100 is xlarge', input: ['nvidia', 'H100'], want: XLARGE },
    { name: 'Tesla T4 is small after dropping "tesla" (recorded 8/32Gi)', input: ['nvidia', 'Tesla T4'], want: SMALL },
    { name: 'the label-sanitised Tesla-T4 is small', input: ['nvidia', 'Tesla-T4'], want: SMALL },
    { name: 'GB10 (unified memory) is small', input: ['nvidia', 'NVIDIA GB10'], want: SMALL },
    { name: 'A100 80GB PCIe is large (capacity refinement)', input: ['nvidia', 'NVIDIA A100 80GB PCIe'], want: LARGE },
    { name: 'A100-SXM4-40GB is medium', input: ['nvidia', 'NVIDIA A100-SXM4-40GB'], want: MEDIUM },
    { name: 'A100 without capacity is medium', input: ['nvidia', 'NVIDIA A100'], want: MEDIUM },
    {
      name: 'a capacity refinement is a whole token (140GB is not 40GB)',
      input: ['nvidia', 'A100 140GB'],
      want: MEDIUM,
    },
    { name: 'A10 is not an A100: whole tokens', input: ['nvidia', 'NVIDIA A10'], want: MEDIUM },
    { name: 'bare Ascend chip name 910B2 is medium', input: ['ascend', '910B2'], want: MEDIUM },
    { name: 'prefixed Ascend910B2 is medium', input: ['ascend', 'Ascend910B2'], want: MEDIUM },
    { name: 'an unknown NVIDIA product falls back', input: ['nvidia', 'NVIDIA RTX 5070'], want: FALLBACK },
    { name: 'the bare manufacturer word falls back', input: ['nvidia', 'NVIDIA'], want: FALLBACK },
    { name: 'a lone marketing word falls back', input: ['nvidia', 'Tesla'], want: FALLBACK },
    { name: 'a product that normalises to nothing falls back', input: ['nvidia', '!!!'], want: FALLBACK },
    { name: 'an empty product falls back', input: ['nvidia', ''], want: FALLBACK },
    // rows the issue names: missing here before, or different
    { name: 'Hygon K100_AI is large (was the fallback)', input: ['hygon', 'K100_AI'], want: LARGE },
    { name: 'Ascend 310P3 is medium (was small)', input: ['ascend', '310P3'], want: MEDIUM },
    { name: 'L40S is large (was medium)', input: ['nvidia', 'NVIDIA L40S'], want: LARGE },
    { name: 'L40 stays medium', input: ['nvidia', 'NVIDIA L40'], want: MEDIUM },
    { name: 'L4 is small, not matched by L40', input: ['nvidia', 'NVIDIA L4'], want: SMALL },
    { name: 'MI250X is medium (was large)', input: ['amd', 'AMD Instinct MI250X'], want: MEDIUM },
    { name: 'MI210 is large (was medium)', input: ['amd', 'AMD Instinct MI210'], want: LARGE },
    { name: 'Ascend 910 9362 (A3) is xlarge (was medium)', input: ['ascend', '910_9362'], want: XLARGE },
    { name: 'Ascend 910 9392 (A3) is xlarge', input: ['ascend', 'Ascend910_9392'], want: XLARGE },
    { name: 'Ascend 950PR is xlarge', input: ['ascend', 'Ascend950PR'], want: XLARGE },
    { name: 'Ascend 910B4-1 is medium (tokens 910b4, 1)', input: ['ascend', '910B4-1'], want: MEDIUM },
    { name: 'V100 16GB is small', input: ['nvidia', 'Tesla V100-SXM2-16GB'], want: SMALL },
    { name: 'V100 32GB is medium', input: ['nvidia', 'Tesla V100-SXM2-32GB'], want: MEDIUM },
    { name: 'V100S is small (its own row)', input: ['nvidia', 'Tesla V100S-PCIE-32GB'], want: SMALL },
    { name: 'RTX 3090 is small', input: ['nvidia', 'NVIDIA GeForce RTX 3090'], want: SMALL },
    { name: 'RTX 4090 is medium', input: ['nvidia', 'NVIDIA GeForce RTX 4090'], want: MEDIUM },
    { name: 'RTX 5090 is medium', input: ['nvidia', 'NVIDIA GeForce RTX 5090'], want: MEDIUM },
    { name: 'RTX A6000 is small', input: ['nvidia', 'NVIDIA RTX A6000'], want: SMALL },
    { name: 'Quadro RTX 6000 is small', input: ['nvidia', 'Quadro RTX 6000'], want: SMALL },
    { name: 'GB200 is xlarge', input: ['nvidia', 'NVIDIA GB200'], want: XLARGE },
    { name: 'GH200 is xlarge', input: ['nvidia', 'NVIDIA GH200 480GB'], want: XLARGE },
    { name: 'A800 80GB is large', input: ['nvidia', 'NVIDIA A800-SXM4-80GB'], want: LARGE },
    { name: 'AMD MI300X is xlarge', input: ['amd', 'AMD Instinct MI300X OAM'], want: XLARGE },
    {
      name: 'AMD MI300X behind "Radeon Instinct" is xlarge',
      input: ['amd', 'AMD Radeon Instinct MI300X'],
      want: XLARGE,
    },
    { name: 'Cambricon MLU370-X8 is medium', input: ['cambricon', 'MLU370-X8'], want: MEDIUM },
    {
      name: 'a bare Cambricon "MLU" falls back (the driver’s unknown card)',
      input: ['cambricon', 'MLU'],
      want: FALLBACK,
    },
    { name: 'MetaX MXC500 is medium (was the fallback)', input: ['metax', 'MXC500'], want: MEDIUM },
    { name: 'MetaX MXC550 is large', input: ['metax', 'MXC550'], want: LARGE },
    { name: 'Moore Threads MTT S4000 is medium', input: ['mthreads', 'Moore Threads MTT S4000'], want: MEDIUM },
    { name: 'Iluvatar BI-V150 is medium', input: ['iluvatar', 'Iluvatar BI-V150'], want: MEDIUM },
    { name: 'T-Head PPU-ZW810E is medium', input: ['thead', 'T-Head PPU-ZW810E'], want: MEDIUM },
    { name: 'Hygon Z100L is small', input: ['hygon', 'Z100L'], want: SMALL },
    // anchoring
    {
      name: 'a model in the middle of the name does not count (DGX H100)',
      input: ['nvidia', 'NVIDIA DGX H100'],
      want: FALLBACK,
    },
    { name: 'a partial token does not match (H1000)', input: ['nvidia', 'NVIDIA H1000'], want: FALLBACK },
    { name: "another manufacturer's table is not consulted", input: ['amd', 'NVIDIA H100'], want: FALLBACK },
    { name: 'non-ASCII product falls back', input: ['metax', '曦云 C500'], want: FALLBACK },
  ])('$name', ({ input, want }) => {
    expect(unitResourcesFor(...input)).toEqual(want);
  });

  it('gives CPU-only pools 1 core / 2Gi and every pool 100Gi local storage', () => {
    expect(CPU_UNIT_RESOURCES).toEqual({ cpu: '1', ram: '2Gi' });
    expect(DEFAULT_LOCAL_STORAGE).toBe('100Gi');
  });
});

describe('the preset table', () => {
  const rows = MANUFACTURER_NAMES.flatMap((mfr) => UNIT_PRESET_TABLE[mfr].map((row) => ({ mfr, row })));

  it('covers all nine manufacturers', () => {
    for (const mfr of MANUFACTURER_NAMES) expect(UNIT_PRESET_TABLE[mfr].length, mfr).toBeGreaterThan(0);
  });

  it('keeps the ladder monotonic and the fallback at 4/16Gi', () => {
    const ladder = Object.values(UNIT_TIERS).map((t) => [Number(t.cpu), Number.parseInt(t.ram, 10)]);
    for (let i = 1; i < ladder.length; i++) {
      expect(ladder[i]?.[0]).toBeGreaterThanOrEqual(ladder[i - 1]?.[0] as number);
      expect(ladder[i]?.[1]).toBeGreaterThan(ladder[i - 1]?.[1] as number);
    }
    expect(UNIT_TIERS.fallback).toEqual(FALLBACK);
  });

  it('never lets two rows of one manufacturer match the same product (no prefix starts another)', () => {
    for (const mfr of MANUFACTURER_NAMES) {
      const prefixes = UNIT_PRESET_TABLE[mfr].map((r) => presetTokens(r.prefix));
      for (const [i, a] of prefixes.entries()) {
        for (const [j, b] of prefixes.entries()) {
          if (i === j) continue;
          const aStartsB = a.length <= b.length && a.every((t, k) => b[k] === t);
          expect(aStartsB, `${mfr}: ${a.join('-')} starts ${b.join('-')}`).toBe(false);
        }
      }
    }
  });

  it.each(rows)('$mfr row $row.prefix is reachable: it matches itself and names no stripped word', ({ mfr, row }) => {
    expect(row.prefix).toBe(row.prefix.toLowerCase());
    expect(unitTierFor(mfr, row.prefix)).toBe(row.tier);
    for (const strip of UNIT_PRESET_STRIP) expect(row.prefix.startsWith(strip)).toBe(false);
    for (const variant of row.by ?? []) {
      expect(presetTokens(row.prefix)).not.toContain(variant.token);
      expect(unitTierFor(mfr, `${row.prefix}-${variant.token}`)).toBe(variant.tier);
    }
  });
});
