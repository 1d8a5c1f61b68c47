/**
 * @module The house's rooms and arrows: which folder may import which. eslint.config.js generates
 * its layer rules from this one table (allow-list: an arrow that is not here is an error, and so is
 * a file in a folder that has no row), and test/lint/layers.test.ts checks the table against the
 * folders under src/ and every import in the code. docs/architecture.md#layout draws it.
 *
 * A row: `imports` — the rooms it may import (besides itself); `pure` — no Node built-ins,
 * frameworks, clock, timers, environment or global state; `packages` — packages it must not
 * import; `why` — why the folder sits where it does.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HONO = ['hono', 'hono/*', '@hono/*'];
const CLIENT = ['@kubernetes/client-node'];
/** A pure room: no Node built-ins, frameworks, clock, timers, environment or global state. */
const pure = (imports, why) => ({ imports: imports.split(' ').filter(Boolean), pure: true, packages: [], why });
/** An I/O room, and the packages it must still not import. */
const io = (imports, why, packages = []) => ({
  imports: imports.split(' ').filter(Boolean),
  pure: false,
  packages,
  why,
});

// `imports`: the rooms a room may import besides itself. A bare name is src/<name> when src/ has
// that room, else a top-level folder; `*src` is every src/ room. Read bottom-up: each row imports
// only rows above it, so the rooms have no cycle (test/lint/layers.test.ts proves it).
// prettier-ignore
export const LAYERS = {
  'src/k8s':            pure('', 'the leaf: wire schemas, quantities, selectors, sorting'),
  'src/contracts':      pure('k8s', 'what several processes must agree on: manufacturers, settings, the card'),
  'src/nodefeature':    pure('contracts k8s', 'the label algebra: keys, labels, object names, FNV-1a'),
  'src/dra':            pure('nodefeature contracts k8s', 'the DRA model: slices, classes, taints, the ledger'),
  'src/sync':           pure('dra nodefeature contracts k8s', 'the hooks: pure sync functions, one folder per controller'),
  'src/placement':      pure('dra nodefeature contracts k8s', "the checker's per-card decision"),
  'src/kueue':          pure('dra nodefeature contracts k8s', 'the Kueue configuration, built from the manufacturer table'),
  'src/render':         pure('sync dra nodefeature contracts k8s', 'the whole chain offline: it runs sync, never the reverse'),
  'src/runtime':        io('', "the processes' plumbing: logger, backoff, sleep", [...HONO, ...CLIENT]),
  'src/api-client':     io('', 'the API-server client the agent and the checker share', [...HONO, 'pino', 'prom-client']),
  native:               io('contracts k8s', 'the N-API device addon and its loader: the manufacturer names (k8s) and the card (contracts) are its types', [...HONO, ...CLIENT]),
  'src/server':         io('sync k8s runtime', 'the hook server: never the agent, the checker or the API client', CLIENT),
  'src/agent':          io('native api-client dra nodefeature contracts k8s runtime', 'the node agent: detect → labels and slices → publish', HONO),
  'src/kubelet-plugin': io('native api-client dra k8s runtime', "the agent's kubelet DRA plugin, beside it: the CLI wires the two", HONO),
  'src/admission':      io('placement dra nodefeature contracts k8s api-client runtime', 'the checker: it shares with the hooks only through contracts', HONO),
  'src/cli':            io('server agent kubelet-plugin admission render kueue dra nodefeature contracts k8s api-client runtime native', 'one file per command: it wires the processes'),
  eslint:               io('', 'this table and the lint rule it generates: nothing of the house'),
  scripts:              io('kueue k8s', 'generators of manifests/ and CI helpers'),
  harness:              io('*src native', 'the real components e2e and bench start, the fake machine, the example hook requests'),
  bench:                io('*src native harness dist', 'benchmarks: the built server (dist), the harness'),
  test:                 io('*src native harness bench scripts eslint', 'tests reach every room they test'),
};

/** The rooms an `imports` entry names: src/<name> when that is a room, `*src` every src/ room. */
function expand(name) {
  const srcRooms = Object.keys(LAYERS).filter((room) => room.startsWith('src/'));
  if (name === '*src') return srcRooms;
  return srcRooms.includes(`src/${name}`) ? [`src/${name}`] : [name];
}

/** The rooms `room` may import besides itself; undefined when it has no row. */
export function allowedRooms(room) {
  return LAYERS[room]?.imports.flatMap(expand);
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The room of a repository-relative path: `src/<folder>` under src/, else its top folder. */
export function roomOf(relativePath) {
  const parts = relativePath.split(/[\\/]/);
  return parts[0] === 'src' && parts.length > 2 ? `src/${parts[1]}` : parts[0];
}

/** The room a relative import specifier of `file` (absolute) lands in; undefined for a package. */
export function importedRoom(file, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  return roomOf(path.relative(REPO_ROOT, path.resolve(path.dirname(file), specifier)));
}

/** The ESLint rule `house/layers`: every relative import of a file is an arrow of the table. */
export const layersRule = {
  meta: { type: 'problem', schema: [], docs: { description: 'imports follow the arrows of eslint/layers.js' } },
  create(context) {
    const room = roomOf(path.relative(REPO_ROOT, context.filename));
    const allowed = allowedRooms(room);
    function check(node, source) {
      if (allowed === undefined || typeof source?.value !== 'string') return;
      const target = importedRoom(context.filename, source.value);
      if (target === undefined || target === room) return;
      if (!allowed.includes(target)) {
        const may = allowed.length === 0 ? 'nothing outside itself' : allowed.join(', ');
        context.report({
          node,
          message: `${room} may not import ${target}: not an arrow of eslint/layers.js (${room}: ${LAYERS[room].why}; it may import ${may})`,
        });
      }
    }
    return {
      Program(node) {
        if (allowed !== undefined) return;
        context.report({
          node,
          message: `${room} has no row in eslint/layers.js: add it, with what it may import and why`,
        });
      },
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source),
    };
  },
};
