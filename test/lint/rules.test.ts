// The layering and purity rules of eslint.config.js, proven to fire: each probe is linted as if it
// were a file at `path`, and must be reported by `rule` (`house/layers`: the arrows of
// eslint/layers.js; test/lint/layers.test.ts walks the whole table). A rule that silently stops matching (a
// config override, a pattern typo) fails here instead of letting impure code into src/sync.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: REPO_ROOT });

async function ruleIds(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO_ROOT, file) });
  return (result?.messages ?? []).map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

const PROBES: { name: string; path: string; code: string; rule: string }[] = [
  {
    name: 'globalThis.process.env',
    path: 'src/sync/probe.ts',
    code: 'export const env = globalThis.process.env;',
    rule: 'no-restricted-globals',
  },
  {
    name: 'process.env',
    path: 'src/nodefeature/probe.ts',
    code: 'export const env = process.env;',
    rule: 'no-restricted-globals',
  },
  { name: 'global', path: 'src/k8s/probe.ts', code: 'export const g = global;', rule: 'no-restricted-globals' },
  {
    name: 'node:fs in the DRA model',
    path: 'src/dra/probe.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'Date.now() in the DRA model',
    path: 'src/dra/probe.ts',
    code: 'export const t = Date.now();',
    rule: 'no-restricted-properties',
  },
  {
    name: 'the DRA model importing the agent',
    path: 'src/dra/probe.ts',
    code: "import { runCycle } from '../agent/index.js';\nexport const r = runCycle;",
    rule: 'house/layers',
  },
  {
    name: 'nodefeature importing the DRA model',
    path: 'src/nodefeature/probe.ts',
    code: "import { driverName } from '../dra/index.js';\nexport const d = driverName;",
    rule: 'house/layers',
  },
  {
    name: 'contracts importing the label algebra (contracts sits below it)',
    path: 'src/contracts/probe.ts',
    code: "import { GPUSTACK } from '../nodefeature/index.js';\nexport const g = GPUSTACK;",
    rule: 'house/layers',
  },
  {
    name: 'the leaf importing contracts',
    path: 'src/k8s/probe.ts',
    code: "import { MANUFACTURERS } from '../contracts/index.js';\nexport const m = MANUFACTURERS;",
    rule: 'house/layers',
  },
  {
    name: 'process.env in contracts',
    path: 'src/contracts/probe.ts',
    code: 'export const env = process.env;',
    rule: 'no-restricted-globals',
  },
  {
    name: 'the admission checker importing sync (what they share lives in src/contracts)',
    path: 'src/admission/probe.ts',
    code: "import { settingsForNodes } from '../sync/index.js';\nexport const s = settingsForNodes;",
    rule: 'house/layers',
  },
  {
    name: 'new Date()',
    path: 'src/sync/probe.ts',
    code: 'export const now = new Date();',
    rule: 'no-restricted-syntax',
  },
  {
    name: 'new Date(x)',
    path: 'src/k8s/probe.ts',
    code: 'export const d = new Date(0);',
    rule: 'no-restricted-syntax',
  },
  { name: 'Date()', path: 'src/k8s/probe.ts', code: 'export const d = Date();', rule: 'no-restricted-syntax' },
  {
    name: 'Date.now()',
    path: 'src/sync/probe.ts',
    code: 'export const now = Date.now();',
    rule: 'no-restricted-properties',
  },
  {
    name: 'performance.now()',
    path: 'src/nodefeature/probe.ts',
    code: 'export const t = performance.now();',
    rule: 'no-restricted-globals',
  },
  {
    name: 'setTimeout',
    path: 'src/k8s/probe.ts',
    code: 'export const t = setTimeout(() => undefined, 1);',
    rule: 'no-restricted-globals',
  },
  {
    name: 'queueMicrotask',
    path: 'src/sync/probe.ts',
    code: 'queueMicrotask(() => undefined);',
    rule: 'no-restricted-globals',
  },
  {
    name: 'global crypto',
    path: 'src/sync/probe.ts',
    code: 'export const id = crypto.randomUUID();',
    rule: 'no-restricted-globals',
  },
  {
    name: 'node:crypto',
    path: 'src/sync/probe.ts',
    code: "import { randomUUID } from 'node:crypto';\nexport const id = randomUUID();",
    rule: 'no-restricted-imports',
  },
  {
    name: 'bare crypto',
    path: 'src/nodefeature/probe.ts',
    code: "import { createHash } from 'crypto';\nexport const h = createHash;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'node:path',
    path: 'src/k8s/probe.ts',
    code: "import path from 'node:path';\nexport const p = path;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'another folder past its index (sync → nodefeature)',
    path: 'src/sync/probe.ts',
    code: "import { GPUSTACK } from '../nodefeature/labels.js';\nexport const g = GPUSTACK;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'another folder past its index, two levels up',
    path: 'src/sync/node-profile/probe.ts',
    code: "import { x } from '../../nodefeature/labels.js';\nexport const g = x;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'a sibling folder past its index',
    path: 'src/sync/node-profile/probe.ts',
    code: "import { x } from '../common/settings.js';\nexport const g = x;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'a child folder past its index',
    path: 'src/sync/probe.ts',
    code: "import { x } from './render/render.js';\nexport const g = x;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'the server past a folder index',
    path: 'src/server/probe.ts',
    code: "import { x } from '../sync/common/settings.js';\nexport const g = x;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'the CLI past a folder index',
    path: 'src/probe.ts',
    code: "import { x } from './server/app.js';\nexport const g = x;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'the agent past the native index',
    path: 'src/agent/probe.ts',
    code: "import type { X } from '../../native/types.js';\nexport type G = X;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'the kubelet plugin importing the agent',
    path: 'src/kubelet-plugin/probe.ts',
    code: "import { runAgent } from '../agent/index.js';\nexport const r = runAgent;",
    rule: 'house/layers',
  },
  {
    name: "sync importing the processes' plumbing",
    path: 'src/sync/probe.ts',
    code: "import { sleep } from '../runtime/index.js';\nexport const s = sleep;",
    rule: 'house/layers',
  },
  {
    name: 'placement reading the clock',
    path: 'src/placement/probe.ts',
    code: 'export const now = Date.now();',
    rule: 'no-restricted-properties',
  },
  {
    name: 'render importing node:fs',
    path: 'src/render/probe.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;",
    rule: 'no-restricted-imports',
  },
  {
    name: 'sync importing render (render runs sync, not the reverse)',
    path: 'src/sync/probe.ts',
    code: "import { renderChain } from '../render/index.js';\nexport const r = renderChain;",
    rule: 'house/layers',
  },
  {
    name: 'sync importing the server',
    path: 'src/sync/probe.ts',
    code: "import { x } from '../server/index.js';\nexport const g = x;",
    rule: 'house/layers',
  },
];

describe('lint rules fire on probe files', () => {
  it.each(PROBES)('$name in $path → $rule', async ({ path: file, code, rule }) => {
    expect(await ruleIds(file, code)).toContain(rule);
  });

  it('a pure file that uses Date as a type and imports through index.js passes', async () => {
    const code = [
      "import { rfc3339Seconds } from '../k8s/index.js';",
      "import { helper } from './sibling.js';",
      'export function stamp(now: Date): string {',
      '  return rfc3339Seconds(now) + String(helper);',
      '}',
    ].join('\n');
    expect(await ruleIds('src/sync/probe.ts', code)).toEqual([]);
  });
});
