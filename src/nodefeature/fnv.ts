/** @module FNV-1a 64-bit over UTF-8, rendered as 16 lower-case hex digits (reference §4.4). */

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
const encoder = new TextEncoder();

/**
 * @example fnv1a64Hex('gpustack--nvidia-a10g-linux-amd64') // 'c4680bb149644f1c'
 */
export function fnv1a64Hex(text: string): string {
  let hash = OFFSET_BASIS;
  for (const byte of encoder.encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * PRIME) & MASK;
  }
  return hash.toString(16).padStart(16, '0');
}
