/**
 * @module From a DetectResult to the labels the agent publishes, and which labels it owns.
 * A vendor that fails (anything but "library not found") and yields no card keeps the labels
 * published for it before: a driver hiccup must not pull a node out of its pools. The same holds
 * for the NVLink clique label while NVIDIA's detection reports any error.
 */
import {
  ACCELERATABLE_LABEL,
  ACCELERATABLE_PREFIX,
  AGENT_CLIQUE_LABEL,
  MAX_CARD_MEMORY_MIB,
  SLICED_SUFFIXES,
  acceleratorKeyManufacturer,
  constructDeviceLabels,
} from '../nodefeature/index.js';
import type { SliceCard } from '../dra/index.js';
import { isLabelValue } from '../k8s/index.js';
import type { DetectResult, Device, DeviceErrorEntry } from '../../native/index.js';

export type Labels = Record<string, string>;

/**
 * True for the keys the agent owns: `feature.gpustack.ai/acceleratable`, the device labels (not
 * node-profile's `.sliced.*`) and `topology.gpustack.ai/nvlink-clique`.
 */
export function isAgentLabel(key: string): boolean {
  if (key === ACCELERATABLE_LABEL || key === AGENT_CLIQUE_LABEL) return true;
  return key.startsWith(ACCELERATABLE_PREFIX) && !SLICED_SUFFIXES.some((s) => key.endsWith(s));
}

function manufacturerOfLabel(key: string): string | undefined {
  const name = key.slice(ACCELERATABLE_PREFIX.length);
  // "<mfr>", "<mfr>.driver-version", "<mfr>-<model>.count" → "<mfr>"
  const bare = name.split('.')[0] ?? '';
  return acceleratorKeyManufacturer(bare) ?? bare;
}

/** The most cores we believe a card has; beyond it the figure is treated as unknown. */
const MAX_CORES = 10_000_000;

/** A C string as it should have been read: cut at the first NUL (an unterminated buffer leaks garbage after it). */
function cString(text: string | undefined): string | undefined {
  return typeof text === 'string' ? text.split('\u0000')[0] : undefined;
}

/**
 * Screens what the vendor libraries answered before it becomes labels: a card with non-finite,
 * negative or absurd memory (> 16 TiB) is dropped, implausible cores become 0 (unknown), both with
 * an error entry; strings are cut at the first NUL. Idempotent.
 */
export function screenDetection(result: DetectResult): DetectResult {
  const devices: Device[] = [];
  const errors: DeviceErrorEntry[] = [...result.errors];
  for (const device of result.devices) {
    const memory = device.memoryMiB;
    if (typeof memory !== 'number' || !Number.isFinite(memory) || memory < 0 || memory > MAX_CARD_MEMORY_MIB) {
      errors.push({
        manufacturer: device.manufacturer,
        code: 'CallFailed',
        message: `device ${device.index}: implausible memory ${memory} MiB; card skipped`,
      });
      continue;
    }
    let cores = typeof device.cores === 'number' ? Math.trunc(device.cores) : Number.NaN;
    if (!Number.isFinite(cores) || cores < 0 || cores > MAX_CORES) {
      errors.push({
        manufacturer: device.manufacturer,
        code: 'CallFailed',
        message: `device ${device.index}: implausible cores ${device.cores}; reported as 0`,
      });
      cores = 0;
    }
    devices.push({
      ...device,
      cores,
      product: cString(device.product) ?? '',
      family: cString(device.family),
      computeCapability: cString(device.computeCapability),
      driverVersion: cString(device.driverVersion),
      runtimeVersion: cString(device.runtimeVersion),
    });
  }
  return { devices, errors };
}

/**
 * The cards a detection publishes as ResourceSlices: every card, strings cut at the first NUL as
 * for the labels; memory as reported, since the slice builder publishes a card with implausible
 * memory without it where the labels drop the card.
 */
export function sliceCardsOf(result: DetectResult): SliceCard[] {
  return result.devices.map((d) => ({
    manufacturer: d.manufacturer,
    index: d.index,
    product: cString(d.product) ?? '',
    memoryMiB: d.memoryMiB,
    uuid: cString(d.uuid),
    family: cString(d.family),
    computeCapability: cString(d.computeCapability),
    driverVersion: cString(d.driverVersion),
    pciBusId: cString(d.pciBusId),
    numaNode: d.numaNode,
  }));
}

/** Manufacturers whose detection failed (anything but "library not found") and found no card: they keep what they published. */
export function failedManufacturers(result: DetectResult): Set<string> {
  const found = new Set<string>(result.devices.map((d) => d.manufacturer));
  return new Set(
    result.errors.filter((e) => e.code !== 'LibraryNotFound' && !found.has(e.manufacturer)).map((e) => e.manufacturer),
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_CLIQUE_ID = 0xffff_ffff;

/**
 * `<cluster UUID>.<clique id>` of one card, the form GPU Feature Discovery gives
 * `nvidia.com/gpu.clique`; undefined for a card without fabric info or with one no label can carry
 * (the addon formats the UUID, so that is a library answering garbage, screened like memory).
 */
function cliqueOf(device: Device): string | undefined {
  const fabric = device.fabric;
  if (fabric === undefined || typeof fabric.clusterUuid !== 'string' || !UUID.test(fabric.clusterUuid))
    return undefined;
  const id = fabric.cliqueId;
  if (!Number.isInteger(id) || id < 0 || id > MAX_CLIQUE_ID) return undefined;
  const value = `${fabric.clusterUuid}.${id}`;
  // At most 36 + 1 + 10 = 47 characters: a label value by construction, checked all the same.
  return isLabelValue(value) ? value : undefined;
}

/**
 * The node's NVLink clique (`topology.gpustack.ai/nvlink-clique`): the one value every NVIDIA card
 * reports; none when a card reports no fabric info (not an NVLink fabric, a registration in
 * progress or failed) or two cards disagree. While NVIDIA's detection reports an error (the library
 * failed, or a card could not be read) the previous value is kept, present or absent: a card we
 * cannot read might disagree, and a flapping level label would move the node between profiles.
 */
function nvlinkClique(result: DetectResult, previous: Labels | undefined): string | undefined {
  if (result.errors.some((e) => e.manufacturer === 'nvidia' && e.code !== 'LibraryNotFound'))
    return previous?.[AGENT_CLIQUE_LABEL];
  const cards = result.devices.filter((d) => d.manufacturer === 'nvidia');
  if (cards.length === 0) return undefined;
  const values = new Set(cards.map(cliqueOf));
  const [value] = values;
  return values.size === 1 ? value : undefined;
}

/**
 * The labels to publish for one detection, carrying over those of vendors that failed outright,
 * and the NVLink clique where the NVIDIA cards agree on one.
 */
export function labelsFromDetection(detected: DetectResult, previous: Labels | undefined): Labels {
  const result = screenDetection(detected);
  const labels = constructDeviceLabels(result.devices);
  const clique = nvlinkClique(result, previous);
  if (clique !== undefined) labels[AGENT_CLIQUE_LABEL] = clique;
  const failed = failedManufacturers(result);
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
