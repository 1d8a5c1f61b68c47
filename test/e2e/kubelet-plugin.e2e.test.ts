// Node side of DRA with a REAL kubelet (docs/architecture.md#kubelet-plugin): the lane's kubelet built from
// k8s.io/kubernetes and containerd on loopback, joined to the e2e control plane; our agent (fake
// NVML, --kubelet-plugin) registers its plugin through the kubelet's plugin watcher, and the
// kubelet prepares a claim for a real Pod, then unprepares it when the Pod goes.
//
// The claim is allocated by this test (status.allocation + reservedFor written through the API, the
// scheduler's part): what is under test is the kubelet ↔ plugin contract, not allocation, which the
// scheduler scenarios cover. Needs root (the kubelet and containerd), gcc, go and tar; without them
// the scenario fails with the reason, unless E2E_ALLOW_SKIP=kubelet skips it. containerd 2.x and runc
// are built like the other components (Debian 12's containerd 1.6 cannot inject CDI devices).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { buildDeviceClasses } from '../../src/dra/index.js';
import { FAKE_LIBRARIES, machineFile } from '../../harness/native/fake-machine.js';
import { cdiSpecProblems } from '../support/cdi-spec.js';
import { waitFor, type KubeObject } from '../../harness/e2e/apply.js';
import { ensureComponents } from '../../harness/e2e/components.js';
import type { ControlPlane } from '../../harness/e2e/control-plane.js';
import { claimCdiSpecFile } from '../../harness/e2e/scheduling.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import { nvidiaMachine } from '../../harness/e2e/agent.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import {
  buildPauseImage,
  PAUSE_IMAGE,
  startContainerd,
  startKubelet,
  unmountUnder,
  type Containerd,
  type Kubelet,
} from '../../harness/e2e/node.js';
import { freePorts, startProcess, type ManagedProcess } from '../../harness/e2e/processes.js';
import { assertPrerequisite, skipScenario } from '../../harness/e2e/skip.js';
import { log } from '../../harness/e2e/log.js';

const NODE = 'e2e-kubelet';
/** One H200 for the fake NVML. */
const NAMESPACE = 'dra-node';

/** What this machine lacks for the scenario (the components themselves are built), or undefined. */
function missingPrerequisite(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: the kubelet and containerd need root';
  for (const tool of ['gcc', 'go', 'tar']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return undefined;
}

const missing = missingPrerequisite();

describe.skipIf(skipScenario('kubelet', missing))('the real kubelet and our DRA plugin', () => {
  let plane: ControlPlane;
  let containerd: Containerd;
  let kubelet: Kubelet;
  let agent: ManagedProcess;
  let agentHealth: string;
  let dir: string;
  let cdiDir: string;

  let devicesFile: string;
  /** The node's machine for the fake NVML: one H200 (card-0), or none while it is "gone". */
  const writeCards = (count: 0 | 1): string => machineFile(nvidiaMachine('NVIDIA H200', count), dir);

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

  useCluster({
    controllerManager: false,
    // kube-scheduler: located and printed here, started by the scenario that needs it.
    components: ['kubelet', 'containerd', 'runc', 'kube-scheduler'],
    setup: async (c) => {
      assertPrerequisite('kubelet', missing);
      plane = c.plane;
      dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-node-'));
      cdiDir = path.join(dir, 'cdi');
      containerd = await startContainerd(dir, plane.logsDir, cdiDir);
      c.manage(containerd.process, async () => {
        containerd.killTasks();
        await containerd.process.stop(20_000);
      });
      const image = buildPauseImage(dir, c.versions.kubernetes);
      containerd.ctr(['images', 'import', '--all-platforms', image]);
      kubelet = await startKubelet({
        dir,
        logsDir: plane.logsDir,
        kubeconfig: plane.kubeconfig,
        nodeName: NODE,
        containerdSocket: containerd.socket,
      });
      c.manage(kubelet.process, () => kubelet.process.stop(20_000));
      await waitFor(
        async () => (await plane.client.get('v1', 'Node', NODE)) !== undefined,
        120_000,
        `the kubelet did not register node ${NODE}; see ${kubelet.process.logFile}`,
        1000,
      );

      devicesFile = writeCards(1);
      await startAgent('agent');
      plane.adopt({ name: 'agent', stop: () => agent.stop() });
    },
    // The kubelet bind-mounts its root dir onto itself (mount propagation) and containerd mounts each
    // sandbox's shm and rootfs: unmount them all, then remove the folder.
    cleanup: () => {
      if (dir) {
        unmountUnder(dir);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
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
    const { file: specFile, uid: claimUid } = await claimCdiSpecFile(client, cdiDir, 'one-gpu', NAMESPACE);
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
    expect(kubeletLog).toContain(`nvidia.gpustack.ai/card=${claimUid}-card-0`);
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
    writeCards(0);
    await waitFor(
      async () => healthOf(await podHealth()) === 'Unhealthy',
      60_000,
      'the Pod never showed card-0 Unhealthy',
      1000,
    );
    writeCards(1);
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
    // The claim still holds card-0 (this test allocated it; no controller clears reservedFor): free the card.
    await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'one-gpu', NAMESPACE);
  });
  it('5. faults on the node: the kubelet SIGKILLed and restarted, the plugin SIGKILLed mid-Unprepare, a claim deleted while the plugin is down — each claim ends unprepared, nothing left behind', async () => {
    const client = plane.client;
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const checkpointClaims = () =>
      Object.keys(
        (
          JSON.parse(readFileSync(path.join(kubelet.pluginsDir, 'nvidia.gpustack.ai', 'checkpoint.json'), 'utf8')) as {
            claims: object;
          }
        ).claims,
      );
    const registrations = () =>
      (readFileSync(kubelet.process.logFile, 'utf8').match(/Registered DRA plugin.*nvidia\.gpustack\.ai/g) ?? [])
        .length;
    /** A Pod holding card-0 through a claim this test allocates (the scheduler's part), running; its CDI spec file. */
    const preparedPod = async (name: string): Promise<{ specFile: string; claimUid: string }> => {
      await client.applyObject({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name, namespace: NAMESPACE },
        spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpustack-nvidia' } }] } },
      } as KubeObject);
      const pod = await client.applyObject<KubeObject & { metadata: { uid: string } }>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NAMESPACE },
        spec: {
          nodeName: NODE,
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          resourceClaims: [{ name: 'gpu', resourceClaimName: name }],
          containers: [
            { name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never', resources: { claims: [{ name: 'gpu' }] } },
          ],
        },
      } as KubeObject);
      await client.applyObject(
        {
          apiVersion: 'resource.k8s.io/v1',
          kind: 'ResourceClaim',
          metadata: { name, namespace: NAMESPACE },
          status: {
            allocation: {
              devices: { results: [{ request: 'gpu', driver: 'nvidia.gpustack.ai', pool: NODE, device: 'card-0' }] },
              nodeSelector: {
                nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [NODE] }] }],
              },
            },
            reservedFor: [{ resource: 'pods', name, uid: pod.metadata.uid }],
          },
        } as KubeObject,
        { subresource: 'status' },
      );
      const { file: specFile, uid: claimUid } = await claimCdiSpecFile(client, cdiDir, name, NAMESPACE);
      await waitFor(
        async () => {
          const p = await client.get<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', name, NAMESPACE);
          return p?.status?.phase === 'Running' && existsSync(specFile);
        },
        180_000,
        `Pod ${name} did not run; see ${kubelet.process.logFile} and ${agent.logFile}`,
        1000,
      );
      return { specFile, claimUid: claimUid ?? '' };
    };
    /** The claim is unprepared: its spec file and checkpoint entry gone, no file of ours left in the CDI folder. */
    const unprepared = async (what: string, specFile: string, claimUid: string): Promise<void> => {
      await waitFor(
        async () => !existsSync(specFile) && !checkpointClaims().includes(claimUid),
        120_000,
        `${what}: the claim was not unprepared; see ${kubelet.process.logFile} and ${agent.logFile}`,
        1000,
      );
      expect(readdirSync(cdiDir), what).toEqual([]);
    };
    const lines: string[] = [];

    // (a) The kubelet SIGKILLed with a prepared claim and restarted: the Pod keeps running and its spec,
    // the kubelet registers the plugin again, and the Pod's deletion still unprepares the claim.
    {
      const { specFile, claimUid } = await preparedPod('kubelet-restart');
      const spec = readFileSync(specFile, 'utf8');
      const before = registrations();
      const killedAt = Date.now();
      await kubelet.process.kill();
      await kubelet.process.restart();
      await waitFor(async () => registrations() > before, 120_000, 'the restarted kubelet registers the plugin', 1000);
      const recoveredMs = Date.now() - killedAt;
      const pod = await client.get<KubeObject & { status?: { phase?: string } }>(
        'v1',
        'Pod',
        'kubelet-restart',
        NAMESPACE,
      );
      expect(pod?.status?.phase).toBe('Running');
      expect(readFileSync(specFile, 'utf8')).toBe(spec);
      await client.delete('v1', 'Pod', 'kubelet-restart', NAMESPACE, { gracePeriodSeconds: 0 });
      await unprepared('after the kubelet restart', specFile, claimUid);
      await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'kubelet-restart', NAMESPACE);
      lines.push(
        `kubelet SIGKILLed and restarted: plugin registered again ${(recoveredMs / 1000).toFixed(1)} s after the kill`,
      );
    }

    // (b) The plugin SIGKILLed while the kubelet unprepares: frozen (SIGSTOP) before the Pod is
    // deleted, so the kubelet's NodeUnprepareResources waits on it, then killed; the kubelet retries
    // against the restarted plugin.
    {
      const { specFile, claimUid } = await preparedPod('unprepare-kill');
      await agent.kill('SIGSTOP');
      await client.delete('v1', 'Pod', 'unprepare-kill', NAMESPACE, { gracePeriodSeconds: 0 });
      // The kubelet stops the Pod and calls NodeUnprepareResources within seconds; the frozen plugin
      // holds the call open until it is killed.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const killedAt = Date.now();
      await agent.kill('SIGKILL');
      expect(existsSync(specFile), 'the spec outlives the killed plugin').toBe(true);
      await startAgent('agent-after-unprepare-kill');
      await registered();
      await unprepared('after the plugin was killed mid-Unprepare', specFile, claimUid);
      lines.push(
        `plugin SIGKILLed mid-Unprepare: claim unprepared ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
      );
      await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'unprepare-kill', NAMESPACE);
    }

    // (c) The plugin down while the Pod and its claim are deleted: the kubelet's retry, or the plugin's
    // own stale check at its first detection, unprepares a claim the API no longer has.
    {
      const { specFile, claimUid } = await preparedPod('deleted-while-down');
      await agent.kill('SIGKILL');
      const killedAt = Date.now();
      await client.delete('v1', 'Pod', 'deleted-while-down', NAMESPACE, { gracePeriodSeconds: 0 });
      await waitFor(
        async () => (await client.get('v1', 'Pod', 'deleted-while-down', NAMESPACE)) === undefined,
        60_000,
        'the Pod is gone',
        500,
      ).catch(() => undefined);
      await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'deleted-while-down', NAMESPACE);
      expect(existsSync(specFile), 'nothing unprepares while the plugin is down').toBe(true);
      await startAgent('agent-after-claim-deleted');
      await registered();
      await unprepared('a claim deleted while the plugin was down', specFile, claimUid);
      lines.push(
        `claim deleted while the plugin was down: unprepared ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
      );
    }
    log(
      `fault: the node side (kubelet plugin, kubelet) | ${lines.join('; ')} | checks: Pod kept running, spec unchanged, every claim unprepared (spec file and checkpoint entry gone, CDI folder empty)`,
    );
  });

  it("two shares of one card, allocated by the real kube-scheduler from the agent's slices, reach one container with their summed limits", async () => {
    const client = plane.client;
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    const scheduler = ensureComponents(['kube-scheduler'] as const)['kube-scheduler'];
    const proc = startProcess(
      'kube-scheduler',
      scheduler.binary,
      [`--kubeconfig=${plane.kubeconfig}`, '--leader-elect=false', '--secure-port=0', '--v=4'],
      plane.logsDir,
    );
    plane.adopt({ name: 'kube-scheduler', stop: () => proc.stop() });
    for (const deviceClass of buildDeviceClasses(new Set(['nvidia']), []))
      await client.applyObject(deviceClass as KubeObject);
    // The agent publishes the card's slices (its ResourceSlice publisher) while the plugin serves it.
    await waitFor(
      async () =>
        (await client.list('resource.k8s.io/v1', 'ResourceSlice')).some(
          (s) => (s as KubeObject & { spec?: { nodeName?: string } }).spec?.nodeName === NODE,
        ),
      60_000,
      `the agent published no ResourceSlice for ${NODE}; see ${agent.logFile}`,
      1000,
    );
    const share = (name: string) => ({
      name,
      exactly: { deviceClassName: 'gpustack-nvidia-shared', capacity: { requests: { memory: '20Gi' } } },
    });
    // A claim, not a template: no kube-controller-manager (its resourceclaim controller) runs here.
    await client.applyObject({
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      metadata: { name: 'two-shares', namespace: NAMESPACE },
      spec: { devices: { requests: [share('a'), share('b')] } },
    } as KubeObject);
    await client.applyObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'shares', namespace: NAMESPACE },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        // No CNI and no node lifecycle controller here: tolerate whatever the node carries.
        tolerations: [{ operator: 'Exists' }],
        resourceClaims: [{ name: 'gpu', resourceClaimName: 'two-shares' }],
        containers: [
          { name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never', resources: { claims: [{ name: 'gpu' }] } },
        ],
      },
    } as KubeObject);
    const diagnose = async () =>
      JSON.stringify({
        pod: (await client.get<KubeObject & { status?: unknown }>('v1', 'Pod', 'shares', NAMESPACE))?.status,
        claim: (
          await client.get<KubeObject & { status?: unknown }>(
            'resource.k8s.io/v1',
            'ResourceClaim',
            'two-shares',
            NAMESPACE,
          )
        )?.status,
      });
    const pod = await waitFor(
      async () => {
        const p = await client.get<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', 'shares', NAMESPACE);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      120_000,
      `Pod shares did not run; see ${plane.logsDir}`,
      1000,
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await diagnose()}`);
    });
    expect(pod.status?.phase).toBe('Running');
    const claimName = 'two-shares';
    const claim = await client.get<
      KubeObject & {
        metadata: { uid: string };
        status: { allocation: { devices: { results: { device: string; shareID?: string }[] } } };
      }
    >('resource.k8s.io/v1', 'ResourceClaim', claimName, NAMESPACE);
    const results = claim?.status.allocation.devices.results ?? [];
    expect(results.map((r) => r.device)).toEqual(['card-0-shared', 'card-0-shared']);
    expect(new Set(results.map((r) => r.shareID)).size).toBe(2);
    const spec = JSON.parse(
      readFileSync(path.join(cdiDir, `nvidia.gpustack.ai-card_${claim?.metadata.uid}.json`), 'utf8'),
    ) as { devices: { name: string; containerEdits: { env: string[] } }[] };
    expect(cdiSpecProblems(spec)).toEqual([]);
    expect(spec.devices).toHaveLength(2);
    const limits = ['GPUSTACK_NVIDIA_MEMORY_LIMIT_MIB_0=40960', 'GPUSTACK_NVIDIA_UNITS_0=320000'];
    for (const d of spec.devices) expect(d.containerEdits.env).toEqual(expect.arrayContaining(limits));
    // Both shares' CDI devices were injected into the one container.
    const ids = containerd.ctr(['containers', 'list', '-q']).split('\n').filter(Boolean);
    const infos = ids.map((id) => containerd.ctr(['containers', 'info', id]));
    expect(infos.some((info) => limits.every((l) => info.includes(l)))).toBe(true);
    await client.delete('v1', 'Pod', 'shares', NAMESPACE, { gracePeriodSeconds: 0 });
    await waitFor(
      async () => !existsSync(path.join(cdiDir, `nvidia.gpustack.ai-card_${claim?.metadata.uid}.json`)),
      120_000,
      `the kubelet did not unprepare the shares; see ${kubelet.process.logFile}`,
      1000,
    );
  });
  it('a Pod asking nvidia.com/gpu: 1, unchanged, runs through DRA on this node (no device plugin here): the scheduler claims a card, the kubelet injects its CDI variables', async () => {
    const client = plane.client;
    // The scheduler and the DeviceClasses of the test above: gpustack-nvidia maps nvidia.com/gpu.
    // Its claim still holds card-0's shares (no kube-controller-manager here deallocates it): delete
    // it, and drop the scheduler's finalizer that the controller would have removed.
    await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'two-shares', NAMESPACE);
    await client
      .mergePatch('resource.k8s.io/v1', 'ResourceClaim', 'two-shares', { metadata: { finalizers: null } }, NAMESPACE)
      .catch(() => undefined);
    await waitFor(
      async () => (await client.get('resource.k8s.io/v1', 'ResourceClaim', 'two-shares', NAMESPACE)) === undefined,
      30_000,
      'the claim two-shares deleted',
      500,
    );
    await client.applyObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'plain-gpu', namespace: NAMESPACE },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        tolerations: [{ operator: 'Exists' }],
        containers: [
          {
            name: 'main',
            image: PAUSE_IMAGE,
            imagePullPolicy: 'Never',
            resources: { limits: { 'nvidia.com/gpu': '1' } },
          },
        ],
      },
    } as KubeObject);
    type PlainPod = KubeObject & {
      status?: { phase?: string; extendedResourceClaimStatus?: { resourceClaimName: string } };
    };
    const running = await waitFor(
      async () => {
        const p = await client.get<PlainPod>('v1', 'Pod', 'plain-gpu', NAMESPACE);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      120_000,
      `Pod plain-gpu did not run; see ${plane.logsDir}`,
      1000,
    ).catch(async (error: Error) => {
      const p = await client.get<PlainPod>('v1', 'Pod', 'plain-gpu', NAMESPACE);
      throw new Error(`${error.message}\n${JSON.stringify(p?.status)}`);
    });
    const claimName = running.status?.extendedResourceClaimStatus?.resourceClaimName ?? '';
    expect(claimName).toMatch(/^plain-gpu-extended-resources-/);
    const claim = await client.get<
      KubeObject & {
        metadata: { uid: string };
        status: { allocation: { devices: { results: { driver: string; pool: string; device: string }[] } } };
      }
    >('resource.k8s.io/v1', 'ResourceClaim', claimName, NAMESPACE);
    expect(claim?.status.allocation.devices.results).toEqual([
      expect.objectContaining({ driver: 'nvidia.gpustack.ai', pool: NODE, device: 'card-0' }),
    ]);
    const specFile = path.join(cdiDir, `nvidia.gpustack.ai-card_${claim?.metadata.uid}.json`);
    const spec = JSON.parse(readFileSync(specFile, 'utf8')) as { devices: { containerEdits: { env: string[] } }[] };
    expect(cdiSpecProblems(spec)).toEqual([]);
    // The runtime applied the CDI spec to the container that asked nvidia.com/gpu: 1 (this Pod's: the
    // containers of earlier scenarios' deleted Pods may still wait for the kubelet's container GC).
    const ids = containerd
      .ctr(['containers', 'list', '-q', 'labels."io.kubernetes.pod.name"==plain-gpu'])
      .split('\n')
      .filter(Boolean);
    const infos = ids.map((id) => containerd.ctr(['containers', 'info', id]));
    expect(infos.filter((info) => info.includes('NVIDIA_VISIBLE_DEVICES=GPU-e2e-0'))).toHaveLength(1);
    expect(infos.some((info) => info.includes('CUDA_VISIBLE_DEVICES=GPU-e2e-0'))).toBe(true);
    await client.delete('v1', 'Pod', 'plain-gpu', NAMESPACE, { gracePeriodSeconds: 0 });
    await waitFor(
      async () => !existsSync(specFile),
      120_000,
      `the kubelet did not unprepare the extended-resource claim; see ${kubelet.process.logFile}`,
      1000,
    );
  });
});
