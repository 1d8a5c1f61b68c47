import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDecimalQuantity, parseQuantity, parseQuantityExact } from '../../src/k8s/index.js';

describe('formatDecimalQuantity', () => {
  it.each([
    { name: 'one card of credits is 1600k', input: 1_600_000, want: '1600k' },
    { name: 'eight cards of credits are 12800k', input: 12_800_000, want: '12800k' },
    { name: 'five cards of credits are 8M', input: 8_000_000, want: '8M' },
    { name: 'sixteen H100 cards are 25600k', input: 25_600_000, want: '25600k' },
    { name: 'a CPU count stays bare', input: 224, want: '224' },
    { name: 'zero is 0', input: 0, want: '0' },
    { name: 'one thousand is 1k', input: 1000, want: '1k' },
    { name: 'a number not divisible by 1000 stays bare', input: 1500, want: '1500' },
    { name: 'picks the largest suffix with a whole mantissa', input: 2_000_000_000, want: '2G' },
    { name: 'uses T, P and E', input: 3n * 10n ** 18n, want: '3E' },
    { name: 'keeps the sign of negatives', input: -1_600_000, want: '-1600k' },
    { name: 'accepts bigint beyond a safe integer', input: 12_345n * 10n ** 15n, want: '12345P' },
  ])('$name', ({ input, want }) => {
    expect(formatDecimalQuantity(input)).toBe(want);
  });
});

describe('parseQuantity', () => {
  it.each([
    { name: 'reads milli-CPU', input: '3500m', want: 3.5 },
    { name: 'reads a bare number', input: '224', want: 224 },
    { name: 'reads k', input: '1600k', want: 1_600_000 },
    { name: 'reads M', input: '8M', want: 8_000_000 },
    { name: 'reads binary Ki', input: '1Ki', want: 1024 },
    { name: 'reads binary Gi', input: '80Gi', want: 80 * 2 ** 30 },
    { name: 'reads E as exa', input: '1E', want: 1e18 },
    { name: 'reads an exponent', input: '1e3', want: 1000 },
    { name: 'reads an upper-case exponent', input: '1E3', want: 1000 },
    { name: 'reads a negative exponent', input: '15e-1', want: 1.5 },
    { name: 'reads a fraction', input: '0.5', want: 0.5 },
    { name: 'reads a leading dot', input: '.5', want: 0.5 },
    { name: 'reads a trailing dot', input: '5.', want: 5 },
    { name: 'reads a sign', input: '+2', want: 2 },
    { name: 'reads a negative', input: '-2k', want: -2000 },
    { name: 'trims surrounding spaces', input: ' 8 ', want: 8 },
    { name: 'rejects garbage', input: 'huge', want: undefined },
    { name: 'rejects the empty string', input: '', want: undefined },
    { name: 'rejects an unknown suffix', input: '8X', want: undefined },
    { name: 'rejects lower-case binary suffixes', input: '8gi', want: undefined },
    { name: 'rejects a bare suffix', input: 'k', want: undefined },
    { name: 'rejects an inner space', input: '8 k', want: undefined },
    { name: 'rejects overflow to infinity', input: '1e400', want: undefined },
  ])('$name', ({ input, want }) => {
    expect(parseQuantity(input)).toBe(want);
  });

  it.each([
    { name: 'reads nano', input: '500n', want: 5e-7 },
    { name: 'reads micro', input: '250u', want: 2.5e-4 },
  ])('$name (to float precision)', ({ input, want }) => {
    expect(parseQuantity(input)).toBeCloseTo(want, 15);
  });

  it('reads back every quantity formatDecimalQuantity writes', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), (n) => {
        expect(parseQuantity(formatDecimalQuantity(n))).toBe(n);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('formats multiples of the credit unit with a whole mantissa', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), (cards) => {
        expect(formatDecimalQuantity(cards * 1_600_000)).toMatch(/^(0|[1-9]\d*[kMGTPE]?)$/);
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('parseQuantityExact', () => {
  const exact = (text: string) => {
    const q = parseQuantityExact(text);
    return q === undefined ? undefined : `${q.numerator}/${q.denominator}`;
  };
  it.each([
    { name: 'reads a bare number as itself', input: '224', want: '224/1' },
    { name: 'reads a leading zero', input: '08', want: '8/1' },
    { name: 'reads a plus sign', input: '+8', want: '8/1' },
    { name: 'reads a minus sign', input: '-512m', want: '-64/125' },
    { name: 'reads milli exactly, in lowest terms', input: '3500m', want: '7/2' },
    { name: 'reads a binary fraction exactly', input: '1.5Gi', want: `${1.5 * 2 ** 30}/1` },
    { name: 'reads a decimal G as 10^9', input: '24G', want: '24000000000/1' },
    { name: 'reads E as exa', input: '1E', want: `${10n ** 18n}/1` },
    { name: 'reads an exponent', input: '1e3', want: '1000/1' },
    { name: 'reads a negative exponent', input: '15e-1', want: '3/2' },
    { name: 'reads a decimal fraction without rounding it', input: '1.048576M', want: '1048576/1' },
    { name: 'reads a leading dot', input: '.5', want: '1/2' },
    { name: 'reads a trailing dot', input: '5.', want: '5/1' },
    { name: 'reads zero', input: '0', want: '0/1' },
    { name: 'rejects surrounding spaces (a label cannot hold them)', input: ' 8', want: undefined },
    { name: 'rejects lower-case binary suffixes', input: '80gi', want: undefined },
    { name: 'rejects garbage', input: 'huge', want: undefined },
    { name: 'rejects an absurd exponent', input: '1e400', want: undefined },
  ])('$name', ({ input, want }) => {
    expect(exact(input)).toBe(want);
  });

  it('agrees with parseQuantity wherever a float is exact', () => {
    for (const text of ['224', '3500m', '1600k', '80Gi', '1e3', '+2', '-2k', '0.5']) {
      const q = parseQuantityExact(text);
      expect(q && Number(q.numerator) / Number(q.denominator)).toBe(parseQuantity(text));
    }
  });
});
