// The table of eslint/layers.js against the house as it is: every folder under src/ has a row, every
// row names rooms that exist, the table has no cycle, the lint rule (the one place that reads an
// import) finds no import in the code that is not an arrow of the table, and the generated lint
// config rejects every arrow the table does not draw (and lets through every arrow it does).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS, REPO_ROOT, allowedRooms } from '../../eslint/layers.js';

const ROOMS = Object.keys(LAYERS);
const TOP_ROOMS = ['native', 'eslint', 'scripts', 'harness', 'bench', 'test'];
// Named by bench/ (bench/shared/server.mjs runs the built server) but not linted: the compiler's output.
const BUILD_OUTPUT = 'dist';

/** The rooms in an order where each comes after every room it imports; throws naming a cycle. */
function topologicalOrder(table: Readonly<Record<string, readonly string[]>>): string[] {
  const sorted: string[] = [];
  const visiting = new Set<string>();
  const visit = (room: string, trail: readonly string[]): void => {
    if (sorted.includes(room) || !(room in table)) return; // done, or outside the table (dist)
    if (visiting.has(room)) throw new Error(`cycle: ${[...trail, room].join(' → ')}`);
    visiting.add(room);
    for (const target of table[room] ?? []) visit(target, [...trail, room]);
    visiting.delete(room);
    sorted.push(room);
  };
  for (const room of Object.keys(table)) visit(room, []);
  return sorted;
}

describe('eslint/layers.js', () => {
  it('has a row for every folder under src/ and every top-level room, and no row for a folder that is gone', () => {
    const srcFolders = readdirSync(path.join(REPO_ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `src/${entry.name}`);
    expect(ROOMS.toSorted()).toEqual([...srcFolders, ...TOP_ROOMS].toSorted());
  });

  it('names only rooms of the table, never its own room, and no src/ room shares a top-level name', () => {
    for (const room of ROOMS) {
      for (const target of allowedRooms(room) ?? []) {
        expect([...ROOMS, BUILD_OUTPUT], `${room} → ${target}`).toContain(target);
        expect(target, `${room} imports itself`).not.toBe(room);
      }
      expect(LAYERS[room]?.why.length, `${room} says why it sits where it does`).toBeGreaterThan(10);
    }
    for (const top of TOP_ROOMS) expect(ROOMS).not.toContain(`src/${top}`);
  });

  it('has no cycle: the rooms sort so that each imports only rooms before it', () => {
    const table = Object.fromEntries(ROOMS.map((room) => [room, allowedRooms(room) ?? []]));
    const sorted = topologicalOrder(table);
    expect(sorted.toSorted()).toEqual(ROOMS.toSorted());
    for (const [index, room] of sorted.entries())
      for (const target of table[room] ?? [])
        if (target !== BUILD_OUTPUT) expect(sorted.indexOf(target), `${room} → ${target}`).toBeLessThan(index);
  });

  it('finds the cycle of a table that has one', () => {
    const cyclic: Record<string, readonly string[]> = { a: ['b'], b: ['c'], c: ['a'] };
    expect(() => topologicalOrder(cyclic)).toThrow('cycle: a → b → c → a');
  });

  it('draws every import in the code: the lint rule finds no arrow outside the table, in any room', async () => {
    const eslint = new ESLint({ cwd: REPO_ROOT, ruleFilter: ({ ruleId }) => ruleId === 'house/layers' });
    const results = await eslint.lintFiles(['src', ...TOP_ROOMS]);
    expect(results.length).toBeGreaterThan(300);
    const undrawn = results.flatMap((result) =>
      result.messages.map((m) => `${path.relative(REPO_ROOT, result.filePath)}: ${m.message}`),
    );
    expect(undrawn).toEqual([]);
  }, 120_000);

  it('keeps the pure rooms pure: a pure room imports only pure rooms', () => {
    for (const [room] of Object.entries(LAYERS).filter(([, row]) => row.pure)) {
      for (const target of allowedRooms(room) ?? []) expect(LAYERS[target]?.pure, `${room} → ${target}`).toBe(true);
    }
  });
});

describe('the lint config generated from the table', () => {
  const eslint = new ESLint({ cwd: REPO_ROOT });

  async function layerErrors(file: string, specifier: string): Promise<string[]> {
    const code = `import { x } from '${specifier}';\nexport const y = x;\n`;
    const [result] = await eslint.lintText(code, { filePath: path.join(REPO_ROOT, file) });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'house/layers').map((m) => m.message);
  }

  /** The specifier a probe file in `from` uses to reach the index of `to`. */
  function specifier(probe: string, to: string): string {
    const relative = path.relative(path.dirname(path.join(REPO_ROOT, probe)), path.join(REPO_ROOT, to, 'index.js'));
    return relative.startsWith('.') ? relative : `./${relative}`;
  }

  it.each(ROOMS)('%s: every arrow of the table passes, every other room is rejected', async (room) => {
    const probe = `${room}/probe.ts`;
    const allowed = allowedRooms(room) ?? [];
    for (const target of ROOMS.filter((other) => other !== room)) {
      const errors = await layerErrors(probe, specifier(probe, target));
      if (allowed.includes(target)) expect(errors, `${room} → ${target}`).toEqual([]);
      else expect(errors.join('\n'), `${room} → ${target}`).toContain(`${room} may not import ${target}`);
    }
  });

  it('rejects a file in a folder the table does not know', async () => {
    const errors = await layerErrors('src/newroom/probe.ts', '../k8s/index.js');
    expect(errors).toEqual(['src/newroom has no row in eslint/layers.js: add it, with what it may import and why']);
  });
});
