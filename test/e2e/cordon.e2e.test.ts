// Cordoning one card (issue 25) on real components: etcd, kube-apiserver, kube-controller-manager
// (resource claim controller), kube-scheduler, Metacontroller, the Kueue manager and, from this
// repository, the hook server, the admission checker, one node agent on the fake NVIDIA library and
// the CLI binary. DeviceTaintRule is served as resource.k8s.io/v1 from Kubernetes 1.37; 1.36 serves
// it only as v1beta2 behind --runtime-config and the DRADeviceTaintRules gate, which the fixture
// sets there (harness/e2e/versions.ts). No kubelet: a Pod the scheduler binds stays Pending with
// its claim allocated, which is all a cordon acts on.
//
// Scenario: one Node with 4× H100; a whole claim and a share running; `cards cordon` of the
// shared card (it keeps running) and of a free one → a Pod asking 2 whole cards and one asking 2
// shares (2 distinct cards) are unschedulable, the checker counts 2 cards cordoned and 1 free,
// the ClusterQueue's quota drops from 4 cards to 2, and a Kueue Job asking 2 cards gets the
// check's Retry; `cards uncordon` → all back.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MiB, type FakeMachine } from '../../harness/native/fake-machine.js';
import { attributeOf, waitPool, type SliceDevice } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import {
  RESOURCE_API,
  allocated,
  claimsOf,
  createReadyNode,
  deletePodNow,
  pod,
  waitBound,
  waitUnschedulable,
  claimJob,
  claimTemplate,
} from '../../harness/e2e/scheduling.js';
import { describeWorkload, waitWorkload } from '../../harness/e2e/workloads.js';
import { localQueueName } from '../../src/nodefeature/index.js';

const run = promisify(execFile);
const CHECK = 'gpustack-node-devices';
const NAMESPACE = 'default';
const NODE = 'cordon-h100';
const NVIDIA = 'nvidia.gpustack.ai';
const CARDS = 'cards.gpustack.ai/nvidia';
const CONVERGE_MS = 120_000;

const MACHINE: FakeMachine = {
  lib: { nvidia: { driver: '570.124.06', runtime: 12080 } },
  devices: {
    nvidia: Array.from({ length: 4 }, (_, i) => ({
      name: 'NVIDIA H100 80GB HBM3',
      uuid: `GPU-${NODE}-${i}`,
      memory: 81559n * MiB,
      cores: 132,
      cc: '9.0',
      bus: `00000000:${(0x18 + i).toString(16).toUpperCase()}:00.0`,
    })),
  },
};

let client: KubeClient;
let productKey = '';

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args, '--kubeconfig', cluster.kubeconfig]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

const queueName = (): string => `gpustack-${productKey}-linux-amd64`;

/** The ClusterQueue's whole-card quota, summed over its flavors. */
async function cardQuota(): Promise<number> {
  const queue = await client.get<
    KubeObject & {
      spec: { resourceGroups?: { flavors: { resources: { name: string; nominalQuota: string | number }[] }[] }[] };
    }
  >('kueue.x-k8s.io/v1beta2', 'ClusterQueue', queueName());
  return (queue?.spec.resourceGroups ?? [])
    .flatMap((g) => g.flavors.flatMap((f) => f.resources))
    .filter((r) => r.name === CARDS)
    .reduce((sum, r) => sum + Number(r.nominalQuota), 0);
}

/** `status.devices` of the pool's InstanceType (the checker's count, copied by the hook). */
async function devices(): Promise<Record<string, number> | undefined> {
  const type = await client.get<KubeObject & { status?: { devices?: Record<string, number> } }>(
    'worker.gpustack.ai/v1alpha1',
    'InstanceType',
    queueName(),
  );
  return type?.status?.devices;
}

async function waitChain(what: string, check: () => Promise<boolean>): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), CONVERGE_MS, what, 1000);
}

const cluster = useCluster({
  scheduler: true,
  deviceTaintRules: true,
  kueue: true,
  hooks: true,
  checker: true,
  setup: async (c) => {
    client = c.client;
    await createReadyNode(client, { name: NODE });
    const agent = await c.startAgent(NODE, MACHINE);
    const pool = await waitPool(
      client,
      agent,
      NVIDIA,
      (p) => p.devices.filter((d) => attributeOf(d, NVIDIA, 'mode')?.string === 'whole').length === 4,
      'the agent publishes 4 whole cards',
    );
    productKey = attributeOf(pool.devices[0] as SliceDevice, NVIDIA, 'productKey')?.string ?? '';
    await waitChain('the chain emits the DeviceClasses and the queue has 4 cards', async () => {
      const names = (await client.list(RESOURCE_API, 'DeviceClass')).map((c) => c.metadata.name);
      return names.includes('gpustack-nvidia-shared') && (await cardQuota()) === 4;
    });
    for (const t of [
      claimTemplate('one-card', 'gpustack-nvidia'),
      claimTemplate('two-cards', 'gpustack-nvidia', { count: 2 }),
      claimTemplate('one-share', 'gpustack-nvidia-shared', { capacity: { memory: '10Gi' } }),
      claimTemplate('two-shares', 'gpustack-nvidia-shared', { count: 2, capacity: { memory: '10Gi' } }),
    ])
      await client.applyObject(t);
  },
});

/** The card index a bound Pod's claim holds (either device). */
async function cardOf(name: string): Promise<number> {
  const bound = await waitBound(client, NAMESPACE, name);
  const [claim] = await claimsOf(client, bound);
  const device = allocated(claim!)[0]?.device ?? '';
  return Number(/^card-(\d+)/.exec(device)?.[1]);
}

describe('cards cordon with DeviceTaintRule served (v1 on 1.37, v1beta2 on 1.36)', () => {
  it('takes a held and a free card out of the scheduler, the check and the quota; uncordon brings them back', async () => {
    try {
      await client.applyObject(pod('whole', NAMESPACE, { claims: [{ name: 'gpu', template: 'one-card' }] }));
      await client.applyObject(pod('share', NAMESPACE, { claims: [{ name: 'gpu', template: 'one-share' }] }));
      const whole = await cardOf('whole');
      const shared = await cardOf('share');
      const free = [0, 1, 2, 3].filter((i) => i !== whole && i !== shared);
      expect(free).toHaveLength(2);
      await waitChain('status.devices counts 1 whole, 1 shared, 2 free', async () => {
        const d = await devices();
        return d?.['allocated'] === 1 && d['shared'] === 1 && d['free'] === 2 && d['cordoned'] === 0;
      });

      // The shared card holds a claim: NoSchedule, and the CLI says who keeps running.
      const held = await cli('cards', 'cordon', `${NODE}/${shared}`, '--reason', 'e2e fan');
      expect(held.code, held.stderr).toBe(0);
      expect(held.stdout).toContain(`cordoned ${NODE}/card-${shared} (NoSchedule)`);
      expect(held.stdout).toMatch(
        /keeps running \(NoSchedule evicts nothing\):\n {2}.*default\/share \(claim default\/share-gpu-/,
      );
      const spare = await cli('cards', 'cordon', `${NODE}/${free[0]}`, '--reason', 'e2e firmware');
      expect(spare.code, spare.stderr).toBe(0);
      const rules = await client.request<{ items: KubeObject[] }>(
        'GET',
        `${cluster.deviceTaintRules?.path}?labelSelector=gpustack.ai/cordon=true`,
      );
      expect(rules.items.map((r) => r.metadata.name).sort()).toEqual(
        [shared, free[0]]
          .flatMap((i) => [
            `gpustack-cordon-${NODE}-nvidia-card-${i}`,
            `gpustack-cordon-${NODE}-nvidia-card-${i}-shared`,
          ])
          .sort(),
      );

      // One uncordoned free card is left: 2 whole cards do not fit, nor do 2 shares (2 distinct cards).
      await client.applyObject(pod('two-whole', NAMESPACE, { claims: [{ name: 'gpu', template: 'two-cards' }] }));
      await client.applyObject(pod('two-shares', NAMESPACE, { claims: [{ name: 'gpu', template: 'two-shares' }] }));
      await waitUnschedulable(client, NAMESPACE, 'two-whole');
      await waitUnschedulable(client, NAMESPACE, 'two-shares');
      // The running share was not evicted.
      expect((await client.get('v1', 'Pod', 'share', NAMESPACE))?.metadata.name).toBe('share');

      // The checker's ledger and the chain: 2 cordoned, 1 free; the queue has 2 cards.
      await waitChain('status.devices counts 2 cordoned, 1 free', async () => {
        const d = await devices();
        return d?.['cordoned'] === 2 && d['free'] === 1;
      });
      await waitChain('the ClusterQueue quota drops to 2 cards', async () => (await cardQuota()) === 2);
      // The check: a Job asking 2 whole cards gets its quota (2 cards; the bare Pods use none) and
      // the check's Retry, the ledger's largest free block being the 1 uncordoned free card.
      await client.applyObject(claimJob('check-two', localQueueName(queueName()), 'two-cards'));
      const workload = await waitWorkload(
        client,
        NAMESPACE,
        'check-two',
        (w) => w.status?.admissionChecks?.find((c) => c.name === CHECK)?.state === 'Retry',
        `the ${CHECK} check says Retry`,
      );
      expect(
        workload.status?.admissionChecks?.find((c) => c.name === CHECK)?.message,
        describeWorkload(workload),
      ).toMatch(/do not fit in flavor .*the largest free block is 1 card \(node cordon-h100/);
      await client.delete('batch/v1', 'Job', 'check-two', NAMESPACE, { gracePeriodSeconds: 0 });

      // Uncordon: the rules go, the quota and the counts come back, and the Pods fit again.
      for (const pending of ['two-whole', 'two-shares']) await deletePodNow(client, NAMESPACE, pending);
      for (const card of [shared, free[0]]) {
        const back = await cli('cards', 'uncordon', `${NODE}/${card}`);
        expect(back.code, back.stderr).toBe(0);
        expect(back.stdout.split('\n').filter(Boolean)).toHaveLength(2);
      }
      await waitChain('the ClusterQueue quota is back at 4 cards', async () => (await cardQuota()) === 4);
      await waitChain('status.devices counts 0 cordoned, 2 free', async () => {
        const d = await devices();
        return d?.['cordoned'] === 0 && d['free'] === 2;
      });
      await client.applyObject(pod('two-whole-again', NAMESPACE, { claims: [{ name: 'gpu', template: 'two-cards' }] }));
      const placed = await waitBound(client, NAMESPACE, 'two-whole-again');
      const [claim] = await claimsOf(client, placed);
      expect(
        allocated(claim!)
          .map((d) => Number(/^card-(\d+)$/.exec(d.device)?.[1]))
          .sort(),
      ).toEqual(free);

      // Faults in one line: an unknown node, an unknown card.
      const unknown = await cli('cards', 'cordon', 'no-such-node/0', '--reason', 'x');
      expect([unknown.code, unknown.stderr]).toEqual([1, 'error: node "no-such-node" not found\n']);
      const noCard = await cli('cards', 'cordon', `${NODE}/9`, '--reason', 'x');
      expect(noCard.code).toBe(1);
      expect(noCard.stderr).toBe(
        `error: node "${NODE}" has no card "card-9" (it has card-0, card-1, card-2, card-3)\n`,
      );
    } catch (error) {
      cluster.markFailed();
      throw error;
    }
  }, 900_000);
});
