/** @module Card memory as a label (`80Gi`) and back to MiB (reference §3.5). */

const UNITS: readonly [string, number][] = [
  ['Ei', 1024 ** 4],
  ['Pi', 1024 ** 3],
  ['Ti', 1024 ** 2],
  ['Gi', 1024],
  ['Mi', 1],
];
const MEMORY_LABEL_PATTERN = /^(\d{1,12})(Mi|Gi|Ti|Pi|Ei)$/;

/**
 * Renders MiB at the largest binary unit not above the value, rounded half-up.
 * @example formatMemoryMiB(81559) // '80Gi'
 * @example formatMemoryMiB(143771) // '140Gi'
 */
export function formatMemoryMiB(mib: number): string {
  const value = Math.max(0, Math.round(mib));
  if (value === 0) return '0';
  for (const [unit, scale] of UNITS) {
    if (value >= scale) return `${Math.floor((value + scale / 2) / scale)}${unit}`;
  }
  return `${value}Mi`;
}

/**
 * MiB of a `.memory` label value, or `undefined` when it is not one we could have written.
 * Downstream capacity uses this rounded value, not the detector's exact MiB (H100 → 81920).
 * @example parseMemoryLabel('80Gi') // 81920
 */
export function parseMemoryLabel(text: string): number | undefined {
  const match = MEMORY_LABEL_PATTERN.exec(text);
  if (!match) return undefined;
  const scale = UNITS.find(([unit]) => unit === match[2])?.[1] ?? 1;
  const mib = Number(match[1]) * scale;
  return mib > 0 && Number.isSafeInteger(mib) ? mib : undefined;
}
