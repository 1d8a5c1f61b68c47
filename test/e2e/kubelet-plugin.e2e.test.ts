// Node side of DRA with a REAL kubelet (DESIGN §8 last bullet): kubelet v1.36.3 built from
// k8s.io/kubernetes and containerd on loopback, joined to the e2e control plane; our agent (fake
// NVML, --kubelet-plugin) registers its plugin through the kubelet's plugin watcher, and the
// kubelet prepares a claim for a real Pod, then unprepares it when the Pod goes.
//
// The claim is allocated by this test (status.allocation + reservedFor written through the API, the
// scheduler's part): what is under test is the kubelet ↔ plugin contract, not allocation, which the
// scheduler scenarios cover. Needs root (the kubelet and containerd), runc (Debian's package), gcc
// and go; without them the scenario is skipped with the reason. containerd 2.x is built like the
// other components (Debian 12's 1.6 cannot inject CDI devices).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { FAKE_LIBRARIES } from '../native/fake-machine.js';
import { cdiSpecProblems } from '../support/cdi-spec.js';
import { waitFor, type KubeObject } from './support/apply.js';
import { startControlPlane, type ControlPlane } from './support/control-plane.js';
import { CLI } from './support/hook-server.js';
import {
  buildPauseImage,
  PAUSE_IMAGE,
  startContainerd,
  startKubelet,
  type Containerd,
  type Kubelet,
} from './support/node.js';
import { freePorts, startProcess, type ManagedProcess } from './support/processes.js';

const NODE = 'e2e-kubelet';
/** One H200 for the fake NVML. */
const CARD_FILE =
  [
    'lib:nvidia\tdriver=570.124.06\truntime=12080',
    `dev:nvidia\tname=NVIDIA H200\tuuid=GPU-e2e-0\tmemory=${143771 * 1024 * 1024}\tcores=132\tcc=9.0\tbus=00000000:18:00.0`,
  ].join('\n') + '\n';
const NAMESPACE = 'dra-node';

function missingPrerequisite(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: the kubelet and containerd need root';
  for (const tool of ['runc', 'gcc', 'go', 'tar']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return undefined;
}

function unmountAll(target: string): void {
  for (let i = 0; i < 8; i++) {
    const mounted = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .some((line) => line.split(' ')[1] === target);
    if (!mounted || spawnSync('umount', [target]).status !== 0) return;
  }
}

const missing = missingPrerequisite();
if (missing) process.stderr.write(`[e2e] kubelet-plugin scenario skipped: ${missing}\n`);

describe.skipIf(missing !== undefined)('the real kubelet and our DRA plugin', () => {
  let plane: ControlPlane;
  let containerd: Containerd;
  let kubelet: Kubelet;
  let agent: ManagedProcess;
  let agentHealth: string;
  let dir: string;
  let cdiDir: string;

  let devicesFile: string;

  /** Starts the agent with the kubelet plugin (again: a restart keeps the same folders and checkpoint). */
  async function startAgent(name: string): Promise<void> {
    const devices = devicesFile;
    const [healthPort] = (await freePorts(1)) as [number];
    agentHealth = `http://127.0.0.1:${healthPort}/healthz`;
    agent = startProcess(
      name,
      process.execPath,
      [
        CLI,
        'agent',
        '--node',
        NODE,
        '--publish',
        'feature-file',
        '--features-dir',
        path.join(dir, 'features.d'),
        '--interval',
        '5s',
        '--health-port',
        String(healthPort),
        '--kubeconfig',
        plane.kubeconfig,
        '--manufacturers',
        'nvidia',
        '--kubelet-plugin',
        '--kubelet-registry-dir',
        kubelet.registryDir,
        '--kubelet-plugins-dir',
        kubelet.pluginsDir,
        '--cdi-dir',
        cdiDir,
      ],
      plane.logsDir,
      {
        env: {
          ...process.env,
          GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
          GPUSTACK_FAKE_DEVICES: devices,
          GPUSTACK_SYSFS_ROOT: dir,
        },
      },
    );
  }

  /** Waits until the kubelet has told the (new) agent that its plugin is registered. */
  async function registered(): Promise<{ driver: string; registered?: boolean; serving: boolean }[]> {
    const health = await waitFor(
      async () => {
        const response = await fetch(agentHealth).catch(() => undefined);
        const body = (await response?.json().catch(() => undefined)) as
          { kubeletPlugins?: { driver: string; registered?: boolean; serving: boolean }[] } | undefined;
        return body?.kubeletPlugins?.find((p) => p.registered === true) ? body : undefined;
      },
      120_000,
      `the kubelet never told the plugin it registered; see ${kubelet.process.logFile} and ${agent.logFile}`,
      1000,
    );
    return health.kubeletPlugins ?? [];
  }

  beforeAll(async () => {
    plane = await startControlPlane({ controllerManager: false });
    dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-node-'));
    cdiDir = path.join(dir, 'cdi');
    containerd = await startContainerd(dir, plane.logsDir, cdiDir);
    plane.adopt({ name: 'containerd', stop: () => containerd.process.stop(20_000) });
    const image = buildPauseImage(dir, 'v1.36.3');
    containerd.ctr(['images', 'import', '--all-platforms', image]);
    kubelet = await startKubelet({
      dir,
      logsDir: plane.logsDir,
      kubeconfig: plane.kubeconfig,
      nodeName: NODE,
      containerdSocket: containerd.socket,
    });
    plane.adopt({ name: 'kubelet', stop: () => kubelet.process.stop(20_000) });
    await waitFor(
      async () => (await plane.client.get('v1', 'Node', NODE)) !== undefined,
      120_000,
      `the kubelet did not register node ${NODE}; see ${kubelet.process.logFile}`,
      1000,
    );

    const devices = path.join(dir, 'devices.txt');
    writeFileSync(devices, CARD_FILE);
    devicesFile = devices;
    await startAgent('agent');
    plane.adopt({ name: 'agent', stop: () => agent.stop() });
  }, 900_000);

  let failed = false;
  afterEach((context) => {
    if (context.task.result?.state === 'fail') failed = true;
  });

  afterAll(async () => {
    await plane?.stop({ failed });
    // The kubelet bind-mounts its root dir onto itself (mount propagation): unmount it, then remove
    // the kubelet's root dir, containerd's state and the CDI folder.
    if (kubelet) unmountAll(kubelet.rootDir);
    if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  });

  it('the kubelet registers the plugin through its plugin watcher (GetInfo, then NotifyRegistrationStatus)', async () => {
    expect(await registered()).toEqual([
      expect.objectContaining({ driver: 'nvidia.gpustack.ai', serving: true, registered: true }),
    ]);
    expect(readFileSync(kubelet.process.logFile, 'utf8')).toMatch(/Registered DRA plugin.*nvidia\.gpustack\.ai/);
  });

  it('prepares the claim of a real Pod (CDI spec applied by containerd) and, after an agent restart, unprepares it when the Pod goes', async () => {
    const client = plane.client;
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await client.applyObject({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: 'one-gpu', namespace: NAMESPACE },
      spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpustack-nvidia' } }] } },
    } as KubeObject);
    const pod = await client.applyObject<KubeObject & { metadata: { uid: string } }>({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'uses-gpu', namespace: NAMESPACE },
      spec: {
        nodeName: NODE,
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'one-gpu' }],
        containers: [
          {
            name: 'main',
            image: PAUSE_IMAGE,
            imagePullPolicy: 'Never',
            resources: { claims: [{ name: 'gpu' }] },
          },
        ],
      },
    } as KubeObject);
    // The scheduler's part: allocate card-0 of this node's pool and reserve the claim for the Pod.
    await client.applyObject(
      {
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name: 'one-gpu', namespace: NAMESPACE },
        status: {
          allocation: {
            devices: { results: [{ request: 'gpu', driver: 'nvidia.gpustack.ai', pool: NODE, device: 'card-0' }] },
            nodeSelector: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [NODE] }] }],
            },
          },
          reservedFor: [{ resource: 'pods', name: 'uses-gpu', uid: pod.metadata.uid }],
        },
      } as KubeObject,
      { subresource: 'status' },
    );
    const claim = await client.get<KubeObject & { metadata: { uid: string } }>(
      'resource.k8s.io/v1',
      'ResourceClaim',
      'one-gpu',
      NAMESPACE,
    );
    const specFile = path.join(cdiDir, `nvidia.gpustack.ai-card_${claim?.metadata.uid}.json`);
    await waitFor(
      async () => {
        const p = await client.get<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', 'uses-gpu', NAMESPACE);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      180_000,
      `Pod uses-gpu did not run; see ${kubelet.process.logFile} and ${agent.logFile}`,
      1000,
    );
    expect(existsSync(specFile), `${specFile} after the kubelet's NodePrepareResources`).toBe(true);
    const spec = JSON.parse(readFileSync(specFile, 'utf8'));
    expect(cdiSpecProblems(spec)).toEqual([]);
    expect(spec.devices[0].containerEdits.env).toContain('NVIDIA_VISIBLE_DEVICES=GPU-e2e-0');
    const kubeletLog = readFileSync(kubelet.process.logFile, 'utf8');
    expect(kubeletLog).toContain(`nvidia.gpustack.ai/card=${claim?.metadata.uid}-card-0`);
    // The runtime applied the CDI spec: the container (not the sandbox) has the plugin's variables.
    const ids = containerd.ctr(['containers', 'list', '-q']).split('\n').filter(Boolean);
    const withVariables = ids.filter((id) =>
      containerd.ctr(['containers', 'info', id]).includes('NVIDIA_VISIBLE_DEVICES=GPU-e2e-0'),
    );
    expect(ids).toHaveLength(2);
    expect(withVariables).toHaveLength(1);

    // The plugin's health stream reaches the Pod's status (ResourceHealthStatus): healthy, then
    // unhealthy once the card vanishes from the fake library, healthy again when it is back.
    const podHealth = async () => {
      const p = await client.get<KubeObject & { status?: { containerStatuses?: unknown[] } }>(
        'v1',
        'Pod',
        'uses-gpu',
        NAMESPACE,
      );
      return JSON.stringify(p?.status?.containerStatuses ?? []);
    };
    const healthOf = (text: string) => /"resourceID":"[^"]*card-0[^"]*","health":"(\w+)"/.exec(text)?.[1];
    await waitFor(
      async () => healthOf(await podHealth()) === 'Healthy',
      60_000,
      'the Pod never showed card-0 Healthy',
      1000,
    );
    writeFileSync(devicesFile, 'lib:nvidia\tdriver=570.124.06\truntime=12080\n');
    await waitFor(
      async () => healthOf(await podHealth()) === 'Unhealthy',
      60_000,
      'the Pod never showed card-0 Unhealthy',
      1000,
    );
    writeFileSync(devicesFile, CARD_FILE);
    await waitFor(
      async () => healthOf(await podHealth()) === 'Healthy',
      60_000,
      'card-0 did not turn Healthy again',
      1000,
    );

    // The agent restarts while the Pod runs: the kubelet registers the new plugin, and the unprepare
    // below is answered from the checkpoint the first one wrote.
    await agent.stop();
    expect(existsSync(specFile)).toBe(true);
    await startAgent('agent-restarted');
    await registered();

    await client.delete('v1', 'Pod', 'uses-gpu', NAMESPACE, { gracePeriodSeconds: 0 });
    await waitFor(
      async () => !existsSync(specFile),
      120_000,
      `the kubelet did not unprepare the claim; see ${kubelet.process.logFile}`,
      1000,
    );
    const checkpoint = JSON.parse(
      readFileSync(path.join(kubelet.pluginsDir, 'nvidia.gpustack.ai', 'checkpoint.json'), 'utf8'),
    );
    expect(checkpoint.claims).toEqual({});
    expect(readdirSync(cdiDir)).toEqual([]);
  });
});
