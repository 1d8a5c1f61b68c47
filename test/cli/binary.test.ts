/**
 * The built `gpustack-operator` binary: `render` exit codes and messages, and `serve` answering
 * over HTTP on 127.0.0.1 and stopping cleanly on SIGTERM. The sources are compiled once, without
 * type checking (that is `npm run typecheck`'s job), into a private folder under node_modules/.cache
 * so that a concurrent `npm run build` into dist/ cannot race with this test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
/** One CLI start imports the whole program (client-node included): seconds, more on a loaded machine. */
const CLI_TIMEOUT_MS = 60_000;

const SIX_FLAVORS = [
  'gpustack-generic-linux-amd64-16c',
  'gpustack-generic-linux-amd64-48c',
  'gpustack-generic-linux-amd64-4c',
  'gpustack-nvidia-a10g-linux-amd64-1d',
  'gpustack-nvidia-tesla-t4-linux-amd64-1d',
  'gpustack-nvidia-tesla-t4-linux-amd64-4d',
];

interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function collect(child: ChildProcess): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let outDir = '';
let scratch = '';

function cli(...args: string[]): Promise<Run> {
  return collect(spawn(process.execPath, [join(outDir, 'src', 'cli.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] }));
}

beforeAll(async () => {
  mkdirSync(join(REPO, 'node_modules', '.cache'), { recursive: true });
  outDir = mkdtempSync(join(REPO, 'node_modules', '.cache', 'cli-test-'));
  scratch = mkdtempSync(join(tmpdir(), 'gpustack-cli-'));
  const build = await collect(spawn(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--outDir', outDir, '--noCheck', '--sourceMap', 'false'], { cwd: REPO }));
  if (build.code !== 0) throw new Error(`tsc failed (${build.code}):\n${build.stdout}${build.stderr}`);
}, 120_000);

afterAll(() => {
  if (outDir) rmSync(outDir, { recursive: true, force: true });
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.concurrent('gpustack-operator render', () => {
  it('prints the labels and objects of the reference cluster as JSON, and the same document as YAML by default (exit 0)', async () => {
    const [json, yaml] = await Promise.all([
      cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml', '-o', 'json'),
      cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml'),
    ]);

    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    const output = JSON.parse(json.stdout) as { nodes: { name: string }[]; objects: { kind: string; metadata: { name: string } }[] };
    expect(output.nodes.map((n) => n.name)).toEqual(['node-a10g', 'node-cpu', 'node-t4-a', 'node-t4-b']);
    expect(output.objects.filter((o) => o.kind === 'ResourceFlavor').map((o) => o.metadata.name)).toEqual(SIX_FLAVORS);
    expect(yaml.code).toBe(0);
    // Two runs may straddle a second boundary: compare without condition times.
    const withoutTimes = (text: string) => text.replace(/"lastTransitionTime":"[^"]*"/g, '"lastTransitionTime":""');
    expect(withoutTimes(JSON.stringify(parse(yaml.stdout)))).toBe(withoutTimes(JSON.stringify(output)));
  }, CLI_TIMEOUT_MS);

  it('exits 2 with the usage when --nodes is missing', async () => {
    const run = await cli('render');

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: render: --nodes FILE is required\n\nUsage: gpustack-operator <command> \[options\]/);
  }, CLI_TIMEOUT_MS);

  it('exits 1 naming a file that does not exist', async () => {
    const run = await cli('render', '--nodes', 'examples/clusters/no-such-cluster.yaml');

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("error: ENOENT: no such file or directory, open 'examples/clusters/no-such-cluster.yaml'\n");
  }, CLI_TIMEOUT_MS);

  it('exits 1 naming spec.generalKey of an invalid --chain', async () => {
    const chain = join(scratch, 'chain.yaml');
    writeFileSync(chain, 'apiVersion: worker.gpustack.ai/v1alpha1\nkind: SchedulingChain\nmetadata:\n  name: default\nspec:\n  generalKey: Bogus\n');

    const run = await cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml', '--chain', chain);

    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: InvalidSettings: SchedulingChain default: spec\.generalKey: /);
  }, CLI_TIMEOUT_MS);
});

describe('gpustack-operator serve', () => {
  it('answers on 127.0.0.1, limits bodies to --max-body and exits 0 within 5 s of SIGTERM', async () => {
    // --port 0: the kernel picks a free port, which the startup banner names.
    const args = ['serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', '--max-body', '64Ki'];
    const child = spawn(process.execPath, [join(outDir, 'src', 'cli.js'), ...args], {
      cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let seen = '';
        child.stdout.on('data', (chunk: Buffer) => {
          seen += chunk.toString();
          const match = /hook server on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(seen);
          if (match?.[1]) resolve(match[1]);
        });
        child.on('close', (code) => reject(new Error(`serve exited ${code} before listening:\n${seen}`)));
      });

      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      const hook = await fetch(`${base}/hooks/scheduling-chain/sync`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: readFileSync(join(REPO, 'examples/hooks/scheduling-chain.sync.json')),
      });
      expect(hook.status).toBe(200);
      expect(((await hook.json()) as { children: unknown[] }).children).toHaveLength(10);
      const tooLarge = await fetch(`${base}/hooks/scheduling-chain/sync`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ padding: 'x'.repeat(65 * 1024) }),
      });
      expect(tooLarge.status).toBe(413);
      expect(await tooLarge.json()).toEqual({ error: { code: 'PayloadTooLarge', message: 'request body exceeds 65536 bytes (--max-body)' } });
      const metrics = await (await fetch(`${base}/metrics`)).text();
      expect(metrics).toContain('gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="413"} 1');
      expect(metrics).toContain('process_cpu_seconds_total');

      const stoppedAt = Date.now();
      child.kill('SIGTERM');
      const run = await Promise.race([done, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('serve did not exit within 5 s of SIGTERM')), 5_000))]);
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(Date.now() - stoppedAt).toBeLessThan(5_000);
      expect(run.stderr).toBe('');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, CLI_TIMEOUT_MS);
});
