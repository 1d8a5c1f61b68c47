/**
 * @module From a DetectResult to the labels the agent publishes, and which labels it owns.
 * A vendor that fails (anything but "library not found") and yields no card keeps the labels
 * published for it before: a driver hiccup must not pull a node out of its pools.
 */
import {
  ACCELERATABLE_LABEL, ACCELERATABLE_PREFIX, SLICED_SUFFIXES, acceleratorKeyManufacturer, constructDeviceLabels,
} from '../nodefeature/index.js';
import type { DetectResult } from '../../native/index.js';

export type Labels = Record<string, string>;

/** True for the keys the agent owns: `feature.gpustack.ai/acceleratable` and the device labels (not node-profile's `.sliced.*`). */
export function isAgentLabel(key: string): boolean {
  if (key === ACCELERATABLE_LABEL) return true;
  return key.startsWith(ACCELERATABLE_PREFIX) && !SLICED_SUFFIXES.some((s) => key.endsWith(s));
}

function manufacturerOfLabel(key: string): string | undefined {
  const name = key.slice(ACCELERATABLE_PREFIX.length);
  // "<mfr>", "<mfr>.driver-version", "<mfr>-<model>.count" → "<mfr>"
  const bare = name.split('.')[0] ?? '';
  return acceleratorKeyManufacturer(bare) ?? bare;
}

/** The labels to publish for one detection, carrying over those of vendors that failed outright. */
export function labelsFromDetection(result: DetectResult, previous: Labels | undefined): Labels {
  const labels = constructDeviceLabels(result.devices);
  const found = new Set(result.devices.map((d) => d.manufacturer));
  const failed = new Set(result.errors.filter((e) => e.code !== 'LibraryNotFound' && !found.has(e.manufacturer)).map((e) => e.manufacturer as string));
  if (failed.size === 0 || previous === undefined) return labels;
  let carried = false;
  for (const [key, value] of Object.entries(previous)) {
    if (!key.startsWith(ACCELERATABLE_PREFIX)) continue;
    const mfr = manufacturerOfLabel(key);
    if (mfr !== undefined && failed.has(mfr)) {
      labels[key] = value;
      carried = true;
    }
  }
  if (carried) labels[ACCELERATABLE_LABEL] = 'true';
  return labels;
}

/** Order-insensitive equality of two label sets. */
export function sameLabels(a: Labels | undefined, b: Labels | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
