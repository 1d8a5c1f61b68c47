// Lint enforces the dependency direction of DESIGN §2:
// server → sync → nodefeature → k8s, agent → native, agent → nodefeature, agent → kube,
// admission → sync | kube (and what sync imports). kube is the shared API client: it imports no src/.
// sync, nodefeature and k8s are pure: no hono, client-node, native code, I/O modules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const IO_MODULES = [
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'net',
  'node:net',
  'http',
  'node:http',
  'https',
  'node:https',
  'child_process',
  'node:child_process',
  'process',
  'node:process',
  'os',
  'node:os',
  'worker_threads',
  'node:worker_threads',
  'dgram',
  'node:dgram',
];
const FRAMEWORKS = ['hono', 'hono/*', '@hono/*', '@kubernetes/client-node', 'pino', 'prom-client'];

/** Forbid imports of the given src/ folders (relative paths of any depth) and packages. */
function restrict(folders, packages, message) {
  return {
    'no-restricted-imports': [
      'error',
      {
        paths: packages.filter((p) => !p.includes('*')).map((name) => ({ name, message })),
        patterns: [
          ...folders.map((f) => ({ group: [`**/${f}`, `**/${f}/**`], message })),
          ...packages.filter((p) => p.includes('*')).map((p) => ({ group: [p], message })),
        ],
      },
    ],
  };
}

const PURE_GLOBALS_RULE = {
  'no-restricted-globals': [
    'error',
    { name: 'process', message: 'pure code reads no environment: pass settings in' },
    { name: 'fetch', message: 'pure code does no I/O' },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Date', property: 'now', message: 'pure code reads no clock: take a `now` argument' },
    { object: 'Math', property: 'random', message: 'pure code must be deterministic' },
    { object: 'console', message: 'pure code does not log' },
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
    files: ['src/k8s/**/*.ts'],
    rules: {
      ...restrict(
        ['nodefeature', 'sync', 'server', 'agent', 'admission', 'kube', 'native', 'cli', 'cli.js'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/k8s is the leaf: it imports nothing from src/ and does no I/O',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/nodefeature/**/*.ts'],
    rules: {
      ...restrict(
        ['sync', 'server', 'agent', 'admission', 'kube', 'native', 'cli', 'cli.js'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/nodefeature may import only src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/sync/**/*.ts'],
    rules: {
      ...restrict(
        ['server', 'agent', 'admission', 'kube', 'native', 'cli', 'cli.js'],
        [...IO_MODULES, ...FRAMEWORKS],
        'src/sync may import only src/nodefeature and src/k8s and is pure',
      ),
      ...PURE_GLOBALS_RULE,
    },
  },
  {
    files: ['src/server/**/*.ts'],
    rules: restrict(
      ['agent', 'admission', 'kube', 'native', 'cli', 'cli.js'],
      ['@kubernetes/client-node'],
      'src/server imports src/sync and src/k8s, never the agent, the admission checker, the API client or native code',
    ),
  },
  {
    files: ['src/agent/**/*.ts'],
    rules: restrict(
      ['sync', 'server', 'admission', 'cli', 'cli.js'],
      ['hono', 'hono/*', '@hono/*'],
      'src/agent imports native/, src/kube, src/nodefeature and src/k8s, never sync, server or admission',
    ),
  },
  {
    files: ['src/kube/**/*.ts'],
    rules: restrict(
      ['k8s', 'nodefeature', 'sync', 'server', 'agent', 'admission', 'native', 'cli', 'cli.js'],
      ['hono', 'hono/*', '@hono/*', 'pino', 'prom-client'],
      'src/kube is the shared API client: it imports nothing from src/',
    ),
  },
  {
    files: ['src/admission/**/*.ts'],
    rules: restrict(
      ['server', 'agent', 'native', 'cli', 'cli.js'],
      ['hono', 'hono/*', '@hono/*'],
      'src/admission imports src/sync, src/kube (and src/nodefeature, src/k8s), never server, agent or native code',
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
