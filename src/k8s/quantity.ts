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
