/**
 * @module Card memory as a label (`80Gi`) and back to MiB (docs/architecture.md#foreign-label-forms).
 * We write one form; we read any Kubernetes quantity another tool may have written, where its
 * meaning is unambiguous.
 */
import { parseQuantityExact } from '../k8s/index.js';

const UNITS: readonly [string, number][] = [
  ['Ei', 1024 ** 4],
  ['Pi', 1024 ** 3],
  ['Ti', 1024 ** 2],
  ['Gi', 1024],
  ['Mi', 1],
];
const BYTES_PER_MIB = 2n ** 20n;

/**
 * Renders MiB at the largest binary unit not above the value, rounded half-up: the one form the
 * agent and node-profile write.
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
 * MiB as Kubernetes prints the quantity: the largest binary unit that divides it exactly
 * (`81920` → `80Gi`, `22888` → `22888Mi`). Used where we echo a memory we read (flavor notes),
 * so a label written as `24G` or `+80Gi` is never written back in that form.
 * @example canonicalMemory(1536) // '1536Mi'
 */
export function canonicalMemory(mib: number): string {
  if (mib === 0) return '0';
  const unit = UNITS.find(([, scale]) => mib % scale === 0) ?? ['Mi', 1];
  return `${mib / unit[1]}${unit[0]}`;
}

/**
 * What a `.memory` label says: `mib` of one card, `0` when the writer did not know it (our agent
 * writes `0` for a card whose library reports no memory), or why it cannot be read.
 */
export type MemoryReading = { readonly ok: true; readonly mib: number } | { readonly ok: false; readonly why: string };

/**
 * Reads a `.memory` label with Kubernetes quantity semantics: `80Gi`, `24G` (10^9 bytes),
 * `1.5Gi`, `+80Gi` and raw bytes (`85899345920`) all read, rounded down to whole MiB (as the
 * modelled system does). `0` is "unknown": the model still pools, but has no MiB. Refused, with a
 * reason: not a quantity, a negative one (`-512m`), and a positive one below 1Mi — a bare number is
 * bytes there, so `24576` is 24 KiB, most likely MiB written without a unit (ambiguous).
 * @example readMemoryLabel('80Gi') // { ok: true, mib: 81920 }
 * @example readMemoryLabel('24G') // { ok: true, mib: 22888 }
 */
export function readMemoryLabel(text: string | undefined): MemoryReading {
  if (text === undefined) return { ok: false, why: 'is not set' };
  const quantity = parseQuantityExact(text);
  if (quantity === undefined) return { ok: false, why: 'is not a Kubernetes quantity such as 80Gi' };
  if (quantity.numerator < 0n) return { ok: false, why: 'is negative' };
  if (quantity.numerator === 0n) return { ok: true, mib: 0 };
  const mib = quantity.numerator / (quantity.denominator * BYTES_PER_MIB);
  if (mib === 0n) {
    return {
      ok: false,
      why: 'is below 1Mi: a bare number is bytes in a Kubernetes quantity, so the unit is ambiguous (write e.g. 80Gi)',
    };
  }
  if (mib > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, why: 'is too large for a card' };
  return { ok: true, mib: Number(mib) };
}
