import { describe, expect, it } from 'vitest';
import { canonicalMemory, formatMemoryMiB, readMemoryLabel } from '../../src/nodefeature/index.js';

describe('formatMemoryMiB', () => {
  it.each([
    { name: 'renders 24 GiB cards as 24Gi', input: 24576, want: '24Gi' },
    { name: 'rounds an H100 (81559 MiB) down to 80Gi', input: 81559, want: '80Gi' },
    { name: 'rounds an H200 (143771 MiB) to 140Gi', input: 143771, want: '140Gi' },
    { name: 'renders a 16 GiB card (15360 MiB) as 15Gi', input: 15360, want: '15Gi' },
    { name: 'rounds 44280 MiB half-up to 43Gi', input: 44280, want: '43Gi' },
    { name: 'rounds exactly half a GiB up', input: 1536, want: '2Gi' },
    { name: 'rounds just under half a GiB down', input: 1535, want: '1Gi' },
    { name: 'keeps MiB below one GiB', input: 1023, want: '1023Mi' },
    { name: 'renders one GiB', input: 1024, want: '1Gi' },
    { name: 'stays at Gi just under one TiB', input: 1024 * 1024 - 1, want: '1024Gi' },
    { name: 'moves to Ti at one TiB', input: 1024 * 1024, want: '1Ti' },
    { name: 'renders zero as 0', input: 0, want: '0' },
    { name: 'clamps negatives to 0', input: -5, want: '0' },
    { name: 'rounds fractional MiB', input: 0.6, want: '1Mi' },
  ])('$name', ({ input, want }) => {
    expect(formatMemoryMiB(input)).toBe(want);
  });
});

describe('readMemoryLabel', () => {
  it.each([
    // the form we write
    { name: 'reads 80Gi as 81920 MiB (the rounded value)', input: '80Gi', want: { ok: true, mib: 81920 } },
    { name: 'reads 24Gi', input: '24Gi', want: { ok: true, mib: 24576 } },
    { name: 'reads 140Gi', input: '140Gi', want: { ok: true, mib: 143360 } },
    { name: 'reads Mi', input: '1023Mi', want: { ok: true, mib: 1023 } },
    { name: 'reads Ti', input: '1Ti', want: { ok: true, mib: 1024 * 1024 } },
    // forms other tools write (issue 14, item 3): Kubernetes quantity semantics, rounded down to MiB
    { name: 'reads a decimal 24G as 24·10^9 bytes (22888 MiB)', input: '24G', want: { ok: true, mib: 22888 } },
    { name: 'reads a fraction 1.5Gi', input: '1.5Gi', want: { ok: true, mib: 1536 } },
    { name: 'reads a plus sign', input: '+80Gi', want: { ok: true, mib: 81920 } },
    { name: 'reads raw bytes', input: '85899345920', want: { ok: true, mib: 81920 } },
    { name: 'reads an exponent', input: '8e10', want: { ok: true, mib: 76293 } },
    { name: 'reads exactly 1Mi of bytes', input: '1048576', want: { ok: true, mib: 1 } },
    {
      name: 'reads 0 as an unknown memory (the card still pools, as in the modelled system)',
      input: '0',
      want: { ok: true, mib: 0 },
    },
    { name: 'reads 0Gi as unknown too', input: '0Gi', want: { ok: true, mib: 0 } },
    // refused, with the reason the chain reports
    { name: 'refuses a negative quantity', input: '-512m', want: { ok: false, why: 'is negative' } },
    { name: 'refuses -80Gi', input: '-80Gi', want: { ok: false, why: 'is negative' } },
    {
      name: 'refuses a positive quantity below 1Mi (a bare MiB figure read as bytes)',
      input: '24576',
      want: { ok: false, why: expect.stringContaining('is below 1Mi') },
    },
    {
      name: 'refuses a sub-MiB milli quantity',
      input: '512m',
      want: { ok: false, why: expect.stringContaining('below 1Mi') },
    },
    { name: 'refuses garbage', input: 'huge', want: { ok: false, why: 'is not a Kubernetes quantity such as 80Gi' } },
    {
      name: 'refuses the empty string',
      input: '',
      want: { ok: false, why: 'is not a Kubernetes quantity such as 80Gi' },
    },
    {
      name: 'refuses surrounding spaces',
      input: ' 80Gi',
      want: { ok: false, why: 'is not a Kubernetes quantity such as 80Gi' },
    },
    {
      name: 'refuses lower-case units',
      input: '80gi',
      want: { ok: false, why: 'is not a Kubernetes quantity such as 80Gi' },
    },
    {
      name: 'refuses values beyond a safe integer of MiB',
      input: '999999999999Ei',
      want: { ok: false, why: 'is too large for a card' },
    },
    { name: 'refuses absence', input: undefined, want: { ok: false, why: 'is not set' } },
  ])('$name', ({ input, want }) => {
    expect(readMemoryLabel(input)).toEqual(want);
  });

  it.each([1, 1023, 1024, 24576, 81559, 143771, 1024 * 1024 * 3])(
    'round-trips %i MiB through the label we write to its rounded value',
    (mib) => {
      const label = formatMemoryMiB(mib);
      const back = readMemoryLabel(label);
      expect(back.ok).toBe(true);
      expect(back.ok && formatMemoryMiB(back.mib)).toBe(label);
    },
  );
});

describe('canonicalMemory', () => {
  it.each([
    { name: 'prints 81920 MiB as 80Gi', input: 81920, want: '80Gi' },
    { name: 'keeps 22888 MiB in Mi (24G read back)', input: 22888, want: '22888Mi' },
    { name: 'keeps 1536 MiB in Mi rather than rounding to 2Gi', input: 1536, want: '1536Mi' },
    { name: 'prints one TiB as 1Ti', input: 1024 * 1024, want: '1Ti' },
    { name: 'prints 0 as 0', input: 0, want: '0' },
  ])('$name', ({ input, want }) => {
    expect(canonicalMemory(input)).toBe(want);
  });
});
