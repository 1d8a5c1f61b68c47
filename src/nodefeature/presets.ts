/**
 * @module Unit-resource presets of derived InstanceTypes (docs/architecture.md#modelled-system): the CPU and RAM that
 * one unit (one whole card) of an accelerated pool offers, chosen by product. The table is data,
 * kept row for row with the modelled system's preset table (its `unit_resources_preset.yaml` and
 * the reference page that gives each row's anchor configuration); a comment names each row's source.
 */
import type { ManufacturerName } from '../k8s/index.js';
import { normalizeName } from './names.js';

export interface UnitResources {
  readonly cpu: string;
  readonly ram: string;
}

/** The tier ladder. Above 48 GiB of VRAM the CPU stops growing at 12 (the modelled system's rule). */
export const UNIT_TIERS = {
  fallback: { cpu: '4', ram: '16Gi' },
  small: { cpu: '8', ram: '32Gi' },
  medium: { cpu: '8', ram: '64Gi' },
  large: { cpu: '12', ram: '128Gi' },
  xlarge: { cpu: '12', ram: '192Gi' },
} as const satisfies Record<string, UnitResources>;
export type UnitTier = keyof typeof UNIT_TIERS;

export const CPU_UNIT_RESOURCES: UnitResources = { cpu: '1', ram: '2Gi' };
export const DEFAULT_LOCAL_STORAGE = '100Gi';

export interface UnitPreset {
  /** Leading tokens of the normalised product, joined by `-` (`rtx-4090`, `910_9362`). */
  readonly prefix: string;
  readonly tier: UnitTier;
  /** Refinements: the first listed token present anywhere in the product wins (capacity variants). */
  readonly by?: readonly { readonly token: string; readonly tier: UnitTier }[];
}

/**
 * Leading marketing words removed (repeatedly) before matching: `Tesla T4` is a `t4`, `AMD Instinct
 * MI300X` an `mi300x`. `moore-threads` and `t-head` are multi-word brands that the manufacturer
 * word does not clear (`Moore Threads MTT S4000` under `mthreads`).
 */
export const UNIT_PRESET_STRIP: readonly string[] = [
  'tesla', // upstream preset table
  'geforce', // upstream preset table
  'quadro', // upstream preset table
  'radeon', // upstream preset table
  'instinct', // upstream preset table
  'moore-threads', // ours: the multi-word brand the upstream table header says needs a strip sequence
  't-head', // ours: same reason ("T-Head PPU-ZW810E" under "thead")
];

// Sources: "upstream table" = the modelled system's unit_resources_preset.yaml; "upstream docs" =
// its instance-type unit-resources reference, which lists rows the table file does not yet carry.
// The anchor after the source is the published host configuration the tier was taken from.
export const UNIT_PRESET_TABLE: Readonly<Record<ManufacturerName, readonly UnitPreset[]>> = {
  nvidia: [
    { prefix: 'b200', tier: 'xlarge' }, // upstream table; DGX B200 14c/256g per card
    { prefix: 'b300', tier: 'xlarge' }, // upstream table; 8-card B300 hosts 16–24c/512g
    { prefix: 'gb200', tier: 'xlarge' }, // upstream table; GB200 NVL72 36c/240g
    { prefix: 'gb300', tier: 'xlarge' }, // upstream table; GB300 NVL72 36c/240g
    { prefix: 'h100', tier: 'xlarge' }, // upstream table; DGX H100 14c/256g (recorded 12/192Gi)
    { prefix: 'h200', tier: 'xlarge' }, // upstream table; DGX H200 14c/256g
    { prefix: 'h800', tier: 'xlarge' }, // upstream table; 8-card H800 hosts 24c/256g
    { prefix: 'gh200', tier: 'xlarge' }, // upstream table; GH200 superchip 72c/480g
    { prefix: 'gb10', tier: 'small' }, // upstream table; DGX Spark 20c/128g unified memory
    {
      prefix: 'a100',
      tier: 'medium', // upstream table; a bare A100 is never oversized
      by: [
        { token: '80gb', tier: 'large' }, // upstream table; 80 GB A100 hosts 12–16c/125–170g
        { token: '40gb', tier: 'medium' }, // upstream table; 40 GB A100 hosts 12c/85–112g
      ],
    },
    {
      prefix: 'a800',
      tier: 'medium', // upstream table
      by: [
        { token: '80gb', tier: 'large' }, // upstream table; 80 GB A800 hosts 16c/128g
        { token: '40gb', tier: 'medium' }, // upstream table; mirrors A100 40GB
      ],
    },
    { prefix: 'a30', tier: 'small' }, // upstream table; 8c/32g cloud packages
    { prefix: 'a10', tier: 'medium' }, // upstream table; 4-card A10 hosts 24c/96g
    { prefix: 'a10g', tier: 'medium' }, // upstream table; recorded 8/64Gi (g5 24c/96g)
    { prefix: 'l4', tier: 'small' }, // upstream table; 12c/48g
    { prefix: 'l40', tier: 'medium' }, // upstream table; 16c/128g
    { prefix: 'l40s', tier: 'large' }, // upstream table; 24c/192g and 16c/128g hosts
    { prefix: 't4', tier: 'small' }, // upstream table; recorded 8/32Gi
    {
      prefix: 'v100',
      tier: 'small', // upstream table; 8c/32–61g
      by: [{ token: '32gb', tier: 'medium' }], // upstream table; 32 GB V100 hosts 12c/96g
    },
    { prefix: 'v100s', tier: 'small' }, // upstream table; 8–9c/40–64g
    { prefix: 'rtx-pro-4500', tier: 'small' }, // upstream table; 12c/54g workstation packages
    { prefix: 'rtx-6000', tier: 'small' }, // upstream table; also Quadro RTX 6000, 8–14c/46–64g
    { prefix: 'rtx-4000', tier: 'small' }, // upstream table; 8c/32g
    { prefix: 'rtx-a6000', tier: 'small' }, // upstream table; 8c/45g
    { prefix: 'rtx-a5000', tier: 'small' }, // upstream table; 8c/45g
    { prefix: 'rtx-a4000', tier: 'small' }, // upstream table; 8c/45g
    { prefix: 'rtx-3090', tier: 'small' }, // upstream table; 8c/32g
    { prefix: 'rtx-4090', tier: 'medium' }, // upstream table; also 4090D, 10–16c/64g
    { prefix: 'rtx-5090', tier: 'medium' }, // upstream table; 14c/115g
  ],
  ascend: [
    { prefix: '310p', tier: 'medium' }, // upstream table; 310P hosts 16–18c/72–128g
    { prefix: '310p1', tier: 'medium' }, // upstream table
    { prefix: '310p2', tier: 'medium' }, // upstream table
    { prefix: '310p3', tier: 'medium' }, // upstream table
    { prefix: '310p4', tier: 'medium' }, // upstream table
    { prefix: '310p5', tier: 'medium' }, // upstream table
    { prefix: '310p7', tier: 'medium' }, // upstream table
    { prefix: '910b', tier: 'medium' }, // upstream table; held below its VRAM band: 8 cards on 512g hosts
    { prefix: '910b1', tier: 'medium' }, // upstream table
    { prefix: '910b2', tier: 'medium' }, // upstream table
    { prefix: '910b2c', tier: 'medium' }, // upstream table
    { prefix: '910b3', tier: 'medium' }, // upstream table
    { prefix: '910b4', tier: 'medium' }, // upstream table; also "910B4-1"
    { prefix: '910_9362', tier: 'xlarge' }, // upstream table; Atlas 800T A3 32c/256g
    { prefix: '910_9363', tier: 'xlarge' }, // upstream docs; Atlas 800T A3
    { prefix: '910_9372', tier: 'xlarge' }, // upstream table; Atlas 800T A3
    { prefix: '910_9381', tier: 'xlarge' }, // upstream table; Atlas 800T A3
    { prefix: '910_9382', tier: 'xlarge' }, // upstream table; Atlas 800T A3
    { prefix: '910_9391', tier: 'xlarge' }, // upstream table; Atlas 800T A3
    { prefix: '910_9392', tier: 'xlarge' }, // upstream table; Atlas 800T A3
    { prefix: '950', tier: 'xlarge' }, // upstream docs; no host published, placed by its VRAM band
    { prefix: '950pr', tier: 'xlarge' }, // upstream docs; 128 GB
    { prefix: '950dt', tier: 'xlarge' }, // upstream docs; 144 GB
  ],
  amd: [
    { prefix: 'mi300x', tier: 'xlarge' }, // upstream table; 12–24c/231–288g
    { prefix: 'mi308x', tier: 'xlarge' }, // upstream table; inherited from MI300X
    { prefix: 'mi325x', tier: 'xlarge' }, // upstream table; 16c/288–384g
    { prefix: 'mi350x', tier: 'xlarge' }, // upstream table; 16c/384g
    { prefix: 'mi355x', tier: 'xlarge' }, // upstream table; 16c/384g
    { prefix: 'mi250', tier: 'medium' }, // upstream table
    { prefix: 'mi250x', tier: 'medium' }, // upstream table; 4 cards on 256g standard nodes
    { prefix: 'mi210', tier: 'large' }, // upstream table; 16c/128g
  ],
  cambricon: [
    { prefix: 'mlu370', tier: 'medium' }, // upstream table; 16c/64g; no bare "mlu": the driver's unknown-card name
    { prefix: 'mlu590', tier: 'medium' }, // upstream table
  ],
  hygon: [
    { prefix: 'z100', tier: 'small' }, // upstream table; 6c/32g
    { prefix: 'z100l', tier: 'small' }, // upstream table
    { prefix: 'k100', tier: 'large' }, // upstream table; also K100_AI, 8–32c/128g (ours fell back to 4/16Gi)
    { prefix: 'bw100', tier: 'large' }, // upstream table
    { prefix: 'bw1000', tier: 'xlarge' }, // upstream table
  ],
  iluvatar: [
    { prefix: 'bi-v100', tier: 'medium' }, // upstream table
    { prefix: 'bi-v150', tier: 'medium' }, // upstream table; 64c/64g
    { prefix: 'mr-v50', tier: 'medium' }, // upstream table
    { prefix: 'mr-v100', tier: 'medium' }, // upstream table; 16c/64g
  ],
  metax: [
    { prefix: 'mxc500', tier: 'medium' }, // upstream table; 8–14c/64–128g
    { prefix: 'mxc550', tier: 'large' }, // upstream table; 14–30c/180–256g
    { prefix: 'mxc588', tier: 'large' }, // upstream table
    { prefix: 'mxc600', tier: 'large' }, // upstream table
  ],
  mthreads: [
    { prefix: 'mtt-s4000', tier: 'medium' }, // upstream table; 8–15c/100–128g
    { prefix: 'mtt-s5000', tier: 'medium' }, // upstream table; inherited from S4000
  ],
  thead: [
    { prefix: 'ppu-zw810e', tier: 'medium' }, // upstream table; 11.5c/112g per card
    { prefix: 'ppu-zwm890', tier: 'medium' }, // upstream table; inherited from ZW810E
  ],
};

/** The tokens of a normalised name (`k100_ai` → `k100`, `ai`): `-`, `_` and `.` separate them. */
export function presetTokens(text: string): string[] {
  return text.split(/[-_.]/).filter(Boolean);
}

function startsWith(tokens: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length > 0 && prefix.length <= tokens.length && prefix.every((p, i) => tokens[i] === p);
}

/** Removes leading marketing words until none is left (`radeon instinct mi300x` → `mi300x`). */
function stripMarketing(tokens: string[]): string[] {
  for (;;) {
    const strip = UNIT_PRESET_STRIP.map(presetTokens).find((s) => startsWith(tokens, s));
    if (strip === undefined) return tokens;
    tokens = tokens.slice(strip.length);
  }
}

/**
 * The tier of a product: anchored at the start of the normalised product (after the manufacturer
 * word and marketing words), whole tokens only, so `NVIDIA DGX H100` is not an H100 and `A10` is
 * not an `A100`. The table has at most one matching row per product (a test keeps prefixes disjoint).
 */
export function unitTierFor(mfr: ManufacturerName, product: string): UnitTier {
  const tokens = stripMarketing(presetTokens(normalizeName(product, { prefix: mfr })));
  const row = UNIT_PRESET_TABLE[mfr].find((r) => startsWith(tokens, presetTokens(r.prefix)));
  if (row === undefined) return 'fallback';
  return row.by?.find((v) => tokens.includes(v.token))?.tier ?? row.tier;
}

/**
 * Unit resources of a derived accelerated InstanceType; unmatched products get the fallback 4/16Gi.
 * @example unitResourcesFor('nvidia', 'NVIDIA H100 80GB HBM3') // { cpu: '12', ram: '192Gi' }
 * @example unitResourcesFor('hygon', 'K100_AI') // { cpu: '12', ram: '128Gi' }
 */
export function unitResourcesFor(mfr: ManufacturerName, product: string): UnitResources {
  return UNIT_TIERS[unitTierFor(mfr, product)];
}
