// bench/ grouped by what it measures, and kept readable: every npm bench script and every script a
// bench spawns names a file that is there, bench/ holds no loose entry point, and no function in it
// runs past ~100 lines.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BENCH = path.join(ROOT, 'bench');
const GROUPS = ['admission', 'cluster', 'detect', 'dra', 'hooks', 'shared'];
const MAX_FUNCTION_LINES = 110;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'results' ? [] : sources(file);
    return /\.(ts|mjs)$/.test(entry.name) ? [file] : [];
  });
}

/** Each function of a file longer than `max` lines, as `file:line name (n lines)`. */
function longFunctions(file: string, max: number): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const line = (pos: number): number => source.getLineAndCharacterOfPosition(pos).line;
      const lines = line(node.getEnd()) - line(node.getStart()) + 1;
      const name = node.name?.getText(source) ?? '(anonymous)';
      if (lines > max) found.push(`${path.relative(ROOT, file)}:${line(node.getStart()) + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('bench/', () => {
  it('keeps its code in the folders of what it measures', () => {
    const loose = readdirSync(BENCH).filter((name) => /\.(ts|mjs)$/.test(name));
    expect(loose).toEqual([]);
    const folders = readdirSync(BENCH, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== 'results')
      .map((entry) => entry.name);
    expect(folders.sort()).toEqual(GROUPS);
  });

  it('names existing files in the npm bench scripts and in every script it spawns', () => {
    const scripts = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    const named = Object.entries(scripts)
      .filter(([name]) => name === 'bench' || name.startsWith('bench:'))
      .flatMap(([, command]) => [...command.matchAll(/bench\/[\w/-]+\.(?:ts|mjs)/g)].map((m) => m[0]));
    expect(named.length).toBeGreaterThan(4);
    const spawned = sources(BENCH).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/spawnScript\(\s*'([^']+)'/g)].map((m) => `bench/${m[1]}`),
    );
    expect(spawned.length).toBeGreaterThan(3);
    const missing = [...named, ...spawned].filter((file) => !existsSync(path.join(ROOT, file)));
    expect(missing).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(sources(BENCH).flatMap((file) => longFunctions(file, MAX_FUNCTION_LINES))).toEqual([]);
  });
});
