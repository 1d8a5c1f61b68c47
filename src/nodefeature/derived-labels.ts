/**
 * @module Device labels node-profile derives from a vendor's labels (setting
 * `deviceLabelSources`), and which of them are its own. Where it derived them, node-profile owns
 * those keys: it records them with their values in the annotation
 * `feature.gpustack.ai/derived-device-labels`, removes (`null`) the ones it no longer derives, and
 * never touches a key someone else wrote. A key is ours only while its value is the one we
 * recorded and neither our agent (annotation `feature.gpustack.ai/agent-labels`, node-labels
 * mode) nor NFD (annotation `nfd.node.kubernetes.io/feature-labels`: our agent's NodeFeature or
 * feature file) declares it. A manufacturer with any device label that is not ours is the
 * agent's: nothing is derived for it.
 */
import type { DeviceLabelSource, ManufacturerName } from '../k8s/index.js';
import {
  ACCELERATABLE_PREFIX,
  AGENT_LABELS_ANNOTATION,
  DERIVED_LABELS_ANNOTATION,
  NFD_DEFAULT_LABEL_PREFIX,
  NFD_FEATURE_LABELS_ANNOTATION,
} from './constants.js';
import { constructModelLabels } from './labels.js';
import { MANUFACTURERS } from '../contracts/index.js';
import { VENDOR_LABEL_SOURCES } from './vendor-labels.js';

export interface DerivationInput {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly capacity?: Readonly<Record<string, string | number>> | undefined;
}

export interface DerivationOptions {
  /** The setting `deviceLabelSources`, in order; `Agent` (ours) is never derived from. */
  readonly sources: readonly DeviceLabelSource[];
  readonly manufacturers: ReadonlySet<ManufacturerName>;
  /** Device resource per manufacturer (settings override); absent = the manufacturer table's. */
  readonly deviceResources?: Readonly<Partial<Record<ManufacturerName, string>>> | undefined;
  /** Derive only on managed nodes; elsewhere every derived label of ours goes. */
  readonly managed: boolean;
}

export interface Derivation {
  /** Derived labels to set, and `null` for ours that are no longer derived. */
  readonly labels: Readonly<Record<string, string | null>>;
  /** New value of the record annotation; `null` removes it; `undefined` leaves the node alone. */
  readonly record: string | null | undefined;
}

/**
 * True for a device label of `mfr` that a device-label writer publishes: `…/<mfr>`, `…/<mfr>.<x>`,
 * `…/<mfr>-<model>[.<x>]`, but no `.sliced.*` (node-profile's capacity labels, an admin's opt-in).
 */
export function isDeviceLabelOf(key: string, mfr: ManufacturerName): boolean {
  const start = ACCELERATABLE_PREFIX.length;
  // Compared in place (no sliced name, no `${mfr}.` per call): run for every device label of every node.
  if (!key.startsWith(ACCELERATABLE_PREFIX) || !key.startsWith(mfr, start) || key.includes('.sliced.')) return false;
  const next = key.charCodeAt(start + mfr.length);
  return Number.isNaN(next) || next === DOT || next === DASH;
}

const DOT = '.'.charCodeAt(0);
const DASH = '-'.charCodeAt(0);

/** The labels recorded in our annotation; `{}` when there is none or it is not ours to read. */
export function readDerivedRecord(text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  const entries = Object.entries(value);
  return entries.every(([k, v]) => k.startsWith(ACCELERATABLE_PREFIX) && typeof v === 'string')
    ? Object.fromEntries(entries)
    : {};
}

/** The record annotation's value: the derived labels as JSON, keys sorted (one text per set). */
export function formatDerivedRecord(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))));
}

function listAnnotation(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
}

/** Label keys our agent (node-labels mode) or NFD (NodeFeature, feature file) declares as theirs. */
export function declaredByOthers(annotations: Readonly<Record<string, string>>): ReadonlySet<string> {
  const nfd = listAnnotation(annotations[NFD_FEATURE_LABELS_ANNOTATION]).map((k) =>
    k.includes('/') ? k : `${NFD_DEFAULT_LABEL_PREFIX}${k}`,
  );
  return new Set([...listAnnotation(annotations[AGENT_LABELS_ANNOTATION]), ...nfd]);
}

function deriveFor(mfr: ManufacturerName, node: DerivationInput, options: DerivationOptions): Record<string, string> {
  for (const source of options.sources) {
    if (source === 'Agent' || VENDOR_LABEL_SOURCES[source].manufacturer !== mfr) continue;
    const models = VENDOR_LABEL_SOURCES[source].derive({
      labels: node.labels,
      capacity: node.capacity,
      deviceResource: options.deviceResources?.[mfr] ?? MANUFACTURERS[mfr].deviceResource,
    });
    if (models.length > 0) return constructModelLabels(models);
  }
  return {};
}

/** The enabled manufacturers, sorted, that a vendor source in `sources` describes. */
function derivableManufacturers(options: DerivationOptions): ManufacturerName[] {
  const described = new Set<ManufacturerName>();
  for (const source of options.sources)
    if (source !== 'Agent' && options.manufacturers.has(VENDOR_LABEL_SOURCES[source].manufacturer))
      described.add(VENDOR_LABEL_SOURCES[source].manufacturer);
  return [...described].sort();
}

/**
 * The derived device labels of a node and what becomes of the ones derived before.
 * @example deriveDeviceLabels({ labels: gfdLabels }, { sources: ['Agent', 'NVIDIAGFD'], manufacturers, managed: true })
 *   // { labels: { 'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3': 'true', … }, record: '{…}' }
 */
export function deriveDeviceLabels(node: DerivationInput, options: DerivationOptions): Derivation {
  const { labels } = node;
  const annotations = node.annotations ?? {};
  const recorded = readDerivedRecord(annotations[DERIVED_LABELS_ANNOTATION]);
  const recordedKeys = Object.keys(recorded);
  // What others declare matters only for keys we recorded (NFD's list names every label it wrote: skip it when none).
  const declared = recordedKeys.length > 0 ? declaredByOthers(annotations) : new Set<string>();
  const ours = new Set(recordedKeys.filter((k) => labels[k] === recorded[k] && !declared.has(k)));
  const derived: Record<string, string> = {};
  // Only a manufacturer that a listed vendor source describes can have labels derived (deriveFor):
  // the others need no look at the node's labels.
  const derivable = options.managed ? derivableManufacturers(options) : [];
  if (derivable.length > 0) {
    // Only these keys can be device labels (isDeviceLabelOf): one pass over the node's labels, not one per manufacturer.
    const candidates = Object.keys(labels).filter((k) => k.startsWith(ACCELERATABLE_PREFIX));
    for (const mfr of derivable) {
      // Any device label of this manufacturer that is not ours: the agent publishes it, hands off.
      if (candidates.some((k) => isDeviceLabelOf(k, mfr) && !ours.has(k))) continue;
      Object.assign(derived, deriveFor(mfr, node, options));
    }
  }
  const out: Record<string, string | null> = { ...derived };
  for (const key of ours) if (derived[key] === undefined) out[key] = null;
  const hasRecord = annotations[DERIVED_LABELS_ANNOTATION] !== undefined;
  const record = Object.keys(derived).length > 0 ? formatDerivedRecord(derived) : hasRecord ? null : undefined;
  return { labels: out, record };
}
