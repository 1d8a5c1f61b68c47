/**
 * @module Kubernetes resource quantities: the small subset of `resource.Quantity` we read
 * (node capacity, memory labels) and the canonical form we write (`1600k`, `12800k`, `8M`, `224`).
 */

const BINARY_SUFFIXES: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL_SUFFIXES: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY_PATTERN = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/**
 * Parses a Kubernetes quantity string into a number, or `undefined` when it is not one.
 * @example parseQuantity('3500m') // 3.5
 */
export function parseQuantity(text: string): number | undefined {
  const match = QUANTITY_PATTERN.exec(text.trim());
  if (!match) return undefined;
  const [, sign, digits, suffix, exponent] = match;
  const base = Number(digits);
  const scale =
    exponent !== undefined
      ? 10 ** Number(exponent)
      : suffix === undefined
        ? 1
        : (BINARY_SUFFIXES[suffix] ?? DECIMAL_SUFFIXES[suffix] ?? 1);
  const value = base * scale * (sign === '-' ? -1 : 1);
  return Number.isFinite(value) ? value : undefined;
}

/** A quantity as an exact fraction: `numerator / denominator`, the denominator positive. */
export interface ExactQuantity {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

const EXACT_BINARY_EXPONENTS: Record<string, bigint> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const EXACT_DECIMAL_EXPONENTS: Record<string, number> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
/** The longest exponent read exactly; beyond it a label is garbage, not a quantity worth a bigint. */
const MAX_EXACT_EXPONENT = 64;

/**
 * Parses a Kubernetes quantity exactly (no floating point), as a fraction in lowest terms: the grammar of `resource.Quantity`
 * (sign, digits with an optional fraction, then a binary suffix, a decimal suffix or an exponent),
 * with no surrounding white space. `undefined` when the text is not one.
 * @example parseQuantityExact('1.5Gi') // { numerator: 1610612736n, denominator: 1n }
 * @example parseQuantityExact('3500m') // { numerator: 7n, denominator: 2n }
 */
export function parseQuantityExact(text: string): ExactQuantity | undefined {
  const match = QUANTITY_PATTERN.exec(text);
  if (!match || text !== text.trim()) return undefined;
  const [, sign, digits = '', suffix, exponentText] = match;
  const [whole = '', fraction = ''] = digits.split('.');
  let numerator = BigInt(`${whole || '0'}${fraction}`) * (sign === '-' ? -1n : 1n);
  let exponent = -fraction.length;
  if (exponentText !== undefined) exponent += Number(exponentText);
  else if (suffix !== undefined && suffix in EXACT_BINARY_EXPONENTS)
    numerator <<= EXACT_BINARY_EXPONENTS[suffix] as bigint;
  else if (suffix !== undefined) exponent += EXACT_DECIMAL_EXPONENTS[suffix] ?? 0;
  if (Math.abs(exponent) > MAX_EXACT_EXPONENT) return undefined;
  if (exponent >= 0) return { numerator: numerator * 10n ** BigInt(exponent), denominator: 1n };
  const denominator = 10n ** BigInt(-exponent);
  const divisor = gcd(numerator < 0n ? -numerator : numerator, denominator);
  return { numerator: numerator / divisor, denominator: denominator / divisor };
}

function gcd(a: bigint, b: bigint): bigint {
  return b === 0n ? a : gcd(b, a % b);
}

const DECIMAL_STEPS: readonly [bigint, string][] = [
  [10n ** 18n, 'E'],
  [10n ** 15n, 'P'],
  [10n ** 12n, 'T'],
  [10n ** 9n, 'G'],
  [10n ** 6n, 'M'],
  [10n ** 3n, 'k'],
];

/**
 * Formats a whole number the way the API server canonicalises a decimal-SI quantity:
 * the largest suffix that keeps the mantissa an integer. Metacontroller compares
 * desired and observed JSON literally, so anything else would cause an update every sync.
 * @example formatDecimalQuantity(1_600_000) // '1600k'
 * @example formatDecimalQuantity(8_000_000) // '8M'
 */
export function formatDecimalQuantity(value: number | bigint): string {
  const n = BigInt(value);
  if (n < 0n) return `-${formatDecimalQuantity(-n)}`;
  if (n === 0n) return '0';
  for (const [scale, suffix] of DECIMAL_STEPS) {
    if (n % scale === 0n) return `${n / scale}${suffix}`;
  }
  return n.toString();
}
