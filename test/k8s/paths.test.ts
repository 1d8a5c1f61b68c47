import { describe, expect, it } from 'vitest';
import { boundText, formatPath, summarizeIssues } from '../../src/k8s/index.js';

describe('boundText', () => {
  it.each([
    { text: 'short', max: 10, want: 'short' },
    { text: 'exactly-10', max: 10, want: 'exactly-10' },
    { text: 'eleven-char', max: 10, want: 'eleven-cha… (11 characters)' },
  ])('$text within $max → $want', ({ text, max, want }) => {
    expect(boundText(text, max)).toBe(want);
  });
});

describe('formatPath', () => {
  it.each<{ path: PropertyKey[]; want: string }>([
    { path: [], want: '(body)' },
    { path: ['related', 'Node.v1', 'gpu-1', 'metadata'], want: 'related.Node.v1.gpu-1.metadata' },
    { path: ['items', 2, 'metadata'], want: 'items[2].metadata' },
    { path: ['labels', 'k'.repeat(300)], want: `labels.${'k'.repeat(256)}… (300 characters)` },
  ])('$want', ({ path, want }) => {
    expect(formatPath(path)).toBe(want);
  });

  it('bounds a path of many segments as a whole', () => {
    const path = formatPath(Array.from({ length: 1000 }, () => 'segment'));

    expect(path).toMatch(/^segment\.segment\..*… \(7999 characters\)$/);
    expect(path.length).toBeLessThan(1100);
  });
});

describe('summarizeIssues', () => {
  const issue = (n: number) => ({ path: ['field', n], message: `problem ${n}` });

  it('names up to five issues under the root', () => {
    expect(summarizeIssues([issue(0), issue(1)], ['spec'])).toBe('spec.field[0]: problem 0; spec.field[1]: problem 1');
  });

  it('counts the rest', () => {
    expect(summarizeIssues(Array.from({ length: 8 }, (_, i) => issue(i)))).toMatch(
      /field\[4\]: problem 4; and 3 more$/,
    );
  });

  it('bounds each message', () => {
    expect(summarizeIssues([{ path: ['a'], message: 'm'.repeat(1000) }])).toBe(
      `a: ${'m'.repeat(256)}… (1000 characters)`,
    );
  });
});
