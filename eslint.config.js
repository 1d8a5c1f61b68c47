// Lint enforces the house's rooms and arrows, generated from the one table in eslint/layers.js (drawn
// in docs/architecture.md#layout): `house/layers` rejects an import that is not an arrow of the
// table, and a file in a folder without a row; each src/ room and native/ also gets its forbidden
// packages, and the pure rooms (sync, render, placement, kueue, dra, nodefeature, contracts, k8s)
// no Node built-ins, frameworks, clock, timers, environment or global state. Everywhere in src/ and
// native/, another folder is imported only through its index.js.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import { LAYERS, layersRule } from './eslint/layers.js';

// Every Node.js built-in, bare and `node:`-prefixed: pure code imports none of them.
const BUILTIN_MODULES = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];
const FRAMEWORKS = ['hono', 'hono/*', '@hono/*', '@kubernetes/client-node', 'pino', 'prom-client'];

// A folder's index.ts is its public surface: `../labels/index.js` is fine, `../labels/keys.js` is
// not, at any depth (`../../nodefeature/labels.js`) and into a child folder (`./render/render.js`).
const INDEX_ONLY = {
  regex: '^(\\.\\./)*\\.{1,2}/(?:[^/]+/)*[^/]+/(?!index\\.js$)[^/]+$',
  message: "import another folder through its index.js (the folder's public surface)",
};

/** Forbid the given packages (and another folder past its index) in a room. */
function restrictPackages(room, packages) {
  const { pure, why } = LAYERS[room];
  const message = pure
    ? `${room} is pure (${why}): no Node built-ins, frameworks or I/O`
    : `${room} does not import this package (eslint/layers.js: ${why})`;
  return {
    'no-restricted-imports': [
      'error',
      {
        paths: packages.filter((p) => !p.includes('*')).map((name) => ({ name, message })),
        patterns: [INDEX_ONLY, ...packages.filter((p) => p.includes('*')).map((p) => ({ group: [p], message }))],
      },
    ],
  };
}

/** One config block per src/ room and native/: its packages, and purity where the table says so. */
function roomBlocks() {
  return Object.entries(LAYERS)
    .filter(([room]) => room.startsWith('src/') || room === 'native')
    .map(([room, row]) => ({
      files: [`${room}/**/*.ts`],
      rules: {
        ...restrictPackages(room, row.pure ? [...BUILTIN_MODULES, ...FRAMEWORKS] : row.packages),
        ...(row.pure ? PURE_GLOBALS_RULE : {}),
      },
    }));
}

const CLOCK = 'pure code reads no clock: take a `now` argument';
const PURE_GLOBALS_RULE = {
  'no-restricted-globals': [
    'error',
    { name: 'process', message: 'pure code reads no environment: pass settings in' },
    { name: 'globalThis', message: 'pure code reaches no global state (globalThis.process, …)' },
    { name: 'global', message: 'pure code reaches no global state' },
    { name: 'fetch', message: 'pure code does no I/O' },
    { name: 'crypto', message: 'pure code must be deterministic' },
    { name: 'performance', message: CLOCK },
    ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate'].map((name) => ({
      name,
      message: 'pure code schedules nothing: return desired state',
    })),
    { name: 'queueMicrotask', message: 'pure code schedules nothing: return desired state' },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: CLOCK },
    { object: 'Math', property: 'random', message: 'pure code must be deterministic' },
    { object: 'console', message: 'pure code does not log' },
  ],
  // `Date` as a type is fine (a `now` argument); constructing one is a clock read or a detour.
  'no-restricted-syntax': [
    'error',
    { selector: "NewExpression[callee.name='Date']", message: CLOCK },
    { selector: "CallExpression[callee.name='Date']", message: CLOCK },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**', 'build/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Files outside the layered folders (the CLI) still go through each folder's index.js.
    files: ['src/**/*.ts', 'native/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [INDEX_ONLY] }] },
  },
  {
    // Every room's imports are arrows of eslint/layers.js.
    files: ['{src,native,eslint,scripts,harness,bench,test}/**/*.{ts,mjs,js}'],
    plugins: { house: { rules: { layers: layersRule } } },
    rules: { 'house/layers': 'error' },
  },
  ...roomBlocks(),
);
