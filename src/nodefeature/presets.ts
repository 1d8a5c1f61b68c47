/**
 * @module Unit-resource presets of derived InstanceTypes (reference §9.2): the CPU and RAM that
 * one unit of an accelerated pool offers, chosen by product.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { normalizeName } from './names.js';

export interface UnitResources {
  readonly cpu: string;
  readonly ram: string;
}

const TIERS = {
  xlarge: { cpu: '12', ram: '192Gi' },
  large: { cpu: '12', ram: '128Gi' },
  medium: { cpu: '8', ram: '64Gi' },
  small: { cpu: '8', ram: '32Gi' },
  fallback: { cpu: '4', ram: '16Gi' },
} as const satisfies Record<string, UnitResources>;

export const CPU_UNIT_RESOURCES: UnitResources = { cpu: '1', ram: '2Gi' };
export const DEFAULT_LOCAL_STORAGE = '100Gi';

interface PresetEntry {
  /** Whole tokens that must appear in this order; a trailing `*` matches a token prefix. */
  readonly tokens: readonly string[];
  /** A further token that must be present (capacity refinement, e.g. `80gb`). */
  readonly by?: string;
  readonly tier: keyof typeof TIERS;
}

// More specific entries first: the first match wins.
const PRESETS: Partial<Record<ManufacturerName, readonly PresetEntry[]>> = {
  nvidia: [
    { tokens: ['gh200'], tier: 'xlarge' },
    { tokens: ['h200'], tier: 'xlarge' },
    { tokens: ['h100'], tier: 'xlarge' },
    { tokens: ['b200'], tier: 'xlarge' },
    { tokens: ['h800'], tier: 'xlarge' },
    { tokens: ['a100'], by: '80gb', tier: 'large' },
    { tokens: ['a800'], tier: 'large' },
    { tokens: ['a100'], tier: 'medium' },
    { tokens: ['a10g'], tier: 'medium' },
    { tokens: ['a10'], tier: 'medium' },
    { tokens: ['l40s'], tier: 'medium' },
    { tokens: ['l40'], tier: 'medium' },
    { tokens: ['rtx', '4090'], tier: 'medium' },
    { tokens: ['t4'], tier: 'small' },
    { tokens: ['l4'], tier: 'small' },
    { tokens: ['a30'], tier: 'small' },
  ],
  amd: [
    { tokens: ['mi325x'], tier: 'xlarge' },
    { tokens: ['mi300x'], tier: 'xlarge' },
    { tokens: ['mi250x'], tier: 'large' },
    { tokens: ['mi250'], tier: 'large' },
    { tokens: ['mi210'], tier: 'medium' },
  ],
  ascend: [
    { tokens: ['910b*'], tier: 'medium' },
    { tokens: ['910*'], tier: 'medium' },
    { tokens: ['310p*'], tier: 'small' },
  ],
};

function tokenMatches(pattern: string, token: string): boolean {
  return pattern.endsWith('*') ? token.startsWith(pattern.slice(0, -1)) : token === pattern;
}

function containsSequence(tokens: readonly string[], pattern: readonly string[]): boolean {
  for (let i = 0; i + pattern.length <= tokens.length; i++) {
    if (pattern.every((p, j) => tokenMatches(p, tokens[i + j] as string))) return true;
  }
  return false;
}

/**
 * Unit resources of a derived accelerated InstanceType; unmatched products get the fallback 4/16Gi.
 * @example unitResourcesFor('nvidia', 'NVIDIA H100 80GB HBM3') // { cpu: '12', ram: '192Gi' }
 */
export function unitResourcesFor(mfr: ManufacturerName, product: string): UnitResources {
  const tokens = normalizeName(product, { prefix: mfr }).split(/[-_.]/).filter(Boolean);
  if (tokens[0] === 'tesla') tokens.shift();
  const entry = (PRESETS[mfr] ?? []).find(
    (e) => containsSequence(tokens, e.tokens) && (e.by === undefined || tokens.includes(e.by)),
  );
  return TIERS[entry?.tier ?? 'fallback'];
}
