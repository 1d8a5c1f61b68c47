// The ResourceSlice example of docs/dra.md#resourceslices is the builder's output for
// test/fixtures/dra/h200-1-card.json, never typed by hand:
// `UPDATE_DOCS=1 npx vitest run test/dra/slice-example.test.ts` rewrites it.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { desiredSlices, withGeneration, type SliceCard, type SliceNode } from '../../src/dra/index.js';

const START = '<!-- resourceslices-example:start -->\n';
const END = '<!-- resourceslices-example:end -->';

function example(): string {
  const fixture = JSON.parse(readFileSync('test/fixtures/dra/h200-1-card.json', 'utf8')) as {
    node: SliceNode;
    generation: number;
    cards: SliceCard[];
  };
  const slices = withGeneration(desiredSlices(fixture.node, fixture.cards).pools[0]?.slices ?? [], fixture.generation);
  // The excerpt: every slice, but of the devices only the shared one (the whole one differs by
  // its mode and by having no request policies).
  const excerpt = slices.map((s) =>
    s.spec.devices
      ? { ...s, spec: { ...s.spec, devices: s.spec.devices.filter((d) => d.name.endsWith('-shared')) } }
      : s,
  );
  return (
    '```yaml\n' +
    `# kubectl get resourceslices --field-selector spec.nodeName=${fixture.node.name} -o yaml (excerpt:\n` +
    '# card-0, the whole card, is left out; it has mode "whole" and no request policies)\n' +
    excerpt.map((s) => stringify(s)).join('---\n') +
    '```\n'
  );
}

const DOC = 'docs/dra.md';

describe(`${DOC}: the ResourceSlice example`, () => {
  it('is what the builder publishes for the fixture node', () => {
    const doc = readFileSync(DOC, 'utf8');
    const from = doc.indexOf(START);
    const to = doc.indexOf(END);
    expect(from, `${DOC} has the example markers`).toBeGreaterThan(0);
    const current = doc.slice(from + START.length, to);
    const want = example();
    if (process.env['UPDATE_DOCS'] === '1' && current !== want)
      writeFileSync(DOC, doc.slice(0, from + START.length) + want + doc.slice(to));
    else expect(current).toBe(want);
    // The point of the example: one card, a counter set and two devices consuming all of it.
    expect(want).toContain('name: card-0-counters');
    expect(want).toContain('counterSet: card-0-counters');
    expect(want).toContain('allowMultipleAllocations: true');
  });
});
