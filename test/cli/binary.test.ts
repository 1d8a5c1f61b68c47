/**
 * The built `gpustack-operator` binary: `render` exit codes and messages, `serve` answering
 * over HTTP on 127.0.0.1 and stopping cleanly on SIGTERM, and `admission` (alone and inside
 * `serve --admission`) writing a verdict to a streaming stand-in API server. The binary is the one
 * the root global setup compiled once for the run (test/global-setup.ts).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { CHECK, H100_FLAVOR, boundPod, deviceFlavor, gpuNode, gpus, makeWorkload } from '../placement/builders.js';
import { eventually, kubeConfigText, startFakeKube, type FakeKube } from '../admission/support.js';
import { compiledCli } from '../support/compiled-cli.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** A hang guard: one CLI start imports the whole program (client-node included), seconds on a loaded machine. */
const CLI_TIMEOUT_MS = 180_000;

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
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

let main = '';
let scratch = '';

function cli(...args: string[]): Promise<Run> {
  return collect(spawn(process.execPath, [main, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] }));
}

beforeAll(() => {
  main = compiledCli();
  scratch = mkdtempSync(join(tmpdir(), 'gpustack-cli-'));
});

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe.concurrent('gpustack-operator render', () => {
  it(
    'prints the labels and objects of the reference cluster as JSON, and the same document as YAML by default (exit 0)',
    async () => {
      const [json, yaml] = await Promise.all([
        cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml', '-o', 'json'),
        cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml'),
      ]);

      expect(json.stderr).toBe('');
      expect(json.code).toBe(0);
      const output = JSON.parse(json.stdout) as {
        nodes: { name: string }[];
        objects: { kind: string; metadata: { name: string } }[];
      };
      expect(output.nodes.map((n) => n.name)).toEqual(['node-a10g', 'node-cpu', 'node-t4-a', 'node-t4-b']);
      expect(output.objects.filter((o) => o.kind === 'ResourceFlavor').map((o) => o.metadata.name)).toEqual(
        SIX_FLAVORS,
      );
      expect(yaml.code).toBe(0);
      // Two runs may straddle a second boundary: compare without condition times.
      const withoutTimes = (text: string) => text.replace(/"lastTransitionTime":"[^"]*"/g, '"lastTransitionTime":""');
      expect(withoutTimes(JSON.stringify(parse(yaml.stdout)))).toBe(withoutTimes(JSON.stringify(output)));
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 2 with the usage when --nodes is missing',
    async () => {
      const run = await cli('render');

      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(
        /^error: render: --nodes FILE is required \(- reads stdin\)\n\nUsage: gpustack-operator render \[options\]/,
      );
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 1 naming a file that does not exist',
    async () => {
      const run = await cli('render', '--nodes', 'examples/clusters/no-such-cluster.yaml');

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('error: --nodes examples/clusters/no-such-cluster.yaml: no such file\n');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 1 naming spec.generalKey of an invalid --chain',
    async () => {
      const chain = join(scratch, 'chain.yaml');
      writeFileSync(
        chain,
        'apiVersion: worker.gpustack.ai/v1alpha1\nkind: SchedulingChain\nmetadata:\n  name: default\nspec:\n  generalKey: Bogus\n',
      );

      const run = await cli('render', '--nodes', 'examples/clusters/reference-4-node.yaml', '--chain', chain);

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: InvalidSettings: SchedulingChain default: spec\.generalKey: /);
    },
    CLI_TIMEOUT_MS,
  );
});

describe('gpustack-operator serve', () => {
  it(
    'answers on 127.0.0.1, limits bodies to --max-body and exits 0 on SIGTERM without waiting out --drain-timeout',
    async () => {
      // --port 0: the kernel picks a free port, which the startup banner names.
      // fetch() keeps its connections open: they are idle, so SIGTERM closes them at once. A drain
      // timeout no test run lasts makes waiting it out show as a hang (the test's guard), and
      // reaching it would log a warning.
      const args = ['serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', '--max-body', '64Ki'];
      args.push('--drain-timeout', '1h');
      const child = spawn(process.execPath, [main, ...args], {
        cwd: REPO,
        stdio: ['ignore', 'pipe', 'pipe'],
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
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: readFileSync(join(REPO, 'examples/hooks/scheduling-chain.sync.json')),
        });
        expect(hook.status).toBe(200);
        // 11 Kueue and gpustack objects, 22 DeviceClasses (nine manufacturers and two models, whole and
        // shared) and the 32 NodeShards of the default nodeShards.
        expect(((await hook.json()) as { children: unknown[] }).children).toHaveLength(65);
        const tooLarge = await fetch(`${base}/hooks/scheduling-chain/sync`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ padding: 'x'.repeat(65 * 1024) }),
        });
        expect(tooLarge.status).toBe(413);
        expect(await tooLarge.json()).toEqual({
          error: { code: 'PayloadTooLarge', message: 'request body exceeds 65536 bytes (--max-body)' },
        });
        const metrics = await (await fetch(`${base}/metrics`)).text();
        expect(metrics).toContain(
          'gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="413"} 1',
        );
        expect(metrics).toContain('process_cpu_seconds_total');

        child.kill('SIGTERM');
        const run = await done;
        expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
        expect(drainTimeouts(run.stdout)).toEqual([]);
        expect(run.stderr).toBe('');
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
    CLI_TIMEOUT_MS,
  );
});

/** Every `serve` startServe started: one a failed test left running is killed after the file. */
const served: ChildProcess[] = [];
afterAll(() => {
  for (const child of served) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** `serve` on 127.0.0.1 with a kernel-picked port, once it listens: its port, and its exit. */
async function startServe(...extra: string[]): Promise<{ child: ChildProcess; port: number; done: Promise<Run> }> {
  const args = ['serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn', ...extra];
  const child = spawn(process.execPath, [main, ...args], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  served.push(child);
  const done = collect(child);
  const port = await new Promise<number>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /hook server on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(seen);
      if (match?.[1]) resolve(Number(match[1]));
    });
    child.on('close', (code) => reject(new Error(`serve exited ${code} before listening:\n${seen}`)));
  });
  return { child, port, done };
}

interface RawConnection {
  readonly socket: Socket;
  /** What it received so far. */
  received(): string;
  /** Resolves once what it received matches `pattern`; rejects if it closes first. */
  until(pattern: RegExp): Promise<void>;
  readonly closed: Promise<void>;
}

/** A raw connection to 127.0.0.1. */
function rawConnection(port: number): RawConnection {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  const waiting = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const check of waiting) check();
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return {
    socket,
    received: () => text,
    closed,
    until: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(text)) return;
          waiting.delete(check);
          resolve();
        };
        waiting.add(check);
        check();
        void closed.then(() => {
          if (waiting.delete(check)) reject(new Error(`closed before receiving ${pattern}: ${JSON.stringify(text)}`));
        });
      }),
  };
}

/** Resolves once nothing listens on `port` any more: a server that got SIGTERM has begun to drain. */
async function untilRefused(port: number): Promise<void> {
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => resolve(true));
    });
    if (refused) return;
    await pause(20);
  }
}

/** The `drain timeout` warnings among serve's JSON log lines on stdout. */
function drainTimeouts(stdout: string): unknown[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line['msg'] === 'drain timeout: closing the connections still open');
}

const CHECK_BODY = JSON.stringify({ parent: { metadata: { name: 'someone-elses-check' } } });
// `Expect: 100-continue`: the server answers `100 Continue` once it has read the head, so the
// client knows the request is in flight instead of guessing how long that takes.
const CHECK_HEAD =
  'POST /hooks/node-devices-check/sync HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
  `Expect: 100-continue\r\nContent-Length: ${CHECK_BODY.length}\r\n\r\n`;
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.concurrent('gpustack-operator serve: connections and shutdown', () => {
  it(
    "keeps an idle keep-alive connection open past Node's default (closed after 6 s; Go clients keep theirs 90 s)",
    async () => {
      const { child, port, done } = await startServe();
      try {
        const client = rawConnection(port);
        let closedEarly = false;
        void client.closed.then(() => {
          closedEarly = true;
        });
        client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        await client.until(/\{"status":"ok"\}$/);
        // Idle from here. Node closes at its keep-alive timeout plus 1 s: 6 s with the default 5 s.
        await pause(8_000);

        expect(closedEarly).toBe(false);
        client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        await client.until(/\{"status":"ok"\}[\s\S]*\{"status":"ok"\}$/);
        expect(client.received().match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
        expect(client.received()).toContain('Keep-Alive: timeout=95');
        client.socket.destroy();
      } finally {
        child.kill('SIGTERM');
        await done;
      }
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'answers a request in flight at SIGTERM, then exits 0',
    async () => {
      const { child, port, done } = await startServe();
      const client = rawConnection(port);
      client.socket.write(CHECK_HEAD + CHECK_BODY.slice(0, 10));
      await client.until(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);

      child.kill('SIGTERM');
      await untilRefused(port);
      client.socket.write(CHECK_BODY.slice(10));
      await client.closed;
      const run = await done;

      expect(client.received()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{\}$/);
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a half-sent body does not hold SIGTERM: the connection is cut at --drain-timeout and the process exits 0',
    async () => {
      const { child, port, done } = await startServe('--drain-timeout', '1s');
      const client = rawConnection(port);
      client.socket.write(CHECK_HEAD + CHECK_BODY.slice(0, 10));
      await client.until(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);

      child.kill('SIGTERM');
      const run = await done;

      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(drainTimeouts(run.stdout)).toEqual([expect.objectContaining({ level: 40, drainTimeoutMs: 1000 })]);
      expect(client.received()).toBe(CONTINUE);
      await client.closed;
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits 1 naming the file when a credential file cannot be read',
    async () => {
      const run = await cli(
        'serve',
        '--port',
        '0',
        '--tls-cert',
        '/nonexistent/tls.crt',
        '--tls-key',
        '/nonexistent/tls.key',
      );

      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/\/nonexistent\/tls\.crt: --tls-cert cannot be read/);
    },
    CLI_TIMEOUT_MS,
  );

  it.each([
    { args: ['--max-inflight-bytes', 'lots'], error: /--max-inflight-bytes: "lots" is not a size such as 256Mi/ },
    { args: ['--drain-timeout', 'soon'], error: /--drain-timeout: "soon" is not a duration such as 20s/ },
    // A hold that cannot end before the paced hooks' timeout, less the margin to answer in.
    { args: ['--join-pacing', '85s'], error: /--join-pacing 85 s does not fit the paced hooks' timeout of 90 s/ },
    { args: ['--hook-timeout', '30s'], error: /--join-pacing 60 s does not fit .* at most 20 s/ },
    // Credentials a caller must show, without a port where probes and Prometheus need none.
    { args: ['--token-file', '/x/token'], error: /--token-file and --client-ca need --metrics-port/ },
    { args: ['--tls-key', '/x/tls.key'], error: /--tls-cert and --tls-key go together/ },
    { args: ['--client-ca', '/x/ca.crt'], error: /--client-ca needs --tls-cert and --tls-key/ },
    {
      args: ['--metrics-port', '0', '--reload-interval', 'often'],
      error: /--reload-interval: "often" is not a duration of at least 0.1s/,
    },
  ])(
    'exits 2 with the usage for $args',
    async ({ args, error }) => {
      const run = await cli('serve', '--port', '0', '--host', '127.0.0.1', ...args);

      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(error);
    },
    CLI_TIMEOUT_MS,
  );
});

/** A port nobody listens on right now (the kernel's pick, released again). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function healthStatus(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}

describe('gpustack-operator admission', () => {
  let api: FakeKube;
  let kubeconfig = '';
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    api = await startFakeKube();
    kubeconfig = join(scratch, `kubeconfig-${Date.now()}`);
    writeFileSync(kubeconfig, kubeConfigText(api.url));
    const json = (value: unknown) => structuredClone(value) as Record<string, unknown>;
    api.upsert('resourceflavors', json(deviceFlavor()));
    api.upsert('nodes', json(gpuNode('gpu-a', 8)));
    api.upsert('nodes', json(gpuNode('gpu-b', 8)));
    api.upsert('pods', json(boundPod('busy-a', 'gpu-a', [gpus(4)])));
    api.upsert('pods', json(boundPod('busy-b', 'gpu-b', [gpus(4)])));
    api.upsert(
      'workloads',
      json(
        makeWorkload('train')
          .podSet('workers', 1, [gpus(8)])
          .obj(),
      ),
    );
  });
  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await api.close();
  });

  function start(...args: string[]): { child: ChildProcess; done: Promise<Run> } {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    return { child, done: collect(child) };
  }

  const retryMessage = `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`;

  it(
    'writes Retry for 8 cards on 4 + 4 free, logs one JSON line for it on stdout, is healthy, and exits 0 on SIGTERM',
    async () => {
      const port = await freePort();
      const { child, done } = start('admission', '--kubeconfig', kubeconfig, '--health-port', String(port));
      await eventually(
        async () => (await healthStatus(`http://127.0.0.1:${port}/healthz`)) === 200,
        'admission /healthz 200',
        CLI_TIMEOUT_MS / 2,
      );
      await eventually(() => api.patches().length === 1, 'the Retry write', CLI_TIMEOUT_MS / 2);
      expect(api.patches()[0]?.path).toBe(
        '/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/train/status?fieldManager=gpustack-node-devices&force=true',
      );

      child.kill('SIGTERM');
      const run = await done;
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(run.stderr).toBe('');
      const lines = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.filter((l) => l['msg'] === 'admission check written')).toEqual([
        expect.objectContaining({
          workload: 'team-a/train',
          namespace: 'team-a',
          name: 'train',
          check: CHECK,
          state: 'Retry',
          message: retryMessage,
          requeueAfterSeconds: 30,
        }),
      ]);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'serve --admission runs the hook server and the checker in one process; SIGTERM stops both with exit 0',
    async () => {
      const port = await freePort();
      const { child, done } = start(
        'serve',
        '--admission',
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--log-level',
        'warn',
        '--kubeconfig',
        kubeconfig,
        '--health-port',
        String(port),
      );
      let seen = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
      });
      await eventually(
        () => /hook server on http:\/\/127\.0\.0\.1:\d+\n/.test(seen),
        'hook server listening',
        CLI_TIMEOUT_MS / 2,
      );
      const base = /hook server on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(seen)?.[1] as string;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      await eventually(
        async () => (await healthStatus(`http://127.0.0.1:${port}/healthz`)) === 200,
        'admission /healthz 200',
        CLI_TIMEOUT_MS / 2,
      );
      await eventually(() => api.patches().length === 1, 'the Retry write', CLI_TIMEOUT_MS / 2);

      child.kill('SIGTERM');
      const run = await done;
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
      expect(run.stderr).toBe('');
    },
    CLI_TIMEOUT_MS,
  );

  it.each([
    { args: ['--health-port', 'eighty'], error: /--health-port: "eighty" is not a port number/ },
    { args: ['--check-name', 'Not A Name'], error: /--check-name: "Not A Name" must be a DNS subdomain/ },
    { args: ['--no-such-flag'], error: /Unknown option '--no-such-flag'/ },
  ])(
    'exits 2 with the usage for $args',
    async ({ args, error }) => {
      const run = await cli('admission', '--kubeconfig', kubeconfig, ...args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(error);
      expect(run.stderr).toContain('Usage: gpustack-operator admission [options]');
    },
    CLI_TIMEOUT_MS,
  );
});

describe.concurrent('gpustack-operator kueue-config', () => {
  it(
    'merges into the kueue-manager-config ConfigMap and prints the ConfigMap back, other keys kept',
    async () => {
      const file = join(scratch, 'kueue-manager-config.yaml');
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'kueue-manager-config', namespace: 'kueue-system' },
          data: {
            'controller_manager_config.yaml': stringify({
              apiVersion: 'config.kueue.x-k8s.io/v1beta2',
              kind: 'Configuration',
              namespace: 'kueue-system',
              featureGates: { QuotaCheckStrategy: true },
              resources: { quotaCheckStrategy: 'IgnoreUndeclared' },
            }),
          },
        }),
      );
      const run = await cli('kueue-config', '--merge', file, '--kueue-version=v0.17.0');
      expect(run.code).toBe(0);
      const configMap = parse(run.stdout) as { kind: string; metadata: { name: string }; data: Record<string, string> };
      expect(configMap.kind).toBe('ConfigMap');
      expect(configMap.metadata.name).toBe('kueue-manager-config');
      const config = parse(configMap.data['controller_manager_config.yaml'] as string) as {
        namespace: string;
        featureGates: Record<string, boolean>;
        resources: Record<string, unknown> & { transformations: unknown[] };
      };
      expect(config.namespace).toBe('kueue-system');
      // 0.17 knows DRA by its old gate only (0.18 renamed it).
      expect(config.featureGates).toEqual({ AssignQueueLabelsForPods: false, DynamicResourceAllocation: true });
      expect(config.resources).not.toHaveProperty('quotaCheckStrategy');
      expect(config.resources.transformations).toHaveLength(27);
      expect(run.stderr).toContain('removed resources.quotaCheckStrategy: Kueue 0.17 does not know it');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    "merges into the values of Kueue's Helm chart and prints the values back, other values kept",
    async () => {
      const file = join(scratch, 'kueue-values.yaml');
      const managerConfig = stringify({
        apiVersion: 'config.kueue.x-k8s.io/v1beta2',
        kind: 'Configuration',
        integrations: { frameworks: ['batch/job'] },
      });
      writeFileSync(
        file,
        stringify({ enableCertManager: false, managerConfig: { controllerManagerConfigYaml: managerConfig } }),
      );
      const run = await cli('kueue-config', '--merge', file);
      expect(run.code).toBe(0);
      const values = parse(run.stdout) as { enableCertManager: boolean; managerConfig: Record<string, string> };
      expect(values.enableCertManager).toBe(false);
      expect(Object.keys(values.managerConfig)).toEqual(['controllerManagerConfigYaml']);
      const config = parse(values.managerConfig.controllerManagerConfigYaml as string) as {
        integrations: unknown;
        featureGates: Record<string, boolean>;
        resources: { quotaCheckStrategy: string; transformations: unknown[] };
      };
      // Theirs first, then the frameworks the workloads need (docs/architecture.md#workloads).
      expect(config.integrations).toEqual({
        frameworks: [
          'batch/job',
          'jobset.x-k8s.io/jobset',
          'leaderworkerset.x-k8s.io/leaderworkerset',
          'pod',
          'deployment',
        ],
      });
      expect(run.stderr).toContain(
        'note: added integrations.frameworks jobset.x-k8s.io/jobset, leaderworkerset.x-k8s.io/leaderworkerset, pod, deployment',
      );
      expect(config.featureGates).toMatchObject({ AssignQueueLabelsForPods: false, QuotaCheckStrategy: true });
      expect(config.resources.quotaCheckStrategy).toBe('IgnoreUndeclared');
      expect(config.resources.transformations).toHaveLength(27);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    '--nodes maps the model classes of a node dump beside the manufacturer class',
    async () => {
      const run = await cli(
        'kueue-config',
        '--nodes',
        join(REPO, 'examples/clusters/reference-4-node.yaml'),
        '-o',
        'json',
      );
      expect(run.code).toBe(0);
      const config = JSON.parse(run.stdout) as {
        resources: { deviceClassMappings: { name: string; deviceClassNames: string[] }[] };
      };
      const nvidia = config.resources.deviceClassMappings.find((m) => m.name === 'credits.gpustack.ai/nvidia');
      expect(nvidia?.deviceClassNames).toEqual(['gpustack-nvidia', 'gpustack-nvidia-a10g', 'gpustack-nvidia-tesla-t4']);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'refuses chart values without the configuration string, naming the value',
    async () => {
      const file = join(scratch, 'kueue-values-broken.yaml');
      writeFileSync(file, stringify({ managerConfig: { controllerManagerConfigYaml: { kind: 'Configuration' } } }));
      const run = await cli('kueue-config', '--merge', file);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('managerConfig.controllerManagerConfigYaml is missing or not a string');
      expect(run.stdout).toBe('');
    },
    CLI_TIMEOUT_MS,
  );

  it.each([
    { args: ['--kueue-version', '0.16'], code: 2, error: /--kueue-version: "0.16" is not a Kueue version we support/ },
    { args: ['--merge', '/nonexistent/kueue.yaml'], code: 1, error: /no such file/ },
  ])(
    'exits $code for $args',
    async ({ args, code, error }) => {
      const run = await cli('kueue-config', ...args);
      expect(run.code).toBe(code);
      expect(run.stderr).toMatch(error);
    },
    CLI_TIMEOUT_MS,
  );
});

function cliWithStdin(input: string, ...args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [main, ...args], {
    cwd: REPO,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(input);
  return collect(child);
}

const REFERENCE = 'examples/clusters/reference-4-node.yaml';
/** A failure a person can act on is one `error:` line: no stack, no usage dump. */
function oneLine(run: Run): string {
  expect(run.stderr).not.toMatch(/^\s+at /m);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

describe.concurrent('CLI conventions', () => {
  it(
    '--version prints the package version',
    async () => {
      const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
      const run = await cli('--version');
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`gpustack-operator ${version}\n`);
    },
    CLI_TIMEOUT_MS,
  );

  it.each(['serve', 'render', 'agent', 'detect', 'admission', 'kueue-config'])(
    "%s --help prints that command's options and exits 0",
    async (command) => {
      const run = await cli(command, '--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: gpustack-operator ${command} [options]`);
      expect(run.stderr).toBe('');
    },
    CLI_TIMEOUT_MS,
  );

  it(
    '-o=json and --nodes=FILE mean what -o json and --nodes FILE mean',
    async () => {
      const [spaced, joined] = await Promise.all([
        cli('render', '--nodes', REFERENCE, '-o', 'json'),
        cli('render', `--nodes=${REFERENCE}`, '-o=json'),
      ]);
      expect(joined.code).toBe(0);
      expect(JSON.parse(joined.stdout)).toEqual(JSON.parse(spaced.stdout));
    },
    CLI_TIMEOUT_MS,
  );

  it(
    '--nodes - reads stdin; --objects-only -o yaml prints the objects alone as a YAML stream',
    async () => {
      const [full, stream] = await Promise.all([
        cli('render', '--nodes', REFERENCE, '-o', 'json'),
        cliWithStdin(
          readFileSync(join(REPO, REFERENCE), 'utf8'),
          'render',
          '--nodes',
          '-',
          '--objects-only',
          '-o',
          'yaml',
        ),
      ]);
      expect(stream.code).toBe(0);
      const documents = parseAllDocuments(stream.stdout).map((d) => d.toJS() as Record<string, unknown>);
      expect(documents).toEqual((JSON.parse(full.stdout) as { objects: unknown[] }).objects);
      expect(documents.every((d) => typeof d['apiVersion'] === 'string' && typeof d['kind'] === 'string')).toBe(true);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a --chain that is not the SchedulingChain named default is an error, not another chain',
    async () => {
      const chain = join(scratch, 'other-chain.yaml');
      writeFileSync(
        chain,
        stringify({
          apiVersion: 'worker.gpustack.ai/v1alpha1',
          kind: 'SchedulingChain',
          metadata: { name: 'other' },
          spec: {},
        }),
      );
      const run = await cli('render', '--nodes', REFERENCE, '--chain', chain);
      expect(run.code).toBe(1);
      expect(oneLine(run)).toMatch(/SchedulingChain "other" is not read by the chain: only the one named "default"/);
    },
    CLI_TIMEOUT_MS,
  );

  it.each([
    {
      name: 'a folder as --nodes',
      args: ['render', '--nodes', 'examples'],
      code: 1,
      error: /--nodes examples: is a directory/,
    },
    {
      name: 'a missing --merge file',
      args: ['kueue-config', '--merge', '/nonexistent.yaml'],
      code: 1,
      error: /no such file/,
    },
    {
      name: 'a kubeconfig that is not there',
      args: ['admission', '--kubeconfig', '/nonexistent/kubeconfig'],
      code: 1,
      error: /cannot read the kubeconfig \(--kubeconfig \/nonexistent\/kubeconfig\): no such file/,
    },
  ])(
    '$name: one line, exit $code',
    async ({ args, code, error }) => {
      const run = await cli(...args);
      expect(run.code).toBe(code);
      expect(oneLine(run)).toMatch(error);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a bad --log-level is a usage error (exit 2), before anything starts',
    async () => {
      const run = await cli('serve', '--log-level', 'verbose');
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(
        'error: --log-level: "verbose" must be one of fatal, error, warn, info, debug, trace, silent',
      );
    },
    CLI_TIMEOUT_MS,
  );

  it.each([
    {
      args: ['agent', '--publish', 'feature-file', '--features-dir', '/tmp', '--health-port', 'eighty'],
      flag: '--health-port',
    },
    {
      args: ['agent', '--publish', 'feature-file', '--features-dir', '/tmp', '--interval', '500ms'],
      flag: '--interval',
    },
    { args: ['serve', '--port', '70000'], flag: '--port' },
  ])(
    'a bad $flag is a usage error (exit 2) naming the flag, before anything starts',
    async ({ args, flag }) => {
      const run = await cli(...args);
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toMatch(new RegExp(`^error: ${flag}: `));
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'agent --kubelet-plugin without a node name is a usage error (exit 2): the node is the pool',
    async () => {
      const run = await cli('agent', '--publish', 'feature-file', '--features-dir', '/tmp', '--kubelet-plugin');
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(
        'error: agent: --kubelet-plugin needs --node (or $NODE_NAME): the node is the pool of its devices',
      );
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a busy port: one line naming it, exit 1',
    async () => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
      const { port } = blocker.address() as { port: number };
      try {
        const run = await cli('serve', '--host', '127.0.0.1', '--port', String(port));
        expect(run.code).toBe(1);
        expect(oneLine(run)).toBe(
          `error: cannot listen on 127.0.0.1:${port}: the port is in use (choose another with --port)`,
        );
      } finally {
        blocker.close();
      }
    },
    CLI_TIMEOUT_MS,
  );
});

/**
 * For the tests below, which start many CLIs at once on a machine that may be busy: a generous
 * hang guard, not a timing assertion (a command that should exit but runs on is killed and fails).
 */
const SLOW_CLI_TIMEOUT_MS = 2 * CLI_TIMEOUT_MS;

interface SpawnOptions {
  /** The Node.js binary. @default process.execPath */
  readonly node?: string;
  /** Exactly this environment (PATH and an empty HOME unless given): nothing of the runner's leaks in. */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed. */
  readonly input?: string;
}

/** An empty HOME (no ~/.kube/config) for the environments below. */
function emptyHome(): string {
  return mkdtempSync(join(scratch, 'home-'));
}

/** Runs the CLI to its exit; a hang guard (not a timing assertion) kills one that never exits. */
function runCli(args: readonly string[], options: SpawnOptions = {}): Promise<Run> {
  const child = spawn(options.node ?? process.execPath, [compiledCli(), ...args], {
    cwd: REPO,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: emptyHome(), ...options.env },
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    timeout: SLOW_CLI_TIMEOUT_MS - 10_000,
    killSignal: 'SIGKILL',
  });
  if (options.input !== undefined) child.stdin?.end(options.input);
  return collect(child);
}

/** The machine's own `node` (a PATH without node_modules/.bin) and its version, if there is one. */
function systemNode(): { readonly path: string; readonly version: string } | undefined {
  try {
    const found = execFileSync('/bin/sh', ['-c', 'command -v node'], {
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      encoding: 'utf8',
    }).trim();
    return { path: found, version: execFileSync(found, ['--version'], { encoding: 'utf8' }).trim() };
  } catch {
    return undefined;
  }
}

const OLD_NODE = systemNode();
const OLD_NODE_MISSING =
  OLD_NODE === undefined
    ? 'no node on /usr/local/bin:/usr/bin:/bin'
    : Number(/^v(\d+)\./.exec(OLD_NODE.version)?.[1]) >= 22
      ? `the machine's node is ${OLD_NODE.version}, not one older than the Kubernetes client needs (22.19)`
      : undefined;

describe
  .skipIf(OLD_NODE_MISSING !== undefined)
  .concurrent(
    `on the machine's own Node.js (${OLD_NODE?.version ?? 'none'}${OLD_NODE_MISSING ? `: skipped, ${OLD_NODE_MISSING}` : ''})`,
    () => {
      const node = OLD_NODE?.path as string;

      it.each([
        ['render', '--nodes', REFERENCE, '-o', 'json'],
        ['kueue-config', '--kueue-version', '0.19'],
        ['--version'],
      ])(
        'runs %s (it never loads the Kubernetes client)',
        async (...args) => {
          const run = await runCli(args, { node });
          expect(run.stderr).toBe('');
          expect(run.code).toBe(0);
        },
        SLOW_CLI_TIMEOUT_MS,
      );

      it(
        'detect gets as far as the addon: one error line about it, no stack from the Kubernetes client',
        async () => {
          const addon = join(scratch, 'no-such-addon.node');
          const run = await runCli(['detect', '-o', 'text'], { node, env: { GPUSTACK_NATIVE_ADDON: addon } });
          expect(run.code).toBe(1);
          expect(run.stderr).not.toMatch(/^\s+at /m);
          expect(run.stderr).not.toContain('TypeError');
          expect(run.stderr.split('\n')[0]).toBe(`error: GPUSTACK_NATIVE_ADDON names ${addon}, which does not load:`);
        },
        SLOW_CLI_TIMEOUT_MS,
      );

      it.each([
        { command: 'agent', args: ['agent', '--node', 'node-a', '--health-port', '0'] },
        { command: 'admission', args: ['admission', '--health-port', '0'] },
        { command: 'serve --admission', args: ['serve', '--admission', '--port', '0', '--host', '127.0.0.1'] },
      ])(
        '$command refuses in one line naming the Node.js it needs and npx, exit 1',
        async ({ command, args }) => {
          const run = await runCli(args, { node });
          expect(run.code).toBe(1);
          expect(run.stdout).toBe('');
          expect(oneLine(run)).toBe(
            `error: ${command} needs Node.js >= 22.19.0 (this is ${OLD_NODE?.version}); ` +
              `run it with npx gpustack-operator ${command} …, which uses the Node.js that npm ci installed`,
          );
        },
        SLOW_CLI_TIMEOUT_MS,
      );

      it(
        'serve answers /healthz and exits 0 on SIGTERM',
        async () => {
          const child = spawn(
            node,
            [compiledCli(), 'serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
            { cwd: REPO, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] },
          );
          const done = collect(child);
          try {
            let seen = '';
            child.stdout.on('data', (chunk: Buffer) => {
              seen += chunk.toString();
            });
            await eventually(
              () => /hook server on http:\/\/127\.0\.0\.1:\d+\n/.test(seen),
              'serve listening',
              SLOW_CLI_TIMEOUT_MS / 2,
            );
            const base = /hook server on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(seen)?.[1] as string;
            expect((await fetch(`${base}/healthz`)).status).toBe(200);
            child.kill('SIGTERM');
            const run = await done;
            expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({
              code: 0,
              signal: null,
              stderr: '',
            });
          } finally {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          }
        },
        SLOW_CLI_TIMEOUT_MS,
      );
    },
  );

describe.concurrent('agent and admission without a usable cluster', () => {
  it.each([
    ['agent', '--node', 'node-a', '--health-port', '0'],
    ['agent', '--node', 'node-a', '--publish', 'node-labels', '--health-port', '0'],
    ['admission', '--health-port', '0'],
    ['serve', '--admission', '--port', '0', '--host', '127.0.0.1', '--health-port', '0'],
  ])(
    'no kubeconfig, no KUBECONFIG, no ~/.kube/config, not in a Pod: %s exits 1 with one line',
    async (...args) => {
      const run = await runCli(args);
      expect({ code: run.code, signal: run.signal }).toEqual({ code: 1, signal: null });
      expect(oneLine(run)).toBe(
        'error: no Kubernetes cluster configured: pass --kubeconfig FILE, set KUBECONFIG, write ~/.kube/config, or run in a Pod',
      );
    },
    SLOW_CLI_TIMEOUT_MS,
  );

  it(
    'admission with an API server that does not answer keeps running, retrying, and /healthz says 503 with why',
    async () => {
      const [apiPort, healthPort] = [await freePort(), await freePort()];
      const kubeconfig = join(scratch, 'kubeconfig-closed-port');
      writeFileSync(kubeconfig, kubeConfigText(`http://127.0.0.1:${apiPort}`));
      const child = spawn(
        process.execPath,
        [compiledCli(), 'admission', '--kubeconfig', kubeconfig, '--health-port', String(healthPort)],
        { cwd: REPO, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const done = collect(child);
      try {
        let body: { healthy?: boolean; down?: string[]; watches?: { lastError: string | null }[] } = {};
        await eventually(
          async () => {
            const res = await fetch(`http://127.0.0.1:${healthPort}/healthz`).catch(() => undefined);
            if (res?.status !== 503) return false;
            body = (await res.json()) as typeof body;
            return body.watches?.some((w) => w.lastError !== null) === true;
          },
          'admission /healthz 503 with an error',
          SLOW_CLI_TIMEOUT_MS / 2,
        );
        expect(body.healthy).toBe(false);
        expect(body.down).toEqual(expect.arrayContaining(['workloads', 'nodes', 'pods']));
        expect(body.watches?.find((w) => w.lastError !== null)?.lastError).toContain(
          `ECONNREFUSED 127.0.0.1:${apiPort}`,
        );
        expect(child.exitCode).toBeNull();

        child.kill('SIGTERM');
        const run = await done;
        expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
        expect(run.stderr).toMatch(/list\/watch failed; will relist after a backoff/);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    },
    SLOW_CLI_TIMEOUT_MS,
  );
});

describe.concurrent('inputs that hold no document', () => {
  const NO_DOCUMENT =
    'error: stdin: no YAML or JSON document (the input is empty or only comments; did the command before the pipe fail?)';

  it.each([
    { what: 'empty', input: '' },
    { what: 'blank', input: '  \n\n' },
    { what: 'comment-only', input: '# helm: Error: release: not found\n' },
  ])(
    'kueue-config --merge - with $what stdin (a failed helm get values before the pipe) exits 1, printing nothing',
    async ({ input }) => {
      const run = await runCli(['kueue-config', '--kueue-version', '0.19', '--merge', '-'], { input });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(oneLine(run)).toBe(NO_DOCUMENT);
    },
    SLOW_CLI_TIMEOUT_MS,
  );

  it.each([
    ['render', '--nodes', '-'],
    ['render', '--nodes', REFERENCE, '--chain', '-'],
    ['kueue-config', '--nodes', '-'],
  ])(
    '%s … with empty stdin: the same line, exit 1',
    async (...args) => {
      const run = await runCli(args, { input: '' });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(oneLine(run)).toBe(NO_DOCUMENT);
    },
    SLOW_CLI_TIMEOUT_MS,
  );
});

describe.concurrent('names given on the command line', () => {
  const NAMESPACE_RULE = "(lowercase letters, digits and inner '-', at most 63 characters)";
  const NAME_RULE = "(lowercase letters, digits, inner '-' and '.', at most 253 characters)";

  it.each([
    {
      args: ['render', '--nodes', REFERENCE, '--namespaces', 'BAD NS,@@'],
      error: `error: --namespaces: "BAD NS" is not a namespace name ${NAMESPACE_RULE}`,
    },
    {
      args: ['render', '--nodes', REFERENCE, '--namespaces', 'default,@@'],
      error: `error: --namespaces: "@@" is not a namespace name ${NAMESPACE_RULE}`,
    },
    {
      args: ['render', '--nodes', REFERENCE, '--namespaces', 'a'.repeat(64)],
      error: `error: --namespaces: "${'a'.repeat(64)}" is not a namespace name ${NAMESPACE_RULE}`,
    },
    {
      args: ['agent', '--node', 'Node_A', '--health-port', '0'],
      error: `error: --node: "Node_A" is not a Kubernetes name ${NAME_RULE}`,
    },
    {
      args: ['agent', '--node', 'node-a', '--namespace', 'gpustack system', '--health-port', '0'],
      error: `error: --namespace: "gpustack system" is not a namespace name ${NAMESPACE_RULE}`,
    },
    {
      args: ['admission', '--check-name', '@@', '--health-port', '0'],
      error: 'error: --check-name: "@@" must be a DNS subdomain of at most 128 characters',
    },
  ])(
    '$args: a usage error naming the value (exit 2), nothing printed on stdout',
    async ({ args, error }) => {
      const run = await runCli(args);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.split('\n')[0]).toBe(error);
    },
    SLOW_CLI_TIMEOUT_MS,
  );

  it.each([
    {
      variable: 'NODE_NAME',
      value: 'node a',
      error: `error: $NODE_NAME: "node a" is not a Kubernetes name ${NAME_RULE}`,
    },
    {
      variable: 'POD_NAMESPACE',
      value: 'Team',
      error: `error: $POD_NAMESPACE: "Team" is not a namespace name ${NAMESPACE_RULE}`,
      args: ['--node', 'node-a'],
    },
  ])(
    'agent with $variable=$value: the same, naming the variable',
    async ({ variable, value, error, args = [] }) => {
      const run = await runCli(['agent', ...args, '--health-port', '0'], { env: { [variable]: value } });
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n')[0]).toBe(error);
    },
    SLOW_CLI_TIMEOUT_MS,
  );
});

describe.concurrent('--host-root that is not there', () => {
  it.each([
    ['detect', '-o', 'text', '--host-root', '/nonexistent/host'],
    [
      'agent',
      '--publish',
      'feature-file',
      '--features-dir',
      '/nonexistent/features.d',
      '--host-root',
      '/nonexistent/host',
    ],
  ])(
    '%s …: one line naming it, exit 1 (a missing path, not a usage error)',
    async (...args) => {
      const run = await runCli([...args, ...(args[0] === 'agent' ? ['--health-port', '0'] : [])]);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(oneLine(run)).toBe('error: --host-root /nonexistent/host: no such directory');
    },
    SLOW_CLI_TIMEOUT_MS,
  );

  it(
    'a file as --host-root: one line, exit 1',
    async () => {
      const run = await runCli(['detect', '--host-root', join(REPO, 'package.json')]);
      expect(run.code).toBe(1);
      expect(oneLine(run)).toBe(`error: --host-root ${join(REPO, 'package.json')}: not a directory`);
    },
    SLOW_CLI_TIMEOUT_MS,
  );
});
