// native/ is a leaf (it imports nothing from src/), so the addon keeps its own wire type for a
// card; this keeps it a `Card`, so the agent hands detections on to the labels and the slices as
// they are. A field the addon adds or retypes fails the type check here first.
import { describe, expectTypeOf, it } from 'vitest';
import type { Device, Partitioning } from '../../native/index.js';
import type { Card, CardPartitioning } from '../../src/contracts/index.js';

describe('the card', () => {
  it("the addon's Device is a Card, and its partitioning a CardPartitioning", () => {
    expectTypeOf<Device>().toExtend<Card>();
    expectTypeOf<Partitioning>().toEqualTypeOf<CardPartitioning>();
    expectTypeOf<keyof Device>().toEqualTypeOf<keyof Card>();
  });
});
