import { describe, expect, it } from 'vitest';
import { type LabelSelector, matchesSelector } from '../../src/k8s/index.js';

describe('matchesSelector', () => {
  it.each<{ name: string; input: { selector: LabelSelector; labels?: Record<string, string> }; want: boolean }>([
    { name: 'an empty selector matches everything', input: { selector: {}, labels: { a: '1' } }, want: true },
    { name: 'an empty selector matches an object without labels', input: { selector: {} }, want: true },
    {
      name: 'matchLabels matches equal values',
      input: { selector: { matchLabels: { team: 'a' } }, labels: { team: 'a', x: 'y' } },
      want: true,
    },
    {
      name: 'matchLabels rejects a different value',
      input: { selector: { matchLabels: { team: 'a' } }, labels: { team: 'b' } },
      want: false,
    },
    { name: 'matchLabels rejects a missing key', input: { selector: { matchLabels: { team: 'a' } } }, want: false },
    {
      name: 'matchLabels needs every pair',
      input: { selector: { matchLabels: { a: '1', b: '2' } }, labels: { a: '1' } },
      want: false,
    },
    {
      name: 'matchLabels with an empty value matches an empty label',
      input: { selector: { matchLabels: { a: '' } }, labels: { a: '' } },
      want: true,
    },
    {
      name: 'In matches a listed value',
      input: {
        selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['a', 'b'] }] },
        labels: { env: 'b' },
      },
      want: true,
    },
    {
      name: 'In rejects an unlisted value',
      input: { selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['a'] }] }, labels: { env: 'c' } },
      want: false,
    },
    {
      name: 'In rejects a missing key',
      input: { selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['a'] }] }, labels: {} },
      want: false,
    },
    {
      name: 'NotIn matches a missing key',
      input: { selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] }, labels: {} },
      want: true,
    },
    {
      name: 'NotIn matches an unlisted value',
      input: {
        selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] },
        labels: { env: 'b' },
      },
      want: true,
    },
    {
      name: 'NotIn rejects a listed value',
      input: {
        selector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['a'] }] },
        labels: { env: 'a' },
      },
      want: false,
    },
    {
      name: 'Exists matches a present key with an empty value',
      input: { selector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] }, labels: { k: '' } },
      want: true,
    },
    {
      name: 'Exists rejects a missing key',
      input: { selector: { matchExpressions: [{ key: 'k', operator: 'Exists' }] }, labels: {} },
      want: false,
    },
    {
      name: 'DoesNotExist matches a missing key',
      input: { selector: { matchExpressions: [{ key: 'k', operator: 'DoesNotExist' }] } },
      want: true,
    },
    {
      name: 'DoesNotExist rejects a present key',
      input: { selector: { matchExpressions: [{ key: 'k', operator: 'DoesNotExist' }] }, labels: { k: 'v' } },
      want: false,
    },
    {
      name: 'an inherited property is not a label',
      input: { selector: { matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, labels: {} },
      want: false,
    },
    {
      name: 'matchLabels and matchExpressions are ANDed',
      input: {
        selector: { matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'DoesNotExist' }] },
        labels: { a: '1', b: '2' },
      },
      want: false,
    },
    {
      name: 'a namespace selector excluding system namespaces (kubernetes.io/metadata.name NotIn)',
      input: {
        selector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'gpustack-system'] },
          ],
        },
        labels: { 'kubernetes.io/metadata.name': 'default' },
      },
      want: true,
    },
  ])('$name', ({ input, want }) => {
    expect(matchesSelector(input.selector, input.labels)).toBe(want);
  });
});
