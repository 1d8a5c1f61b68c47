// The controllers, CRDs and stages the docs name, against what manifests/ and the chart install: a
// controller or CRD added to the manifests and left out of README.md or docs/architecture.md (or a
// count word left behind, "four controllers") fails here instead of going stale silently.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO, readDoc } from './markdown.js';

const CHART = 'charts/gpustack-operator';

function filesIn(dir: string): string[] {
  return readdirSync(join(REPO, dir))
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => join(REPO, dir, name));
}

/** The Metacontroller controllers of a folder, by name (text: the chart's templates are not YAML yet). */
function controllerNames(dir: string): string[] {
  return filesIn(dir).flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const match = /^kind: (?:Composite|Decorator)Controller\nmetadata:\n {2}name: ([\w-]+)/m.exec(text);
    return match?.[1] === undefined ? [] : [match[1]];
  });
}

interface Crd {
  readonly kind: string;
  readonly plural: string;
}

function crds(dir: string): Crd[] {
  return filesIn(dir).map((file) => {
    const crd = parse(readFileSync(file, 'utf8')) as { spec: { names: { kind: string; plural: string } } };
    return { kind: crd.spec.names.kind, plural: crd.spec.names.plural };
  });
}

interface ResourceRule {
  readonly apiVersion: string;
  readonly resource: string;
}

/** The worker.gpustack.ai resources our controllers write (children and attachments), by plural. */
function writtenResources(): string[] {
  return filesIn('manifests/compositecontrollers').flatMap((file) => {
    const { spec } = parse(readFileSync(file, 'utf8')) as {
      spec: { childResources?: ResourceRule[]; attachments?: ResourceRule[] };
    };
    return [...(spec.childResources ?? []), ...(spec.attachments ?? [])]
      .filter((rule) => rule.apiVersion.startsWith('worker.gpustack.ai/'))
      .map((rule) => rule.resource);
  });
}

const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

/** The text of a Markdown section: from its `<a id>` to the next one. */
function section(text: string, id: string): string {
  const start = text.indexOf(`<a id="${id}"></a>`);
  expect(start, `#${id}`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('<a id="', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

const controllers = controllerNames('manifests/compositecontrollers').sort();
const kinds = crds('manifests/crds')
  .map((crd) => crd.kind)
  .sort();
const readme = readDoc('README.md');
const architecture = readDoc('docs/architecture.md');

describe('what manifests/ and the chart install', () => {
  it('the chart installs the controllers and CRDs of manifests/', () => {
    expect(controllers.length).toBeGreaterThan(0);
    expect(controllerNames(`${CHART}/templates/compositecontrollers`).sort()).toEqual(controllers);
    expect(
      crds(`${CHART}/crds`)
        .map((crd) => crd.kind)
        .sort(),
    ).toEqual(kinds);
  });
});

describe('the docs name every controller, CRD and stage', () => {
  const docs = ['README.md', `${CHART}/README.md`, ...readdirSync(join(REPO, 'docs')).map((name) => `docs/${name}`)];
  // The chart's description (Artifact Hub and `helm show chart` print it) counts them too.
  const counted = [...docs.filter((file) => file.endsWith('.md')), `${CHART}/Chart.yaml`];

  it.each(counted)('%s counts the controllers right', (file) => {
    const counts = [...readDoc(file).matchAll(/\b(\w+)\s+(?:Metacontroller\s+)?controllers\b/gi)]
      .map((match) => (match[1] ?? '').toLowerCase())
      .filter((word) => NUMBERS.includes(word));
    for (const word of counts) expect(word, `"${word} controllers" in ${file}`).toBe(NUMBERS[controllers.length]);
  });

  it('docs/architecture.md#controllers has one row per controller', () => {
    const rows = [...section(architecture, 'controllers').matchAll(/^\| `(gpustack-[\w-]+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(controllers);
  });

  it('the stages of the README and of docs/architecture.md#overview name every controller', () => {
    const readmeStages = section(readme, 'what-it-is')
      .split('\n')
      .filter((line) => /^\| \d /.test(line))
      .join('\n');
    const architectureStages = section(architecture, 'overview')
      .split('\n')
      .filter((line) => /^\d\. /.test(line))
      .join('\n');
    for (const name of controllers) {
      expect(readmeStages, `README stage table: ${name}`).toContain(name);
      expect(architectureStages, `architecture stages: ${name}`).toContain(name);
    }
  });

  it('docs/architecture.md lists every CRD (#crds and the layout)', () => {
    const listed = [...section(architecture, 'crds').matchAll(/^- \*\*(\w+)\*\*/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(kinds);
    const layout = /CRDs \(generated: ([^)]*)\)/.exec(section(architecture, 'layout'))?.[1] ?? '';
    expect(layout.split(', ').sort()).toEqual(kinds);
  });

  it("the README's diagram shows every CRD our controllers write", () => {
    const diagram = /```\n([\s\S]*?)```/.exec(section(readme, 'what-it-is'))?.[1] ?? '';
    const byPlural = new Map(crds('manifests/crds').map((crd) => [crd.plural, crd.kind]));
    const written = [...new Set(writtenResources())].map((plural) => byPlural.get(plural) ?? plural);
    expect(written.length).toBeGreaterThan(0);
    for (const kind of written) expect(diagram, kind).toMatch(new RegExp(`\\b${kind}\\b`));
  });
});
