// The table of eslint/layers.js against the house as it is: every folder under src/ has a row, every
// row names rooms that exist, every import in the code is an arrow of the table, and the generated
// lint config rejects every arrow the table does not draw (and lets through every arrow it does).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { LAYERS, REPO_ROOT, allowedRooms, importedRoom, roomOf } from '../../eslint/layers.js';

const ROOMS = Object.keys(LAYERS);
const TOP_ROOMS = ['native', 'eslint', 'scripts', 'harness', 'bench', 'test'];
// Named by bench/ (bench/shared/server.mjs runs the built server) but not linted: the compiler's output.
const BUILD_OUTPUT = 'dist';

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(REPO_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(dir, entry.name);
    if (entry.isDirectory()) return ['build', 'node_modules'].includes(entry.name) ? [] : sourceFiles(relative);
    return /\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [relative] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** Every relative import in the code, as `from → to` between two rooms. */
function arrowsInCode(): Map<string, string> {
  const arrows = new Map<string, string>();
  for (const file of TOP_ROOMS.concat('src').flatMap(sourceFiles)) {
    const text = readFileSync(path.join(REPO_ROOT, file), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = importedRoom(path.join(REPO_ROOT, file), match[1] ?? match[2] ?? '');
      const from = roomOf(file);
      if (target !== undefined && target !== from) arrows.set(`${from} → ${target}`, file);
    }
  }
  return arrows;
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

  it('draws every import in the code: each arrow between two rooms is in the table', () => {
    const arrows = arrowsInCode();
    expect(arrows.size).toBeGreaterThan(40);
    const undrawn = [...arrows]
      .filter(([arrow]) => {
        const [from = '', to = ''] = arrow.split(' → ');
        return !(allowedRooms(from) ?? []).includes(to);
      })
      .map(([arrow, file]) => `${arrow} (${file})`);
    expect(undrawn).toEqual([]);
  });

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

  it.each(ROOMS.filter((room) => room.startsWith('src/') || room === 'native'))(
    '%s: every arrow of the table passes, every other room is rejected',
    async (room) => {
      const probe = `${room}/probe.ts`;
      const allowed = allowedRooms(room) ?? [];
      for (const target of ROOMS.filter((other) => other !== room)) {
        const errors = await layerErrors(probe, specifier(probe, target));
        if (allowed.includes(target)) expect(errors, `${room} → ${target}`).toEqual([]);
        else expect(errors.join('\n'), `${room} → ${target}`).toContain(`${room} may not import ${target}`);
      }
    },
  );

  it('rejects a file in a folder the table does not know', async () => {
    const errors = await layerErrors('src/newroom/probe.ts', '../k8s/index.js');
    expect(errors).toEqual(['src/newroom has no row in eslint/layers.js: add it, with what it may import and why']);
  });
});
