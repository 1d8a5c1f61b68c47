// An over-committed card on the REAL kubelet (issue 46, docs/operations.md#faults): kube-scheduler
// 1.37.2 can count an allocation twice across a kube-apiserver restart and put shares past a card's
// counters. This test makes such an allocation the way the scheduler did — by writing the claims'
// status.allocation directly — and shows what our side owns:
//  1. the kubelet plugin refuses to prepare the share that takes the card past its memory: the Pod's
//     events name the card, the counter and the claims; nothing of it is written; the Pods already
//     running keep running with their CDI specs unchanged; once a holder goes, the kubelet's retry
//     prepares it;
//  2. the checker and `cards` show the card: `gpustack_card_overcommitted`, a CardOvercommitted
//     Warning Event to each claim holding it, HEALTH `over-committed` and the row's sentence.
// Then the fault itself: 30 share claims racing for the node's 4 cards through the real
// kube-scheduler while kube-apiserver is SIGKILLed for 10 s; whether or not the scheduler
// double-counts this time, no Pod may ever run on an over-committed card.
// Needs root (the kubelet and containerd), as test/e2e/kubelet-plugin.e2e.test.ts does.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import { buildDeviceClasses } from '../../src/dra/index.js';
import { parseQuantity } from '../../src/k8s/index.js';
import { FAKE_LIBRARIES, machineFile } from '../../harness/native/fake-machine.js';
import { sleep, waitFor, type KubeObject } from '../../harness/e2e/apply.js';
import { checkInvariants } from './fault-invariants.js';
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

const NODE = 'e2e-overcommit';
const NAMESPACE = 'dra-over';
const DRIVER = 'nvidia.gpustack.ai';

function missingPrerequisite(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: the kubelet and containerd need root';
  for (const tool of ['gcc', 'go', 'tar']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return undefined;
}

const missing = missingPrerequisite();

type Slice = KubeObject & {
  spec: {
    nodeName?: string;
    driver: string;
    devices?: { name: string; capacity?: Record<string, { value: string }> }[];
  };
};
type Event = KubeObject & { type?: string; reason?: string; note?: string; message?: string };

describe.skipIf(skipScenario('kubelet', missing))('an over-committed card on the real kubelet (issue 46)', () => {
  let plane: ControlPlane;
  let containerd: Containerd;
  let kubelet: Kubelet;
  let agent: ManagedProcess;
  let dir: string;
  let cdiDir: string;
  let checkerUrl: string;
  let kubeconfig: string;

  const cluster = useCluster({
    controllerManager: false,
    // The race of the fault scenario; the first scenario's Pods name their node and skip it.
    scheduler: true,
    // The checker watches Workloads (Kueue's CRDs) and the chain (our manifests, with the hooks).
    kueue: 'crds',
    hooks: true,
    checker: true,
    components: ['kubelet', 'containerd', 'runc'],
    setup: async (c) => {
      assertPrerequisite('kubelet', missing);
      plane = c.plane;
      kubeconfig = c.kubeconfig;
      checkerUrl = c.checker?.url ?? '';
      dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-over-'));
      cdiDir = path.join(dir, 'cdi');
      containerd = await startContainerd(dir, plane.logsDir, cdiDir);
      c.manage(containerd.process, async () => {
        containerd.killTasks();
        await containerd.process.stop(20_000);
      });
      containerd.ctr(['images', 'import', '--all-platforms', buildPauseImage(dir, c.versions.kubernetes)]);
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
      const [healthPort] = (await freePorts(1)) as [number];
      agent = startProcess(
        'agent',
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
            // Issue 46's node: 4 × H100.
            GPUSTACK_FAKE_DEVICES: machineFile(nvidiaMachine('NVIDIA H100 80GB HBM3', 4), dir),
            GPUSTACK_SYSFS_ROOT: dir,
          },
        },
      );
      plane.adopt({ name: 'agent', stop: () => agent.stop() });
    },
    cleanup: () => {
      if (dir) {
        unmountUnder(dir);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    },
  });

  it('the plugin refuses the share past the card memory and the checker and cards show the card; the share runs once a holder goes', async () => {
    const client = cluster.client;
    const started = Date.now();
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    // The card's memory as the agent published it: the counters the plugin checks against.
    const slice = await waitFor(
      async () =>
        (await client.list<Slice>('resource.k8s.io/v1', 'ResourceSlice')).find(
          (s) => s.spec.nodeName === NODE && s.spec.driver === DRIVER && s.spec.devices !== undefined,
        ),
      120_000,
      `the agent published no device slice for ${NODE}; see ${agent.logFile}`,
      1000,
    );
    const memory = slice.spec.devices?.find((d) => d.name === 'card-0-shared')?.capacity?.['memory']?.value ?? '';
    // The API server may spell 81920Mi as 80Gi: read the quantity, not the text.
    const cardMiB = (parseQuantity(memory) ?? 0) / 2 ** 20;
    expect(Number.isInteger(cardMiB) && cardMiB > 0, `card-0-shared memory ${memory}`).toBe(true);
    const big = Math.ceil(cardMiB * 0.45);
    const small = Math.ceil(cardMiB * 0.2);

    /** A Pod on the node with a claim of one share of card-0, allocated here as the scheduler would. */
    const sharePod = async (name: string, mib: number): Promise<void> => {
      await client.applyObject({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name, namespace: NAMESPACE },
        spec: {
          devices: {
            requests: [
              {
                name: 'gpu',
                exactly: { deviceClassName: 'gpustack-nvidia-shared', capacity: { requests: { memory: `${mib}Mi` } } },
              },
            ],
          },
        },
      } as KubeObject);
      const pod = await client.applyObject<KubeObject & { metadata: { uid: string } }>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NAMESPACE },
        spec: {
          nodeName: NODE,
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          tolerations: [{ operator: 'Exists' }],
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
              devices: {
                results: [
                  {
                    request: 'gpu',
                    driver: DRIVER,
                    pool: NODE,
                    device: 'card-0-shared',
                    shareID: randomUUID(),
                    consumedCapacity: { memory: `${mib}Mi` },
                  },
                ],
              },
              nodeSelector: {
                nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [NODE] }] }],
              },
            },
            reservedFor: [{ resource: 'pods', name, uid: pod.metadata.uid }],
          },
        } as KubeObject,
        { subresource: 'status' },
      );
    };
    const phase = async (name: string) =>
      (await client.get<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', name, NAMESPACE))?.status?.phase;
    const running = (name: string) =>
      waitFor(
        async () => (await phase(name)) === 'Running',
        180_000,
        `Pod ${name} did not run; see ${kubelet.process.logFile} and ${agent.logFile}`,
        1000,
      );

    await sharePod('a', big);
    await sharePod('b', big);
    await running('a');
    await running('b');
    const specA = (await claimCdiSpecFile(client, cdiDir, 'a', NAMESPACE)).file;
    const specB = (await claimCdiSpecFile(client, cdiDir, 'b', NAMESPACE)).file;
    const [textA, textB] = [readFileSync(specA, 'utf8'), readFileSync(specB, 'utf8')];

    // 1. The third share takes the card to 110 % of its memory: refused, the Pod's events say why.
    // The Pod exists before its claim is reserved for it (the reservation needs the Pod's uid), so
    // the kubelet may first fail with "not allowed to use ResourceClaim" and retry: wait for ours.
    await sharePod('c', small);
    const held = big * 2 + small;
    const refusal = await waitFor(
      async () =>
        (await client.list<Event>('v1', 'Event', { namespace: NAMESPACE })).find(
          (e) =>
            (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'c' &&
            e.reason === 'FailedPrepareDynamicResources' &&
            (e.message ?? '').includes('is over-committed'),
        ),
      120_000,
      `no over-commit FailedPrepareDynamicResources event for Pod c; see ${kubelet.process.logFile}`,
      1000,
    );
    const refusedAfterMs = Date.now() - started;
    expect(refusal.type).toBe('Warning');
    expect(refusal.message).toContain(
      `card-0 on ${NODE} (${DRIVER}) is over-committed: memory ${held}Mi held of ${cardMiB}Mi`,
    );
    // Every claim on the card is named, in the ledger's order (not by name): the two running and the refused one.
    expect(refusal.message).toContain('; held by ');
    for (const [claim, mib] of [
      ['a', big],
      ['b', big],
      ['c', small],
    ] as const)
      expect(refusal.message).toContain(`${NAMESPACE}/${claim} (memory ${mib}Mi)`);
    expect(await phase('c')).not.toBe('Running');
    const claimC = await client.get<KubeObject & { metadata: { uid: string } }>(
      'resource.k8s.io/v1',
      'ResourceClaim',
      'c',
      NAMESPACE,
    );
    expect(existsSync(path.join(cdiDir, `${DRIVER}-card_${claimC?.metadata.uid}.json`)), 'nothing of c written').toBe(
      false,
    );
    const checkpoint = JSON.parse(readFileSync(path.join(kubelet.pluginsDir, DRIVER, 'checkpoint.json'), 'utf8')) as {
      claims: Record<string, { name: string }>;
    };
    expect(
      Object.values(checkpoint.claims)
        .map((e) => e.name)
        .sort(),
    ).toEqual(['a', 'b']);
    expect([await phase('a'), await phase('b')]).toEqual(['Running', 'Running']);
    expect([readFileSync(specA, 'utf8'), readFileSync(specB, 'utf8')]).toEqual([textA, textB]);

    // 2. The checker's metric and Warning Events, and `cards`.
    const overcommitted = async () =>
      (await (await fetch(`${checkerUrl}/metrics`)).text())
        .split('\n')
        .filter((l) => l.startsWith('gpustack_card_overcommitted{'));
    await waitFor(
      async () => (await overcommitted()).length > 0,
      60_000,
      'the checker never exported gpustack_card_overcommitted',
      1000,
    );
    expect(await overcommitted()).toEqual([`gpustack_card_overcommitted{node="${NODE}",card="0"} 1`]);
    const warnings = await waitFor(
      async () => {
        const list = (await client.list<Event>('events.k8s.io/v1', 'Event', { namespace: NAMESPACE })).filter(
          (e) => e.reason === 'CardOvercommitted',
        );
        return list.length >= 3 ? list : undefined;
      },
      60_000,
      'the checker recorded no CardOvercommitted Warning for each claim',
      1000,
    );
    expect(
      warnings
        .map((e) => `${e.type} ${(e as { regarding?: { kind?: string; name?: string } }).regarding?.name}`)
        .sort(),
    ).toEqual(['Warning a', 'Warning b', 'Warning c']);
    expect(warnings[0]?.note).toContain(`memory ${held}Mi held of ${cardMiB}Mi`);
    const rows = (
      JSON.parse(
        execFileSync(process.execPath, [CLI, 'cards', '-o', 'json', '--kubeconfig', kubeconfig], { encoding: 'utf8' }),
      ) as {
        cards: { node: string; card: string; overcommitted: string | null }[];
      }
    ).cards.filter((r) => r.node === NODE && r.overcommitted !== null);
    expect(rows.map((r) => r.card)).toEqual(['card-0']);
    expect(
      execFileSync(process.execPath, [CLI, 'cards', '--node', NODE, '--kubeconfig', kubeconfig], { encoding: 'utf8' }),
    ).toMatch(/\bover-committed\s*$/m);

    // A holder goes (its Pod, then its claim): the kubelet's retry prepares c, the metric goes.
    await client.delete('v1', 'Pod', 'b', NAMESPACE, { gracePeriodSeconds: 0 });
    await waitFor(async () => !existsSync(specB), 120_000, `the kubelet did not unprepare b`, 1000);
    await client.delete('resource.k8s.io/v1', 'ResourceClaim', 'b', NAMESPACE);
    const freedAt = Date.now();
    await running('c');
    const ranAfterMs = Date.now() - freedAt;
    await waitFor(async () => (await overcommitted()).length === 0, 60_000, 'the metric stays after the fix', 1000);
    log(
      `fault: over-committed card (issue 46) | injected: shares of ${big}+${big}+${small} Mi on a ${cardMiB} Mi card, allocated through the claims' status | ` +
        `refused in the Pod's events ${(refusedAfterMs / 1000).toFixed(1)} s into the scenario; c ran ${(ranAfterMs / 1000).toFixed(1)} s after b's unprepare | ` +
        'checks: nothing of c written, a and b running with specs unchanged, metric + 3 Warnings + cards row, metric gone after the fix',
    );
    for (const name of ['a', 'c']) {
      await client.delete('v1', 'Pod', name, NAMESPACE, { gracePeriodSeconds: 0 });
      await client.delete('resource.k8s.io/v1', 'ResourceClaim', name, NAMESPACE);
    }
    await waitFor(
      async () => (await client.list('resource.k8s.io/v1', 'ResourceClaim', { namespace: NAMESPACE })).length === 0,
      120_000,
      'the first scenario leaves its claims behind',
      1000,
    );
  }, 600_000);

  it('fault: kube-apiserver SIGKILLed for 10 s while 30 share claims race for 4 cards through the real kube-scheduler — no Pod ever runs on an over-committed card', async () => {
    const client = cluster.client;
    const race = 'dra-race';
    await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: race } });
    for (const deviceClass of buildDeviceClasses(new Set(['nvidia']), []))
      await client.applyObject(deviceClass as KubeObject);
    const started = Date.now();
    const names = Array.from({ length: 30 }, (_, i) => `r${i}`);
    for (const name of names) {
      await client.applyObject({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name, namespace: race },
        spec: {
          devices: {
            requests: [
              {
                name: 'gpu',
                exactly: { deviceClassName: 'gpustack-nvidia-shared', capacity: { requests: { memory: '20Gi' } } },
              },
            ],
          },
        },
      } as KubeObject);
      await client.applyObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: race },
        spec: {
          hostNetwork: true,
          terminationGracePeriodSeconds: 1,
          tolerations: [{ operator: 'Exists' }],
          resourceClaims: [{ name: 'gpu', resourceClaimName: name }],
          containers: [
            { name: 'main', image: PAUSE_IMAGE, imagePullPolicy: 'Never', resources: { claims: [{ name: 'gpu' }] } },
          ],
        },
      } as KubeObject);
    }
    // Mid-race: some claims allocated, most not yet.
    await waitFor(
      async () =>
        (
          await client.list<KubeObject & { status?: { allocation?: unknown } }>('resource.k8s.io/v1', 'ResourceClaim', {
            namespace: race,
          })
        ).some((c) => c.status?.allocation !== undefined),
      60_000,
      'the scheduler allocated none of the race',
      100,
    );
    const apiserver = cluster.process('kube-apiserver');
    const killedAt = Date.now();
    await apiserver.kill('SIGKILL');
    await sleep(10_000);
    await apiserver.restart();
    const restartedAt = Date.now();
    // Sample until the race settles: as many 20Gi shares as the four cards hold run, the rest stay Pending.
    const violations = new Set<string>();
    let overcommitSeen = '';
    let settled = 0;
    let lastRunning = -1;
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline && settled < 15) {
      const { problems } = await checkInvariants(client, ['no Pod runs over its card']).catch(() => ({ problems: [] }));
      for (const p of problems) violations.add(p);
      const upstream = await checkInvariants(client, ['no card over its counters']).catch(() => ({ problems: [] }));
      if (upstream.problems.length > 0) overcommitSeen = upstream.problems.join('; ');
      const pods = await client
        .list<KubeObject & { status?: { phase?: string } }>('v1', 'Pod', { namespace: race })
        .catch(() => []);
      const runningNow = pods.filter((p) => p.status?.phase === 'Running').length;
      settled = runningNow === lastRunning ? settled + 1 : 0;
      lastRunning = runningNow;
      await sleep(1000);
    }
    const settledAfterMs = Date.now() - restartedAt;
    expect([...violations]).toEqual([]);
    const refused = (
      await client.list<KubeObject & { reason?: string; message?: string }>('v1', 'Event', { namespace: race })
    ).filter(
      (e) => e.reason === 'FailedPrepareDynamicResources' && (e.message ?? '').includes('over-committed'),
    ).length;
    log(
      `fault: kube-apiserver SIGKILL for 10 s mid-race (30 shares of 20Gi for 4 × H100) | injected ${((killedAt - started) / 1000).toFixed(1)} s into the race | ` +
        `settled ${(settledAfterMs / 1000).toFixed(1)} s after the restart, ${lastRunning} Pods running | ` +
        `checks: no Pod runs over its card ✓ (sampled every second); upstream over-commit ${overcommitSeen === '' ? 'not seen this time' : `seen: ${overcommitSeen}`}; ${refused} over-commit refusals in the Pods' events`,
    );
  }, 600_000);
});
