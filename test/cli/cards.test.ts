/**
 * `gpustack-operator cards` as a process (the built binary) against a stand-in API server: one
 * list per kind, never a call per node; the table and `-o json|yaml|wide`; the filters; a cluster
 * serving no DeviceTaintRule said once; an unknown node or pool one line and exit 1; a bad flag exit
 * 2. What the rows hold is tested on the pure view (test/dra/card-view.test.ts) and against a real
 * cluster (test/e2e/cards.e2e.test.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatBytes, formatCardTable, formatUnits } from '../../src/cli/cards.js';
import { buildCardRows, buildDeviceLedger } from '../../src/dra/index.js';
import { kubeConfigText, startFakeKube, type FakeKube } from '../admission/support.js';
import { allocatedClaim, nodePool } from '../dra/builders.js';
import { gpuNode } from '../placement/builders.js';
import { compiledCli } from '../support/compiled-cli.js';

const CLI_TIMEOUT_MS = 180_000;
const POOL = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64';

let kube: FakeKube;
let scratch = '';
let kubeconfig = '';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cards(...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiledCli(), 'cards', '--kubeconfig', kubeconfig, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  // As Kubernetes 1.36 by default: no DeviceTaintRule served.
  kube = await startFakeKube({ servesTaintRules: false });
  scratch = mkdtempSync(join(tmpdir(), 'gpustack-cards-'));
  kubeconfig = join(scratch, 'kubeconfig');
  writeFileSync(kubeconfig, kubeConfigText(kube.url));
  for (const node of ['gpu-a', 'gpu-b']) {
    kube.upsert('nodes', gpuNode(node, 2) as unknown as Record<string, unknown>);
    for (const slice of nodePool(node, 2)) kube.upsert('resourceslices', slice as unknown as Record<string, unknown>);
  }
  for (const claim of [
    allocatedClaim('train', [{ node: 'gpu-a', device: 'card-0' }]),
    allocatedClaim('infer', [
      { node: 'gpu-b', device: 'card-1-shared', consumed: { memory: '20Gi', units: '400k', cores: '25' } },
    ]),
  ])
    kube.upsert('resourceclaims', claim as unknown as Record<string, unknown>);
  kube.upsert('instancetypes', {
    apiVersion: 'worker.gpustack.ai/v1alpha1',
    kind: 'InstanceType',
    metadata: { name: POOL },
    spec: { acceleratable: true, acceleratorGroup: 'nvidia-h100-80gb-hbm3', os: 'linux', arch: 'amd64' },
  });
});

afterAll(async () => {
  await kube?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('gpustack-operator cards', () => {
  it(
    'lists each kind once (no call per node) and prints every card as JSON; no DeviceTaintRule served, said once',
    async () => {
      const before = kube.requests.length;
      const run = await cards('-o', 'json');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr.trim().split('\n')).toEqual([
        'warning: this cluster serves no DeviceTaintRule (/apis/resource.k8s.io/v1 or v1beta2): CORDONED shows only what the slices say',
      ]);
      const paths = kube.requests.slice(before).map((r) => r.path.split('?')[0]);
      for (const kind of ['resourceslices', 'resourceclaims', 'nodes', 'instancetypes'])
        expect(
          paths.filter((p) => p?.endsWith(`/${kind}`)),
          kind,
        ).toHaveLength(1);
      expect(paths.filter((p) => /\/(nodes|resourceslices)\/./.test(p ?? ''))).toEqual([]);
      const rows = (JSON.parse(run.stdout) as { cards: { node: string; card: string; state: string; pool: string }[] })
        .cards;
      expect(rows.map((r) => `${r.node}/${r.card} ${r.state}`)).toEqual([
        'gpu-a/card-0 whole',
        'gpu-a/card-1 free',
        'gpu-b/card-0 free',
        'gpu-b/card-1 shared',
      ]);
      expect(rows.every((r) => r.pool === POOL)).toBe(true);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'prints a table (and -o wide, -o yaml) with holders and promised memory',
    async () => {
      const [table, wide, yaml] = await Promise.all([cards(), cards('-o', 'wide'), cards('-oyaml')]);
      expect(table.code, table.stderr).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^NODE\s+CARD\s+MODEL\s+MEMORY\s+STATE\s+PROMISED\s+HOLDERS\s+CORDONED\s+HEALTH$/);
      expect(lines[1]).toMatch(
        /^gpu-a\s+0\s+nvidia-h100-80gb-hbm3\s+80Gi\s+whole\s+80Gi \(100%\)\s+team-a\/train-pod\s+no\s+ok$/,
      );
      expect(lines[4]).toMatch(/^gpu-b\s+1\s+\S+\s+80Gi\s+shared \(1\)\s+20Gi \(25%\)\s+team-a\/infer-pod\s+no\s+ok$/);
      expect(wide.stdout.split('\n')[0]).toMatch(/POOL\s+UNITS\s+UNITS-PROMISED\s+CLAIMS\s+TAINTS$/);
      expect(wide.stdout).toContain(`${POOL}   1600k   400k`);
      expect((parse(yaml.stdout) as { cards: unknown[] }).cards).toHaveLength(4);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'filters by node, pool and namespace; an unknown node or pool is one error line and exit 1',
    async () => {
      const [node, pool, namespace, none, unknownNode, unknownPool] = await Promise.all([
        cards('-o', 'json', '--node', 'gpu-b'),
        cards('-o', 'json', '--pool', POOL),
        cards('-o', 'json', '-n', 'team-a'),
        cards('--namespace', 'team-b'),
        cards('--node', 'gpu-z'),
        cards('--pool', 'nope'),
      ]);
      const names = (run: Run) =>
        (JSON.parse(run.stdout) as { cards: { node: string; card: string }[] }).cards.map((r) => `${r.node}/${r.card}`);
      expect(names(node)).toEqual(['gpu-b/card-0', 'gpu-b/card-1']);
      expect(names(pool)).toHaveLength(4);
      expect(names(namespace)).toEqual(['gpu-a/card-0', 'gpu-b/card-1']);
      expect(none.stdout).toBe('No cards.\n');
      expect(unknownNode.code).toBe(1);
      expect(unknownNode.stderr).toContain(
        'error: node "gpu-z" publishes no cards of ours (no ResourceSlice of our drivers names it)\n',
      );
      expect(unknownPool.code).toBe(1);
      expect(unknownPool.stderr).toContain(
        'error: pool "nope": no InstanceType of that name with cards (acceleratable)\n',
      );
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'refuses a bad output, name or subcommand with the usage (exit 2), before calling the cluster',
    async () => {
      const [output, name, sub] = await Promise.all([
        cards('-o', 'xml'),
        cards('--node', 'Not_A_Name'),
        cards('drain', 'gpu-a'),
      ]);
      for (const run of [output, name, sub]) {
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(/\n\nUsage: gpustack-operator cards \[options\]/);
      }
      expect(output.stderr).toMatch(/^error: -o: "xml" must be wide, json or yaml/);
      expect(sub.stderr).toMatch(/^error: cards: unknown subcommand "drain"/);
    },
    CLI_TIMEOUT_MS,
  );
});

describe('card sizes in the table', () => {
  it.each([
    { bytes: 81920 * 2 ** 20, want: '80Gi' },
    { bytes: 81559 * 2 ** 20, want: '79.6Gi' },
    { bytes: 512 * 2 ** 20, want: '512Mi' },
    { bytes: 100, want: '100' },
  ])('$bytes bytes read $want', ({ bytes, want }) => expect(formatBytes(bytes)).toBe(want));

  it.each([
    { units: 1_600_000, want: '1600k' },
    { units: 1234, want: '1234' },
  ])('$units units read $want', ({ units, want }) => expect(formatUnits(units)).toBe(want));
});

describe('the HEALTH column', () => {
  it('says over-committed for a card its claims hold beyond its counters (issue 46), before its taints', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 2), [
      allocatedClaim('whole', [{ node: 'gpu-a', device: 'card-1' }]),
      allocatedClaim('share', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '1Gi' } }]),
    ]);
    const lines = formatCardTable(buildCardRows(ledger), false).trimEnd().split('\n');
    expect(lines[1]).toMatch(/\s+ok$/);
    expect(lines[2]).toMatch(/^gpu-a\s+1\s.*\s+over-committed$/);
  });
});
