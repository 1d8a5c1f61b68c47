// Lint enforces the dependency direction of docs/architecture.md#layout:
// server → sync → nodefeature → contracts → k8s, agent → native, agent → nodefeature, agent → api-client,
// admission → placement | contracts | api-client (never sync); render → sync; server, agent, admission → runtime
// (shared plumbing); dra (the DRA model) sits beside nodefeature: agent, sync, kueue, placement and
// admission import it; placement and render are pure like sync.
// contracts holds what several processes must agree on (the manufacturer table, settings resolution,
// the card): every folder but k8s, api-client and runtime may import it, and it imports only k8s.
// api-client is the shared API-server client and runtime the processes' plumbing: neither imports src/.
// sync, nodefeature, contracts and k8s are pure: no hono, client-node, native code, Node built-ins, no clock,
// timers, environment or global state. Everywhere in src/, another folder is imported only through its index.js.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

// Every Node.js built-in, bare and `node:`-prefixed: pure code imports none of them.
const BUILTIN_MODULES = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];
const IO_MODULES = BUILTIN_MODULES;
const FRAMEWORKS = ['hono', 'hono/*', '@hono/*', '@kubernetes/client-node', 'pino', 'prom-client'];

// A folder's index.ts is its public surface: `../labels/index.js` is fine, `../labels/keys.js` is
// not, at any depth (`../../nodefeature/labels.js`) and into a child folder (`./render/render.js`).
const INDEX_ONLY = {
  regex: '^(\\.\\./)*\\.{1,2}/(?:[^/]+/)*[^/]+/(?!index\\.js$)[^/]+$',
  message: "import another folder through its index.js (the folder's public surface)",
};

/** Forbid imports of the given src/ folders (relative paths of any depth) and packages. */
function restrict(folders, packages, message) {
  return {
    'no-restricted-imports': [
      'error',
      {
        paths: packages.filter((p) => !p.includes('*')).map((name) => ({ name, message })),
        patterns: [
          INDEX_ONLY,
          ...folders.map((f) => ({ group: [`**/${f}`, `**/${f}/**`], message })),
          ...packages.filter((p) => p.includes('*')).map((p) => ({ group: [p], message })),
        ],
      },
    ],
  };
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
    files: ['src/k8s/**/*.ts'],
    rules: {
      ...restrict(
        [
          'contracts',
          'nodefeature',
          'dra',
          'sync',
          'placement',
          'render',
          'server',
          'agent',
          'admission',
          'api-client',
          'runtime',
          'native',
          'cli',
        ],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/k8s is the leaf: it imports nothing from src/ and does no I/O',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/contracts/**/*.ts'],
    rules: {
      ...restrict(
        [
          'nodefeature',
          'dra',
          'sync',
          'placement',
          'render',
          'kueue',
          'server',
          'agent',
          'admission',
          'kubelet-plugin',
          'api-client',
          'runtime',
          'native',
          'cli',
        ],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/contracts (what several processes must agree on) may import only src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/nodefeature/**/*.ts'],
    rules: {
      ...restrict(
        [
          'dra',
          'sync',
          'placement',
          'render',
          'server',
          'agent',
          'admission',
          'api-client',
          'runtime',
          'native',
          'cli',
        ],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/nodefeature may import only src/contracts and src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/sync/**/*.ts'],
    rules: {
      ...restrict(
        ['placement', 'render', 'server', 'agent', 'admission', 'api-client', 'runtime', 'native', 'cli'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/sync may import only src/dra, src/nodefeature, src/contracts and src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/placement/**/*.ts'],
    rules: {
      ...restrict(
        ['sync', 'render', 'server', 'agent', 'admission', 'api-client', 'runtime', 'native', 'cli'],
        [...IO_MODULES, ...FRAMEWORKS],
        "src/placement (the checker's per-card decision) may import only src/dra, src/nodefeature, src/contracts and src/k8s and is pure",
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/dra/**/*.ts'],
    rules: {
      ...restrict(
        [
          'sync',
          'placement',
          'render',
          'server',
          'agent',
          'admission',
          'api-client',
          'kueue',
          'runtime',
          'native',
          'cli',
        ],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/dra (the DRA model: slices, classes, the ledger) may import only src/nodefeature, src/contracts and src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/kueue/**/*.ts'],
    rules: {
      ...restrict(
        ['sync', 'placement', 'render', 'server', 'agent', 'admission', 'api-client', 'runtime', 'native', 'cli'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/kueue (the Kueue configuration) may import only src/dra, src/nodefeature, src/contracts and src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/render/**/*.ts'],
    rules: {
      ...restrict(
        ['placement', 'server', 'agent', 'admission', 'api-client', 'runtime', 'native', 'cli'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/render runs the sync functions offline: it imports src/sync (and what sync imports) and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/server/**/*.ts'],
    rules: restrict(
      ['placement', 'render', 'agent', 'admission', 'api-client', 'native', 'cli'],
      ['@kubernetes/client-node'],
      'src/server imports src/sync and src/k8s, never the agent, the admission checker, the API client or native code',
    ),
  },
  {
    files: ['src/agent/**/*.ts'],
    rules: restrict(
      ['placement', 'render', 'sync', 'server', 'admission', 'cli'],
      ['hono', 'hono/*', '@hono/*'],
      'src/agent imports native/, src/api-client, src/dra, src/nodefeature, src/contracts and src/k8s, never sync, server or admission',
    ),
  },
  {
    // The kubelet DRA plugin: I/O code like the agent, beside it (the CLI wires the two).
    files: ['src/kubelet-plugin/**/*.ts'],
    rules: restrict(
      ['placement', 'render', 'sync', 'server', 'admission', 'agent', 'cli'],
      ['hono', 'hono/*', '@hono/*'],
      'src/kubelet-plugin imports src/dra, src/api-client, native/ (types), src/k8s and src/runtime, never the agent, sync or server',
    ),
  },
  {
    files: ['src/runtime/**/*.ts'],
    rules: restrict(
      [
        'placement',
        'render',
        'k8s',
        'contracts',
        'nodefeature',
        'dra',
        'sync',
        'server',
        'agent',
        'admission',
        'api-client',
        'native',
        'cli',
      ],
      ['hono', 'hono/*', '@hono/*', '@kubernetes/client-node'],
      'src/runtime is shared plumbing of the processes: it imports nothing from src/',
    ),
  },
  {
    files: ['src/api-client/**/*.ts'],
    rules: restrict(
      [
        'placement',
        'render',
        'k8s',
        'contracts',
        'nodefeature',
        'dra',
        'sync',
        'server',
        'agent',
        'admission',
        'native',
        'cli',
      ],
      ['hono', 'hono/*', '@hono/*', 'pino', 'prom-client'],
      'src/api-client is the shared API client: it imports nothing from src/',
    ),
  },
  {
    files: ['src/admission/**/*.ts'],
    rules: restrict(
      ['sync', 'render', 'server', 'agent', 'native', 'cli'],
      ['hono', 'hono/*', '@hono/*'],
      'src/admission imports src/placement, src/dra, src/contracts, src/api-client (and src/nodefeature, src/k8s), never sync, server, agent or native code: what it shares with the controllers lives in src/contracts',
    ),
  },
  {
    files: ['native/**/*.ts'],
    rules: restrict(
      ['src'],
      ['hono', 'hono/*', '@hono/*', '@kubernetes/client-node'],
      'native/ is a leaf: only the agent imports it',
    ),
  },
);
