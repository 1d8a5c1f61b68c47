import { describe, expect, it } from 'vitest';
import { buildCondition, rfc3339Seconds, type Condition, type ConditionInput } from '../../src/k8s/index.js';

const NOW = '2025-01-02T03:04:05Z';
const BEFORE = '2024-12-31T00:00:00Z';
const READY: ConditionInput = { type: 'Ready', status: 'True', reason: 'Synced', message: '3 pools' };

describe('buildCondition', () => {
  it.each<{ name: string; input: { condition: ConditionInput; previous: Condition[] | undefined }; want: string }>([
    {
      name: 'an unchanged condition keeps its old time',
      input: { condition: READY, previous: [{ ...READY, lastTransitionTime: BEFORE }] },
      want: BEFORE,
    },
    { name: 'a first condition takes now', input: { condition: READY, previous: undefined }, want: NOW },
    {
      name: 'no previous condition of this type takes now',
      input: {
        condition: READY,
        previous: [
          { type: 'Degraded', status: 'True', reason: 'Synced', message: '3 pools', lastTransitionTime: BEFORE },
        ],
      },
      want: NOW,
    },
    {
      name: 'a status change takes now',
      input: { condition: READY, previous: [{ ...READY, status: 'False', lastTransitionTime: BEFORE }] },
      want: NOW,
    },
    {
      name: 'a reason change with the same status keeps the old time (it marks status transitions)',
      input: { condition: READY, previous: [{ ...READY, reason: 'Pending', lastTransitionTime: BEFORE }] },
      want: BEFORE,
    },
    {
      name: 'a message change with the same status keeps the old time',
      input: { condition: READY, previous: [{ ...READY, message: '2 pools', lastTransitionTime: BEFORE }] },
      want: BEFORE,
    },
    {
      name: 'a missing old message equals an empty one',
      input: {
        condition: { ...READY, message: '' },
        previous: [{ type: 'Ready', status: 'True', reason: 'Synced', lastTransitionTime: BEFORE }],
      },
      want: BEFORE,
    },
    {
      name: 'an old condition without a time takes now',
      input: { condition: READY, previous: [{ ...READY }] },
      want: NOW,
    },
    {
      name: 'extra old fields (observedGeneration) do not count as a change',
      input: { condition: READY, previous: [{ ...READY, observedGeneration: 4, lastTransitionTime: BEFORE }] },
      want: BEFORE,
    },
  ])('$name', ({ input, want }) => {
    const got = buildCondition(input.condition, input.previous, NOW);
    expect(got).toEqual({ ...input.condition, lastTransitionTime: want });
  });

  it('writes exactly type, status, reason, message and lastTransitionTime', () => {
    const got = buildCondition(
      READY,
      [{ ...READY, observedGeneration: 4, lastTransitionTime: BEFORE, extra: 'x' } as Condition],
      NOW,
    );
    expect(Object.keys(got).sort()).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
  });
});

describe('rfc3339Seconds', () => {
  it.each([
    ['2025-01-02T03:04:05.999Z', '2025-01-02T03:04:05Z'],
    ['2025-01-02T03:04:05.000Z', '2025-01-02T03:04:05Z'],
    ['1969-12-31T23:59:59.500Z', '1969-12-31T23:59:59Z'],
  ])('%s is stored as %s (floored to the second)', (iso, want) => {
    expect(rfc3339Seconds(new Date(iso))).toBe(want);
  });
});
