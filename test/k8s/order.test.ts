import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byText, canonicalize, compareObjects, type ObjectIdentity, sortObjects } from '../../src/k8s/index.js';

function obj(
  apiVersion: string | undefined,
  kind: string | undefined,
  name: string,
  namespace?: string,
): ObjectIdentity {
  return {
    ...(apiVersion !== undefined ? { apiVersion } : {}),
    ...(kind !== undefined ? { kind } : {}),
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}) },
  };
}

describe('canonicalize', () => {
  it.each<{ name: string; input: { value: unknown; keepNull?: boolean }; want: unknown }>([
    {
      name: 'sorts object keys by code unit',
      input: { value: { b: 1, a: 2, B: 3, _: 4 } },
      want: { B: 3, _: 4, a: 2, b: 1 },
    },
    { name: 'sorts nested keys', input: { value: { z: { y: 1, x: 2 } } }, want: { z: { x: 2, y: 1 } } },
    { name: 'drops undefined members', input: { value: { a: undefined, b: 1 } }, want: { b: 1 } },
    { name: 'drops null members by default', input: { value: { a: null, b: 1 } }, want: { b: 1 } },
    {
      name: 'keeps null members with keepNull (label deletions)',
      input: { value: { labels: { a: null, b: 'x' } }, keepNull: true },
      want: { labels: { a: null, b: 'x' } },
    },
    {
      name: 'drops null and undefined array items, even with keepNull',
      input: { value: [1, null, undefined, 2], keepNull: true },
      want: [1, 2],
    },
    { name: 'keeps array order', input: { value: [{ b: 1, a: 1 }, 3, 'x'] }, want: [{ a: 1, b: 1 }, 3, 'x'] },
    { name: 'keeps scalars', input: { value: 'x' }, want: 'x' },
    {
      name: 'keeps false, 0 and the empty string',
      input: { value: { a: false, b: 0, c: '' } },
      want: { a: false, b: 0, c: '' },
    },
    { name: 'keeps empty objects and arrays', input: { value: { a: {}, b: [] } }, want: { a: {}, b: [] } },
  ])('$name', ({ input, want }) => {
    expect(canonicalize(input.value, { keepNull: input.keepNull ?? false })).toEqual(want);
  });

  it('serialises with keys in sorted order', () => {
    expect(JSON.stringify(canonicalize({ spec: { b: 1, a: 2 }, apiVersion: 'v1' }))).toBe(
      '{"apiVersion":"v1","spec":{"a":2,"b":1}}',
    );
  });

  it('does not modify its input', () => {
    const input = { b: { d: null, c: 1 }, a: [null, 1] };
    const copy = structuredClone(input);
    canonicalize(input);
    expect(input).toEqual(copy);
  });

  it('gives byte-identical JSON whatever the insertion order of keys', () => {
    const entries = fc.uniqueArray(fc.tuple(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.constant(null))), {
      selector: ([k]) => k,
      maxLength: 12,
    });
    const withPermutation = entries.chain((e) =>
      fc.tuple(fc.constant(e), fc.shuffledSubarray(e, { minLength: e.length, maxLength: e.length })),
    );
    fc.assert(
      fc.property(withPermutation, ([a, b]) => {
        expect(JSON.stringify(canonicalize({ x: Object.fromEntries(a) }, { keepNull: true }))).toBe(
          JSON.stringify(canonicalize({ x: Object.fromEntries(b) }, { keepNull: true })),
        );
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it('copies a __proto__ key as a plain member, leaving the prototype alone', () => {
    const out = canonicalize(JSON.parse('{"b":1,"__proto__":{"polluted":true}}')) as Record<string, unknown>;

    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'b']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"b":1}');
  });
});

describe('sortObjects', () => {
  it.each<{ name: string; input: ObjectIdentity[]; want: string[] }>([
    {
      name: 'orders by apiVersion first',
      input: [obj('kueue.x-k8s.io/v1beta2', 'ClusterQueue', 'a'), obj('apps/v1', 'Deployment', 'z')],
      want: ['apps/v1/Deployment//z', 'kueue.x-k8s.io/v1beta2/ClusterQueue//a'],
    },
    {
      name: 'then by kind',
      input: [
        obj('kueue.x-k8s.io/v1beta2', 'ResourceFlavor', 'a'),
        obj('kueue.x-k8s.io/v1beta2', 'LocalQueue', 'a', 'ns'),
        obj('kueue.x-k8s.io/v1beta2', 'ClusterQueue', 'a'),
      ],
      want: [
        'kueue.x-k8s.io/v1beta2/ClusterQueue//a',
        'kueue.x-k8s.io/v1beta2/LocalQueue/ns/a',
        'kueue.x-k8s.io/v1beta2/ResourceFlavor//a',
      ],
    },
    {
      name: 'then by namespace, cluster-scoped first',
      input: [obj('v1', 'X', 'a', 'b'), obj('v1', 'X', 'a', 'a'), obj('v1', 'X', 'a')],
      want: ['v1/X//a', 'v1/X/a/a', 'v1/X/b/a'],
    },
    {
      name: 'then by name, in code-unit order (upper case before lower, no locale)',
      input: [obj('v1', 'X', 'b'), obj('v1', 'X', 'B'), obj('v1', 'X', 'a-10d'), obj('v1', 'X', 'a-7d')],
      want: ['v1/X//B', 'v1/X//a-10d', 'v1/X//a-7d', 'v1/X//b'],
    },
    {
      name: 'missing apiVersion and kind sort first',
      input: [obj('v1', 'X', 'a'), obj(undefined, undefined, 'z')],
      want: ['///z', 'v1/X//a'],
    },
  ])('$name', ({ input, want }) => {
    const sorted = sortObjects(input);
    expect(
      sorted.map((o) => `${o.apiVersion ?? ''}/${o.kind ?? ''}/${o.metadata.namespace ?? ''}/${o.metadata.name}`),
    ).toEqual(want);
  });

  it('returns a new array and leaves its input alone', () => {
    const input = [obj('v1', 'X', 'b'), obj('v1', 'X', 'a')];
    const sorted = sortObjects(input);
    expect(sorted).not.toBe(input);
    expect(input.map((o) => o.metadata.name)).toEqual(['b', 'a']);
  });

  it('gives the same order for any input order', () => {
    const identity = fc.record({
      apiVersion: fc.constantFrom('v1', 'kueue.x-k8s.io/v1beta2'),
      kind: fc.constantFrom('A', 'B'),
      metadata: fc.record(
        { name: fc.string({ minLength: 1 }), namespace: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }) },
        { requiredKeys: ['name'] },
      ),
    });
    const objects = fc.uniqueArray(identity, {
      selector: (o) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`,
      maxLength: 10,
    });
    const withPermutation = objects.chain((o) =>
      fc.tuple(fc.constant(o), fc.shuffledSubarray(o, { minLength: o.length, maxLength: o.length })),
    );
    fc.assert(
      fc.property(withPermutation, ([a, b]) => {
        expect(sortObjects(b)).toEqual(sortObjects(a));
      }),
      { numRuns: 300, seed: 11 },
    );
  });

  it('compareObjects is zero only for the same identity', () => {
    expect(compareObjects(obj('v1', 'X', 'a', 'n'), obj('v1', 'X', 'a', 'n'))).toBe(0);
    expect(compareObjects(obj('v1', 'X', 'a', 'n'), obj('v1', 'X', 'a'))).toBeGreaterThan(0);
  });

  it.each([
    { name: 'orders upper case before lower case', input: ['b', 'B', 'a'], want: ['B', 'a', 'b'] },
    { name: 'orders digits before letters', input: ['x', '9', '10'], want: ['10', '9', 'x'] },
  ])('byText $name', ({ input, want }) => {
    expect([...input].sort(byText)).toEqual(want);
  });
});
