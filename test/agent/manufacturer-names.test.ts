// native/ is a leaf (it imports nothing from src/), so it keeps its own list of the nine
// manufacturer names; the agent hands the addon's names to the label algebra unchanged.
import { describe, expect, it } from 'vitest';
import { MANUFACTURER_NAMES as ADDON_NAMES } from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';

describe('manufacturer names', () => {
  it('the addon and the label algebra name the same nine manufacturers, in the same order', () => {
    expect([...ADDON_NAMES]).toEqual([...MANUFACTURER_NAMES]);
  });
});
