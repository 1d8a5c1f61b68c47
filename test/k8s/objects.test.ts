import { describe, expect, it } from 'vitest';
import { EchoedValueSchema, MAX_DEPTH_LIMIT, MAX_ECHOED_DEPTH, jsonDepth, pathPastDepth } from '../../src/k8s/index.js';

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

describe('pathPastDepth', () => {
  it.each<{ name: string; value: unknown; limit: number; want: PropertyKey[] | undefined }>([
    { name: 'a scalar nests nowhere', value: 'x', limit: 0, want: undefined },
    { name: 'a value right at the limit passes', value: { a: [1], b: { c: {} } }, limit: 3, want: undefined },
    { name: 'the top itself past a limit of 0', value: {}, limit: 0, want: [] },
    { name: 'an empty array counts as a level', value: { a: { b: [] } }, limit: 2, want: ['a', 'b'] },
    {
      name: 'names the first too-deep member in document order',
      value: { a: [1, { ok: 1 }, [[]]], b: { c: { d: {} } } },
      limit: 3,
      want: ['a', 2, 0],
    },
    {
      name: 'walks a __proto__ member like any other',
      value: JSON.parse('{"x":1,"__proto__":{"a":[[]]}}'),
      limit: 3,
      want: ['__proto__', 'a', 0],
    },
  ])('$name', ({ value, limit, want }) => {
    expect(pathPastDepth(value, limit)).toEqual(want);
  });

  it('agrees with jsonDepth on every side of the limit', () => {
    const value = { a: [[{ b: [] }]], c: 'd' };
    for (let limit = 0; limit < 7; limit++)
      expect(pathPastDepth(value, limit) === undefined).toBe(jsonDepth(value) <= limit);
  });

  it('finds the member past the limit in 200,000 levels without running out of stack, up to its largest limit', () => {
    const value = { spec: nested(200_000) };

    expect(pathPastDepth(value, 100)).toEqual(['spec', ...Array<number>(99).fill(0)]);
    expect(pathPastDepth(value, MAX_DEPTH_LIMIT)).toHaveLength(MAX_DEPTH_LIMIT);
  });

  it('refuses a limit that would let its walk recurse past MAX_DEPTH_LIMIT frames', () => {
    expect(() => pathPastDepth([], MAX_DEPTH_LIMIT + 1)).toThrow(RangeError);
  });
});
