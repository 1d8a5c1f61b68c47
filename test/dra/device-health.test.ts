import { describe, expect, it } from 'vitest';
import { UNHEALTHY_TAINT_KEY, cardProblems, deviceTaints } from '../../src/dra/index.js';

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

describe('deviceTaints', () => {
  it('taints both devices of a problem card NoSchedule, with the problem as value', () => {
    const taint = { key: UNHEALTHY_TAINT_KEY, value: 'missing', effect: 'NoSchedule' };
    expect(UNHEALTHY_TAINT_KEY).toBe('gpustack.ai/unhealthy');
    expect(deviceTaints(new Map([[3, 'missing']]))).toEqual(
      new Map([
        ['card-3', [taint]],
        ['card-3-shared', [taint]],
      ]),
    );
  });
});
