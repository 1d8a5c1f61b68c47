/** @module A small seeded PRNG (mulberry32): the same seed gives the same cluster on every run. */

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Whole number in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  /** `length` lower-case hex digits. */
  hex(length: number): string;
  /** An RFC 4122 version-4 shaped UUID. */
  uuid(): string;
  chance(probability: number): boolean;
}

export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const hex = (length: number): string => {
    let out = '';
    while (out.length < length)
      out += Math.floor(next() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, length);
  };
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T,
    hex,
    uuid: () => {
      const h = hex(32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[int(0, 3)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
    chance: (probability) => next() < probability,
  };
}
