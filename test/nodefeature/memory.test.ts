import { describe, expect, it } from 'vitest';
import { formatMemoryMiB, parseMemoryLabel } from '../../src/nodefeature/index.js';

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

describe('parseMemoryLabel', () => {
  it.each([
    { name: 'reads 80Gi as 81920 MiB (the rounded value)', input: '80Gi', want: 81920 },
    { name: 'reads 24Gi', input: '24Gi', want: 24576 },
    { name: 'reads 140Gi', input: '140Gi', want: 143360 },
    { name: 'reads Mi', input: '1023Mi', want: 1023 },
    { name: 'reads Ti', input: '1Ti', want: 1024 * 1024 },
    { name: 'rejects garbage', input: 'huge', want: undefined },
    { name: 'rejects the empty string', input: '', want: undefined },
    { name: 'rejects a bare number', input: '80', want: undefined },
    { name: 'rejects zero', input: '0Gi', want: undefined },
    { name: 'rejects the unwritten bare 0', input: '0', want: undefined },
    { name: 'rejects decimal units', input: '80G', want: undefined },
    { name: 'rejects fractions', input: '1.5Gi', want: undefined },
    { name: 'rejects negatives', input: '-80Gi', want: undefined },
    { name: 'rejects surrounding spaces', input: ' 80Gi', want: undefined },
    { name: 'rejects lower-case units', input: '80gi', want: undefined },
    { name: 'rejects values beyond a safe integer', input: '999999999999Ei', want: undefined },
  ])('$name', ({ input, want }) => {
    expect(parseMemoryLabel(input)).toBe(want);
  });

  it.each([1, 1023, 1024, 24576, 81559, 143771, 1024 * 1024 * 3])(
    'round-trips %i MiB through the label to its rounded value',
    (mib) => {
      const label = formatMemoryMiB(mib);
      const back = parseMemoryLabel(label);
      expect(back).toBeDefined();
      expect(formatMemoryMiB(back as number)).toBe(label);
    },
  );
});
