/**
 * Every relative link and anchor in README.md and docs/*.md resolves, and so does every
 * `docs/<page>.md#<anchor>` that code, tests, manifests and scripts cite; no citation of the design
 * that lived outside the repository is left.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO, anchors, docFiles, headingSlug, links, readDoc } from './markdown.js';

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (found === undefined) {
    found = anchors(readDoc(file));
    anchorCache.set(file, found);
  }
  return found;
}

/** Why a link from `file` to `target` does not resolve, or undefined when it does. */
function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [path = '', anchor] = target.split('#', 2);
  const resolved = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
  if (resolved.startsWith('..')) return `${target} leaves the repository`;
  if (!existsSync(join(REPO, resolved))) return `${target}: no ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith('.md') || statSync(join(REPO, resolved)).isDirectory())
    return `${target}: an anchor into ${resolved}, which is not Markdown`;
  return anchorsOf(resolved).has(anchor) ? undefined : `${target}: ${resolved} has no anchor #${anchor}`;
}

/** Source, test, script, bench, chart and manifest files that may cite the docs. */
function citingFiles(): string[] {
  const roots = ['src', 'native', 'test', 'scripts', 'bench', 'charts', 'manifests', 'examples', '.ci'];
  const skip = new Set(['node_modules', 'build', 'dist', 'results']);
  const files: string[] = ['eslint.config.js', 'Dockerfile', 'vitest.config.ts', 'vitest.e2e.config.ts'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(REPO, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) walk(path);
      } else if (/\.(ts|js|mjs|cc|h|c|sh|ya?ml|json|md|txt)$|^run$|^CMakeLists\.txt$/.test(entry.name))
        files.push(path);
    }
  };
  for (const root of roots) if (existsSync(join(REPO, root))) walk(root);
  return files.filter((f) => existsSync(join(REPO, f)));
}

describe('links in README.md and docs/', () => {
  it.each(docFiles())('%s: every relative link and anchor resolves', (file) => {
    const broken = links(readDoc(file)).flatMap(({ line, target }) => {
      const why = brokenLink(file, target);
      return why === undefined ? [] : [`${file}:${line}: ${why}`];
    });
    expect(broken).toEqual([]);
  });

  it('reads anchors the way GitHub writes them', () => {
    expect(headingSlug('Set-up: two commands')).toBe('set-up-two-commands');
    expect(headingSlug('`render`: the whole chain offline')).toBe('render-the-whole-chain-offline');
    expect(anchors('# A\n## A\n<a id="x"></a>\n```\n# not a heading\n```\n')).toEqual(new Set(['a', 'a-1', 'x']));
  });
});

describe('citations of the docs', () => {
  const files = citingFiles();

  it('finds the files that cite them', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('every docs/<page>.md#<anchor> in code, tests, scripts and manifests resolves', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(REPO, file), 'utf8');
      for (const match of text.matchAll(/docs\/([\w-]+\.md)(?:#([\w-]+))?/g)) {
        const [, page = '', anchor] = match;
        const doc = `docs/${page}`;
        if (!existsSync(join(REPO, doc))) broken.push(`${file}: ${match[0]}: no ${doc}`);
        else if (anchor !== undefined && !anchorsOf(doc).has(anchor)) broken.push(`${file}: ${match[0]}: no anchor`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('none cites a design document that lived outside the repository', () => {
    // Spelled with an escape, so this file does not cite them itself: the old design and the
    // "reference" the label algebra was modelled on (say the fact, or cite a doc in the repository),
    // also as a bare section mark, `(\u00a73.4)`, or by its folder, `reference/<page>.md`.
    const citation = /DESIGN \u00a7|reference \u00a7|\(\u00a7\d|\breference\/[\w.-]+\.md/;
    const stale = [...files, ...docFiles()].filter((file) => citation.test(readFileSync(join(REPO, file), 'utf8')));
    expect(stale).toEqual([]);
  });
});
