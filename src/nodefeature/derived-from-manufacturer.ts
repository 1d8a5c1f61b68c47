/** @module What the label algebra derives from a manufacturer's row of the table (`MANUFACTURERS`). */
import { MANUFACTURERS } from '../contracts/index.js';
import type { ManufacturerName } from '../k8s/index.js';
import { CREDITS_PREFIX } from './constants.js';

/**
 * The per-card value of `.sliced.cores-percentage`: slices × 100 for overcommit vendors
 * (nvidia 12800, ascend 6300), else 100.
 */
export function coresPercentagePerCard(mfr: ManufacturerName): number {
  const m = MANUFACTURERS[mfr];
  return m.overcommit ? m.slices * 100 : 100;
}

/** `credits.gpustack.ai/<mfr>`, the only resource a device ClusterQueue covers. */
export function creditsResource(mfr: ManufacturerName): string {
  // "credits.gpustack.ai/nvidia"
  return `${CREDITS_PREFIX}${mfr}`;
}
