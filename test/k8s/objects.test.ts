import { describe, expect, it } from 'vitest';
import { EchoedValueSchema, MAX_ECHOED_DEPTH, jsonDepth } from '../../src/k8s/index.js';

/** `depth` arrays nested in one another, built by JSON.parse (no recursion on our side). */
function nested(depth: number): unknown {
  return JSON.parse('['.repeat(depth) + ']'.repeat(depth));
}

describe('jsonDepth', () => {
  it.each<{ name: string; value: unknown; want: number }>([
    { name: 'a scalar is 0', value: 'x', want: 0 },
    { name: 'null is 0', value: null, want: 0 },
    { name: 'an empty array is 1', value: [], want: 1 },
    { name: 'an empty object is 1', value: {}, want: 1 },
    { name: 'counts the deepest branch', value: { a: [1], b: { c: { d: [] } } }, want: 4 },
    { name: 'counts a __proto__ member like any other', value: JSON.parse('{"__proto__":{"a":[]}}'), want: 3 },
  ])('$name', ({ value, want }) => {
    expect(jsonDepth(value)).toBe(want);
  });

  it('measures 200,000 levels without running out of stack', () => {
    expect(jsonDepth(nested(200_000))).toBe(200_000);
  });

  it('stops just past the limit', () => {
    expect(jsonDepth(nested(200_000), 10)).toBe(11);
  });
});

describe('EchoedValueSchema', () => {
  it.each([
    { depth: MAX_ECHOED_DEPTH, ok: true },
    { depth: MAX_ECHOED_DEPTH + 1, ok: false },
  ])('a value $depth levels deep passes: $ok', ({ depth, ok }) => {
    expect(EchoedValueSchema.safeParse(nested(depth)).success).toBe(ok);
  });

  it('passes the value on as it came, not a copy', () => {
    const spec = { nodeLabels: { a: 'b' } };

    expect(EchoedValueSchema.parse(spec)).toBe(spec);
  });
});
