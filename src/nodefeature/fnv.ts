/**
 * @module FNV-1a 64-bit over UTF-8, rendered as 16 lower-case hex digits: the hash in LocalQueue
 * names and behind the node-shard index (docs/architecture.md#object-names).
 */

const encoder = new TextEncoder();
const TWO_32 = 0x1_0000_0000;

/**
 * @example fnv1a64Hex('gpustack--nvidia-a10g-linux-amd64') // 'c4680bb149644f1c'
 */
export function fnv1a64Hex(text: string): string {
  // The 64-bit state as two 32-bit halves in plain numbers (BigInt allocates on every step; the
  // instance-type hook hashes one name per namespace). Prime 0x100000001b3 = 2^40 + 0x1b3, so
  // (hi·2^32 + lo)·prime mod 2^64 = lo·0x1b3 + (hi·0x1b3 + lo·2^8)·2^32: every product < 2^53, exact.
  // Object names are printable ASCII: their UTF-8 bytes are their char codes, no encoding needed.
  const bytes = /^[ -~]*$/.test(text) ? undefined : encoder.encode(text);
  const length = bytes ? bytes.length : text.length;
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (let i = 0; i < length; i++) {
    lo = (lo ^ (bytes ? (bytes[i] as number) : text.charCodeAt(i))) >>> 0;
    const low = lo * 0x1b3;
    hi = (hi * 0x1b3 + lo * 0x100 + Math.floor(low / TWO_32)) >>> 0;
    lo = low >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}
