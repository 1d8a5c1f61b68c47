/**
 * The shell examples of README.md and docs/*.md, run as written. Every ```sh block carries a mark in
 * its info string (docs/development.md#doc-examples):
 *
 * - `test`: run with `bash -euo pipefail` from the repository root; it must exit 0, print no
 *   `error:` line and leave the working tree as it found it;
 * - `serve`: a server that runs until stopped (a second terminal, for the reader): started here,
 *   awaited until it prints `listening on`, and stopped after the file's later blocks ran;
 * - `cluster`, `manual`: not run (a Kubernetes cluster; Docker, the native addon, hardware, or the
 *   test suite itself).
 *
 * Files run in order, README.md first: its first block builds dist/, which `npx gpustack-operator`
 * runs. The timeouts are hang guards for a busy machine, not speed assertions.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, docFiles, fencedBlocks, readDoc, type FencedBlock } from './markdown.js';

const SHELLS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const MARKS = ['test', 'serve', 'cluster', 'manual'] as const;
type Mark = (typeof MARKS)[number];

/** A block may run `npm run build` on a busy machine: a generous hang guard. */
const BLOCK_TIMEOUT_MS = 10 * 60_000;
/** How long a `serve` block may take to say it listens (npx, then Node.js start-up). */
const LISTEN_TIMEOUT_MS = 3 * 60_000;
/** A port another run holds is retried this often, a few seconds apart. */
const PORT_BUSY_RETRIES = 12;

/** Node.js 24 and the project's bins first, as `npm test` runs; npx adds the same. */
const ENV = { ...process.env, PATH: `${join(REPO, 'node_modules', '.bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}` };

interface Example extends FencedBlock {
  readonly file: string;
  readonly mark: Mark | undefined;
}

function examples(file: string): Example[] {
  return fencedBlocks(readDoc(file))
    .filter((block) => SHELLS.has(block.lang))
    .map((block) => ({
      ...block,
      file,
      mark:
        block.marks.length === 1 && (MARKS as readonly string[]).includes(block.marks[0] as string)
          ? (block.marks[0] as Mark)
          : undefined,
    }));
}

const FILES = docFiles();

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
}

/** bash in a process group of its own, so whatever the block leaves behind can be stopped with it. */
function startBash(script: string): ChildProcess {
  return spawn('bash', ['-e', '-u', '-o', 'pipefail', '-c', script], {
    cwd: REPO,
    env: ENV,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A timer that resolves `value` after `ms`, and can be cancelled so it keeps nothing alive. */
function timer<T>(ms: number, value: T): { readonly promise: Promise<T>; readonly cancel: () => void } {
  let handle: NodeJS.Timeout | undefined;
  const promise = new Promise<T>((resolve) => (handle = setTimeout(() => resolve(value), ms)));
  return { promise, cancel: () => clearTimeout(handle) };
}

function stopGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

function collect(child: ChildProcess, onOutput?: (all: string) => void): Promise<Run> {
  let output = '';
  const take = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    onOutput?.(output);
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, output })));
}

/** Runs a `test` block to its end; a block that hangs is killed by the guard. */
async function runBlock(script: string): Promise<Run> {
  const child = startBash(script);
  const guard = setTimeout(() => stopGroup(child, 'SIGKILL'), BLOCK_TIMEOUT_MS - 30_000);
  try {
    return await collect(child);
  } finally {
    clearTimeout(guard);
    stopGroup(child, 'SIGKILL'); // anything it started in the background
  }
}

interface Served {
  readonly child: ChildProcess;
  readonly done: Promise<Run>;
}

/** Starts a `serve` block and resolves once it says it listens; a port in use by another run is retried. */
async function startServer(script: string): Promise<Served> {
  for (let attempt = 0; ; attempt++) {
    const child = startBash(script);
    let listening: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    const done = collect(child, (all) => {
      if (/listening on/.test(all)) listening();
    });
    const guard = timer(LISTEN_TIMEOUT_MS, 'timeout' as const);
    const outcome = await Promise.race([ready.then(() => 'ready' as const), done, guard.promise]);
    guard.cancel();
    if (outcome === 'ready') return { child, done };
    stopGroup(child, 'SIGKILL');
    const run = outcome === 'timeout' ? await done : outcome;
    if (/port is in use/.test(run.output) && attempt < PORT_BUSY_RETRIES) {
      await timer(5_000, undefined).promise;
      continue;
    }
    throw new Error(
      `the server did not say it listens (${outcome === 'timeout' ? 'hang guard' : `exit ${run.code}`}):\n${run.output}`,
    );
  }
}

async function stopServer(served: Served): Promise<void> {
  stopGroup(served.child, 'SIGTERM');
  const guard = timer(15_000, undefined);
  const stopped = await Promise.race([served.done, guard.promise]);
  guard.cancel();
  if (stopped === undefined) {
    stopGroup(served.child, 'SIGKILL');
    await served.done;
  }
}

/** What `git status` shows: a block must leave nothing behind (ignored paths such as dist/ aside). */
function treeStatus(): Set<string> {
  const status = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: REPO, encoding: 'utf8' });
  return new Set(status.status === 0 ? status.stdout.split('\n').filter(Boolean) : []);
}

describe('every shell example in README.md and docs/ is marked', () => {
  it('finds the docs', () => {
    expect(FILES[0]).toBe('README.md');
    expect(FILES.length).toBeGreaterThan(1);
  });

  it.each(FILES)('%s: each sh block says test, serve, cluster or manual', (file) => {
    const unmarked = examples(file)
      .filter((e) => e.mark === undefined)
      .map((e) => `${file}:${e.line}: \`\`\`${[e.lang, ...e.marks].join(' ')}`);
    expect(unmarked).toEqual([]);
  });

  it("runs the README's five-minute path: a render, the hook server and a curl to it", () => {
    const readme = examples('README.md');
    expect(
      readme
        .filter((e) => e.mark === 'test')
        .map((e) => e.content)
        .join('\n'),
    ).toMatch(/npm run build[\s\S]*render[\s\S]*curl /);
    expect(readme.some((e) => e.mark === 'serve')).toBe(true);
  });
});

for (const file of FILES.filter((f) => examples(f).length > 0)) {
  describe(`${file}, as written`, () => {
    let server: Served | undefined;
    afterAll(async () => {
      if (server !== undefined) await stopServer(server);
    });

    for (const example of examples(file)) {
      const where = `${file}:${example.line}`;
      if (example.mark === 'cluster' || example.mark === 'manual' || example.mark === undefined) {
        it.skip(`${where} (${example.mark ?? 'unmarked'})`, () => undefined);
      } else if (example.mark === 'serve') {
        it(
          `${where} starts and listens`,
          async () => {
            if (server !== undefined) await stopServer(server);
            server = await startServer(example.content);
          },
          BLOCK_TIMEOUT_MS,
        );
      } else {
        it(
          `${where} runs`,
          async () => {
            // Run on its own (vitest -t), a block after the README's build still needs dist/.
            if (/npx gpustack-operator/.test(example.content) && !existsSync(join(REPO, 'dist/src/cli/main.js')))
              expect((await runBlock('npm run build')).code).toBe(0);
            const before = treeStatus();
            const run = await runBlock(example.content);
            const errors = run.output.split('\n').filter((line) => line.startsWith('error:'));
            expect({ code: run.code, signal: run.signal, errors }, run.output).toEqual({
              code: 0,
              signal: null,
              errors: [],
            });
            expect(
              [...treeStatus()].filter((entry) => !before.has(entry)),
              'left in the working tree',
            ).toEqual([]);
          },
          BLOCK_TIMEOUT_MS,
        );
      }
    }
  });
}
