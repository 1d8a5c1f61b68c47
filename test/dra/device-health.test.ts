import { describe, expect, it } from 'vitest';
import { UNHEALTHY_TAINT_KEY, cardProblems, unhealthyTaint } from '../../src/dra/index.js';

const c = (index: number, uuid = `U${index}`) => ({ index, uuid });

describe('cardProblems', () => {
  it('flags cards that vanished or were replaced; healthy and new cards are fine', () => {
    expect(cardProblems([c(0), c(1), c(2), c(3, '')], [c(0), c(2, 'OTHER'), c(3, 'NOW-KNOWN'), c(4)], false)).toEqual(
      new Map([
        [1, 'missing'],
        [2, 'replaced'],
      ]),
    );
  });

  it('flags every published card when detection of the manufacturer failed', () => {
    expect(cardProblems([c(0), c(1)], [], true)).toEqual(
      new Map([
        [0, 'detection-failed'],
        [1, 'detection-failed'],
      ]),
    );
    expect(cardProblems([], [c(0)], true)).toEqual(new Map());
  });
});

describe('unhealthyTaint', () => {
  it('is NoSchedule, with the problem as value', () => {
    expect(UNHEALTHY_TAINT_KEY).toBe('gpustack.ai/unhealthy');
    expect(unhealthyTaint('missing')).toEqual({ key: UNHEALTHY_TAINT_KEY, value: 'missing', effect: 'NoSchedule' });
  });
});
