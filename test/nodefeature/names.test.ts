import { describe, expect, it } from 'vitest';
import { foldToAscii, normalizeName, sanitizeLabelValue, stripCpuCruft } from '../../src/nodefeature/index.js';

interface NormalizeCase {
  readonly name: string;
  readonly input: { readonly text: string; readonly prefix: string; readonly maxLen: number; readonly strip?: boolean };
  readonly want: string;
}

// every vector of the modelled Go project's NormalizeName table, plus the derived ones below it.
const referenceVectors: NormalizeCase[] = [
  {
    name: 'drops the manufacturer word in front of an NVIDIA product',
    input: { text: 'NVIDIA H100 80GB HBM3', prefix: 'nvidia', maxLen: 46 },
    want: 'h100-80gb-hbm3',
  },
  {
    name: 'reduces a two-word NVIDIA product to the model',
    input: { text: 'NVIDIA A100', prefix: 'nvidia', maxLen: 46 },
    want: 'a100',
  },
  {
    name: 'keeps a brand that is not the manufacturer word (Tesla)',
    input: { text: 'Tesla 4', prefix: 'nvidia', maxLen: 46 },
    want: 'tesla-4',
  },
  {
    name: 'drops AMD in front of an Instinct product',
    input: { text: 'AMD Instinct MI300X OAM', prefix: 'amd', maxLen: 49 },
    want: 'instinct-mi300x-oam',
  },
  {
    name: 'drops brackets and slashes of a PCI-database name',
    input: { text: 'Navi 32 [Radeon RX 7700 XT / 7800 XT]', prefix: 'amd', maxLen: 49 },
    want: 'navi-32-radeon-rx-7700-xt-7800-xt',
  },
  {
    name: 'clears the manufacturer word even without a space after it',
    input: { text: 'Ascend910B2', prefix: 'ascend', maxLen: 46 },
    want: '910b2',
  },
  {
    name: 'keeps a product that does not start with the manufacturer word',
    input: { text: '310P3', prefix: 'ascend', maxLen: 46 },
    want: '310p3',
  },
  {
    name: 'keeps an underscore inside a product',
    input: { text: 'K100_AI', prefix: 'hygon', maxLen: 47 },
    want: 'k100_ai',
  },
  { name: 'lower-cases a plain model', input: { text: 'MXC500', prefix: 'metax', maxLen: 47 }, want: 'mxc500' },
  {
    name: 'turns the bare manufacturer word into nothing',
    input: { text: 'NVIDIA', prefix: 'nvidia', maxLen: 46 },
    want: '',
  },
  {
    name: 'strips (R), CPU and the clock from an Intel brand string',
    input: { text: 'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz', prefix: 'intel', maxLen: 0, strip: true },
    want: 'xeon-platinum-8480',
  },
  {
    name: 'stops at maxLen',
    input: { text: 'Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz', prefix: 'intel', maxLen: 10, strip: true },
    want: 'xeon-plati',
  },
  {
    name: 'strips a trailing "64-Cores"',
    input: { text: 'AMD Ryzen Threadripper PRO 5995WX 64-Cores', prefix: 'amd', maxLen: 0, strip: true },
    want: 'ryzen-threadripper-pro-5995wx',
  },
  {
    name: 'strips a leading "11th Gen" and (TM)',
    input: { text: '11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz', prefix: 'intel', maxLen: 0, strip: true },
    want: 'core-i7-1165g7',
  },
  {
    name: 'strips a leading "Genuine" but keeps an inner CPU word',
    input: { text: 'Genuine Intel(R) CPU 0000 @ 2.00GHz', prefix: 'intel', maxLen: 0, strip: true },
    want: 'cpu-0000',
  },
  {
    name: 'keeps the letters of (R) and (TM) without stripCruft',
    input: { text: 'Intel(R) Core(TM) i9-14900K', prefix: 'intel', maxLen: 0, strip: false },
    want: 'r-coretm-i9-14900k',
  },
  { name: 'derived: NVIDIA A10G', input: { text: 'NVIDIA A10G', prefix: 'nvidia', maxLen: 46 }, want: 'a10g' },
  { name: 'derived: Tesla T4', input: { text: 'Tesla T4', prefix: 'nvidia', maxLen: 46 }, want: 'tesla-t4' },
  {
    name: 'derived: NVIDIA GeForce RTX 4090',
    input: { text: 'NVIDIA GeForce RTX 4090', prefix: 'nvidia', maxLen: 46 },
    want: 'geforce-rtx-4090',
  },
];

const behaviourCases: NormalizeCase[] = [
  { name: 'returns empty for empty input', input: { text: '', prefix: 'nvidia', maxLen: 46 }, want: '' },
  { name: 'drops leading separators', input: { text: '  --_.a100', prefix: 'nvidia', maxLen: 46 }, want: 'a100' },
  {
    name: 'collapses doubled separators to the first one',
    input: { text: 'a  -_.b', prefix: '', maxLen: 0 },
    want: 'a-b',
  },
  { name: 'drops one trailing separator', input: { text: 'a100 ', prefix: '', maxLen: 0 }, want: 'a100' },
  {
    name: 'drops a separator left at the end by maxLen',
    input: { text: 'abcd efgh', prefix: '', maxLen: 5 },
    want: 'abcd',
  },
  {
    name: 'treats a negative maxLen as no limit',
    input: { text: 'x'.repeat(200), prefix: '', maxLen: -1 },
    want: 'x'.repeat(200),
  },
  {
    name: 'cuts a 200-character product at maxLen',
    input: { text: 'NVIDIA ' + 'Z'.repeat(200), prefix: 'nvidia', maxLen: 46 },
    want: 'z'.repeat(46),
  },
  {
    name: 'folds a superscript digit and an accent, drops CJK and emoji',
    input: { text: 'Ascend 910B²ü 算力 🚀', prefix: 'ascend', maxLen: 46 },
    want: '910b2u',
  },
  {
    name: 'folds full-width letters (NFKC), so the manufacturer word still clears',
    input: { text: 'ＮＶＩＤＩＡ Ａ１００', prefix: 'nvidia', maxLen: 46 },
    want: 'a100',
  },
  {
    name: 'turns a name of symbols only into nothing',
    input: { text: '(™)[®]/+*', prefix: 'nvidia', maxLen: 46 },
    want: '',
  },
  {
    name: 'clears the prefix case-insensitively',
    input: { text: 'nViDiA a100', prefix: 'NVIDIA', maxLen: 46 },
    want: 'a100',
  },
  {
    name: 'clears the prefix again when the output re-grows to it (not word-aware)',
    input: { text: 'NVIDIA NVIDIA', prefix: 'nvidia', maxLen: 46 },
    want: '',
  },
  {
    name: 'clears the prefix at the start of a longer word (not word-aware)',
    input: { text: 'AMDX 1', prefix: 'amd', maxLen: 49 },
    want: 'x-1',
  },
  {
    name: 'clears a prefix hidden behind dropped symbols',
    input: { text: 'N(V)I[D]IA+H100', prefix: 'nvidia', maxLen: 46 },
    want: 'h100',
  },
  { name: 'keeps dots inside a name', input: { text: 'Model 1.5', prefix: '', maxLen: 0 }, want: 'model-1.5' },
  {
    name: 'does not strip (R)/(TM) when stripCruft is off',
    input: { text: 'Xeon(R)', prefix: '', maxLen: 0 },
    want: 'xeonr',
  },
];

describe('normalizeName', () => {
  it.each([...referenceVectors, ...behaviourCases])('$name', ({ input, want }) => {
    expect(
      normalizeName(input.text, { prefix: input.prefix, maxLength: input.maxLen, stripCpuCruft: input.strip ?? false }),
    ).toBe(want);
  });
});

describe('stripCpuCruft', () => {
  it.each([
    {
      name: 'cuts at " @ " and removes (R) and CPU',
      input: 'Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz',
      want: 'Intel Xeon Platinum 8480+',
    },
    { name: 'removes Processor then the core count', input: 'AMD EPYC 7763 64-Core Processor', want: 'AMD EPYC 7763' },
    { name: 'removes a core count case-insensitively', input: 'AMD Ryzen 9 7950X 16-CORE', want: 'AMD Ryzen 9 7950X' },
    { name: 'removes lower-case (r) and (tm)', input: 'Foo(r) Bar(tm)', want: 'Foo Bar' },
    {
      name: 'removes repeated leading Genuine / Gen words',
      input: 'Genuine 12th Gen Genuine Intel Core',
      want: 'Intel Core',
    },
    { name: 'keeps a name without cruft', input: 'Kunpeng-920', want: 'Kunpeng-920' },
    { name: 'keeps an inner CPU word', input: 'Intel CPU 0000', want: 'Intel CPU 0000' },
    { name: 'trims spaces', input: '  AMD EPYC 7R13 Processor  ', want: 'AMD EPYC 7R13' },
  ])('$name', ({ input, want }) => {
    expect(stripCpuCruft(input)).toBe(want);
  });
});

describe('sanitizeLabelValue', () => {
  it.each([
    { name: 'keeps case and turns spaces into dashes', input: 'NVIDIA H100 80GB HBM3', want: 'NVIDIA-H100-80GB-HBM3' },
    { name: 'sanitises Tesla T4', input: 'Tesla T4', want: 'Tesla-T4' },
    { name: 'keeps a product without spaces as is', input: 'Ascend910B2', want: 'Ascend910B2' },
    { name: 'keeps versions with dots', input: '570.124.06', want: '570.124.06' },
    { name: 'drops leading separators', input: ' -_.x', want: 'x' },
    { name: 'collapses doubled separators', input: 'a - b', want: 'a-b' },
    { name: 'drops one trailing separator', input: 'Hopper.', want: 'Hopper' },
    {
      name: 'drops brackets, slashes, plus and (R)',
      input: 'Navi 32 [Radeon RX 7700 XT / 7800 XT]',
      want: 'Navi-32-Radeon-RX-7700-XT-7800-XT',
    },
    { name: 'drops (R)/(TM) punctuation but keeps the letters', input: 'Intel(R) Xeon(TM)+', want: 'IntelR-XeonTM' },
    { name: 'folds what has an ASCII form, drops the rest', input: 'Ascend 910B²ü 算力 🚀', want: 'Ascend-910B2u' },
    { name: 'turns symbols only into the empty value', input: '[](){}', want: '' },
    { name: 'returns empty for empty input', input: '', want: '' },
    { name: 'stops at 63 characters', input: 'A'.repeat(200), want: 'A'.repeat(63) },
    {
      name: 'drops a separator left at the end by the 63-character cut',
      input: `${'A'.repeat(62)} B`,
      want: 'A'.repeat(62),
    },
  ])('$name', ({ input, want }) => {
    expect(sanitizeLabelValue(input)).toBe(want);
  });

  it('honours a smaller maxLen', () => {
    expect(sanitizeLabelValue('NVIDIA H100', 6)).toBe('NVIDIA');
  });
});

// The one Unicode rule (issue 14, item 4): NFKC + ASCII fold. Where the modelled system differs,
// the case says so; docs/architecture.md#modelled-system gives the reason.
describe('foldToAscii and the names read through it', () => {
  it.each([
    { name: 'folds the long s (U+017F)', input: 'Core\u017f', want: 'Cores' },
    { name: 'folds the Kelvin sign (U+212A)', input: 'i9-14900\u212a', want: 'i9-14900K' },
    { name: 'drops the zero-width no-break space (U+FEFF)', input: 'Processor\ufeff', want: 'Processor' },
    { name: 'turns the next-line control (U+0085) into a space', input: 'CPU\u0085X', want: 'CPU X' },
    { name: 'turns a no-break space (U+00A0) into a space', input: 'EPYC\u00a07763', want: 'EPYC 7763' },
    { name: 'folds full-width forms', input: 'Ｈ１００', want: 'H100' },
    { name: 'folds a ligature and strips accents', input: '\ufb01 café', want: 'fi cafe' },
    { name: 'drops trademark signs instead of spelling them out', input: 'Intel® Xeon™ Gold', want: 'Intel Xeon Gold' },
    { name: 'drops controls, CJK and emoji', input: 'a\u0000b 飞腾 🚀', want: 'ab  ' },
    { name: 'keeps printable ASCII as it is', input: 'Intel(R) Xeon(R) @ 2.00GHz', want: 'Intel(R) Xeon(R) @ 2.00GHz' },
  ])('$name', ({ input, want }) => {
    expect(foldToAscii(input)).toBe(want);
  });

  it.each([
    {
      name: 'a trailing long s still reads "Cores" and is stripped (upstream: epyc-9654 as well)',
      input: { text: 'AMD EPYC 9654 96-Core\u017f', prefix: 'amd' },
      want: 'epyc-9654',
    },
    {
      name: 'a Kelvin-sign K stays a K (upstream drops it: i9-14900, a different CPU)',
      input: { text: 'Intel(R) Core(TM) i9-14900\u212a', prefix: 'intel' },
      want: 'core-i9-14900k',
    },
    {
      name: 'a trailing U+FEFF does not hide " Processor" (upstream keeps -processor)',
      input: { text: 'AMD EPYC 7763 64-Core Processor\ufeff', prefix: 'amd' },
      want: 'epyc-7763',
    },
    {
      name: 'a trailing U+0085 is white space, so " CPU" is stripped (as upstream)',
      input: { text: 'Intel(R) Xeon(R) Gold 6348 CPU\u0085', prefix: 'intel' },
      want: 'xeon-gold-6348',
    },
    {
      name: 'a full-width CPU name reads as its ASCII twin',
      input: { text: 'ＡＭＤ ＥＰＹＣ ７７６３', prefix: 'amd' },
      want: 'epyc-7763',
    },
  ])('CPU names: $name', ({ input, want }) => {
    expect(normalizeName(input.text, { prefix: input.prefix, stripCpuCruft: true })).toBe(want);
  });

  it('applies the same rule to label values, keeping case', () => {
    expect(sanitizeLabelValue('ＮＶＩＤＩＡ Ｈ１００\ufeff')).toBe('NVIDIA-H100');
  });

  it('is idempotent and its output is printable ASCII', () => {
    for (const text of ['Core\u017f', 'x\u212a\u0085\ufeff', 'Ｈ１００ 飞腾', '\u00a0\u2028é']) {
      const once = foldToAscii(text);
      expect(foldToAscii(once)).toBe(once);
      expect(once).toMatch(/^[\x20-\x7e]*$/);
    }
  });
});
