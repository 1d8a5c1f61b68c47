/**
 * @module Name normalisation (upstream `NormalizeName`, docs/architecture.md#keys) and label-value
 * sanitising (any text to a valid label value, case kept). Both are total: any string in, a valid fragment (possibly empty) out, and
 * both read their input through one Unicode rule, `foldToAscii`.
 */

const SEPARATORS = new Set(['-', '_', '.']);
// ™ ℠ ® ©: marks, not part of a name (NFKC would turn ™ into the letters "TM": "Xeon™" → "xeontm").
const TRADEMARK_SIGNS = /[\u2122\u2120\u00ae\u00a9]/g;
const COMBINING_MARKS = /\p{M}/gu;
const UNICODE_WHITE_SPACE = /\p{White_Space}/gu;
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/g;

/**
 * The one Unicode rule of every name and label value we derive: trademark signs go; NFKC folds
 * compatibility characters to what they stand for (`ſ` → `s`, the Kelvin sign `K` → `K`,
 * full-width `Ｈ１００` → `H100`, `ﬁ` → `fi`, `²` → `2`); accents are stripped (`é` → `e`); any
 * Unicode white space (U+0085, U+00A0, U+2028 …) becomes a space; whatever is still not printable
 * ASCII (U+FEFF, controls, CJK, emoji) is dropped. Folding rather than dropping keeps `i9-14900K`
 * (with a Kelvin sign) apart from `i9-14900`.
 * @example foldToAscii('AMD EPYC 9654 96-Core\u017f') // 'AMD EPYC 9654 96-Cores'
 */
export function foldToAscii(text: string): string {
  return text
    .replace(TRADEMARK_SIGNS, '')
    .normalize('NFKC')
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .replace(UNICODE_WHITE_SPACE, ' ')
    .replace(NOT_PRINTABLE_ASCII, '');
}

/**
 * Removes CPU brand cruft before normalising: ` @ 2.0GHz`, `(R)`, `(TM)`, leading `Genuine `
 * or `11th Gen `, trailing ` CPU`, ` Processor`, ` 64-Core(s)`. Reads the name through
 * `foldToAscii` first, so the patterns only ever see ASCII (`96-Coreſ` is `96-Cores`).
 * @example stripCpuCruft('Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz') // 'Intel Xeon Platinum 8480+'
 */
export function stripCpuCruft(name: string): string {
  let out = foldToAscii(name);
  const at = out.indexOf(' @ ');
  if (at !== -1) out = out.slice(0, at);
  out = out.replace(/\((R|r|TM|tm)\)/g, '');
  for (;;) {
    const next = out.replace(/^(Genuine |\d+(st|nd|rd|th) Gen )/, '');
    if (next === out) break;
    out = next;
  }
  out = out
    .trim()
    .replace(/ CPU$/, '')
    .replace(/ Processor$/, '')
    .replace(/ \d+-Cores?$/i, '');
  return out;
}

export interface NormalizeNameOptions {
  /** A manufacturer word the output drops while it is all there is (`nvidia`, `amd`). @default '' */
  readonly prefix?: string;
  /** Longest output; ≤ 0 means no limit. @default 0 */
  readonly maxLength?: number;
  /** Strip CPU marketing cruft first (`(R)`, `(TM)`, ` @ 2.0GHz`, ` Processor`, `64-Core`). @default false */
  readonly stripCpuCruft?: boolean;
}

/**
 * Lower-cases a product or CPU name into a key fragment. The name is read through `foldToAscii`;
 * then: keeps `a-z0-9`, space → `-`, keeps
 * `-_.` unless leading or doubled, drops anything else, clears the output whenever it equals
 * `prefix` (so `NVIDIA H100` under `nvidia` → `h100`), stops at `maxLength` (none by default) and
 * drops one trailing separator.
 * @example normalizeName('NVIDIA H100 80GB HBM3', { prefix: 'nvidia', maxLength: 46 }) // 'h100-80gb-hbm3'
 */
export function normalizeName(name: string, options: NormalizeNameOptions = {}): string {
  const { prefix = '', maxLength = 0, stripCpuCruft: stripCruft = false } = options;
  const source = stripCruft ? stripCpuCruft(name) : foldToAscii(name);
  const lowerPrefix = prefix.toLowerCase();
  let out = '';
  for (const ch of source) {
    if (maxLength > 0 && out.length >= maxLength) break;
    if (ch >= 'A' && ch <= 'Z') out += ch.toLowerCase();
    else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) out += ch;
    else if (ch === ' ' || SEPARATORS.has(ch)) {
      if (out === '' || SEPARATORS.has(out.at(-1) as string)) continue;
      out += ch === ' ' ? '-' : ch;
    } else continue;
    if (prefix !== '' && out.length === lowerPrefix.length && out === lowerPrefix) out = '';
  }
  return SEPARATORS.has(out.at(-1) ?? '') ? out.slice(0, -1) : out;
}

/**
 * Makes any text a valid label value, keeping case: `NVIDIA H100 80GB HBM3` → `NVIDIA-H100-80GB-HBM3`.
 * Reads the text through `foldToAscii`, like `normalizeName`.
 * @example sanitizeLabelValue('Tesla T4') // 'Tesla-T4'
 */
export function sanitizeLabelValue(text: string, maxLen = 63): string {
  let out = '';
  for (const ch of foldToAscii(text)) {
    if (out.length >= maxLen) break;
    if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) out += ch;
    else if (ch === ' ' || SEPARATORS.has(ch)) {
      if (out === '' || SEPARATORS.has(out.at(-1) as string)) continue;
      out += ch === ' ' ? '-' : ch;
    }
  }
  return SEPARATORS.has(out.at(-1) ?? '') ? out.slice(0, -1) : out;
}
