/** @module Summary statistics of repeated timings. */

export interface Summary {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** Coefficient of variation: standard deviation / mean. */
  readonly cv: number;
  readonly n: number;
}

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return (sorted[low] as number) + ((sorted[high] as number) - (sorted[low] as number)) * (position - low);
}

export function summarize(values: readonly number[]): Summary {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, values.length - 1);
  return {
    median: quantile(values, 0.5),
    min: Math.min(...values),
    max: Math.max(...values),
    cv: mean === 0 ? 0 : Math.sqrt(variance) / mean,
    n: values.length,
  };
}

/** Rounds for the report: 3 significant digits. */
export function round(value: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return Number(value.toFixed(digits));
}
