// Faults, scenario 7's second half (issue 37): a Node that goes silent with cards held — its agent
// killed, its heartbeat (the kube-node-lease Lease a kubelet renews) stopped, the Node object kept.
// The real node lifecycle controller marks it unreachable and the taint eviction controller evicts
// its Pods; with no kubelet to confirm them gone they stay Terminating and keep their cards, as
// Kubernetes means them to. The admin's `node.kubernetes.io/out-of-service` taint (non-graceful
// node shutdown) lets the pod garbage collector force-delete them; their claims are then
// deallocated, and the ledger, the checker's card metrics and `cards` give the cards back. Its own
// cluster: the node lifecycle controller would mark every heartbeat-less fake Node of the faults
// file unreachable.
import { afterAll, describe, expect, it } from 'vitest';

import { microTime } from '../../src/admission/index.js';
import { attributeOf, waitPool, nvidiaMachine, type SliceDevice } from '../../harness/e2e/agent.js';
import { liveCards } from '../../harness/e2e/cards.js';
import { converge, log, useCluster, waitFor, type KubeObject } from '../../harness/e2e/index.js';
import {
  claimTemplate,
  createReadyNode,
  pod,
  waitBound,
  type Pod,
  type ResourceClaim,
} from '../../harness/e2e/scheduling.js';
import { checkInvariants } from './fault-invariants.js';

const RESOURCE = 'resource.k8s.io/v1';
const NVIDIA = 'nvidia.gpustack.ai';
const NODE = 'fault-gpu-silent';
const NAMESPACE = 'fault-silent';
/** How long the node lifecycle controller waits for a heartbeat before it marks the Node unreachable. */
const GRACE_SECONDS = 8;
/** How long the holders tolerate an unreachable or not-ready Node before they are evicted. */
const TOLERATION_SECONDS = 5;

const cluster = useCluster({
  kueue: 'crds',
  hooks: true,
  checker: true,
  scheduler: true,
  controllers: ['node-lifecycle-controller', 'taint-eviction-controller', 'pod-garbage-collector-controller'],
  controllerManagerArgs: ['--node-monitor-period=1s', `--node-monitor-grace-period=${GRACE_SECONDS}s`],
});

/** What a kubelet does for its Node's liveness: renew its Lease in kube-node-lease, every second. */
function startHeartbeat(node: string): { stop(): void } {
  let renewals = 0;
  let failures = 0;
  let lastError = '';
  const renewTime = () => microTime(new Date());
  const beat = async (): Promise<void> => {
    try {
      await cluster.client.mergePatch(
        'coordination.k8s.io/v1',
        'Lease',
        node,
        { spec: { renewTime: renewTime() } },
        'kube-node-lease',
      );
      renewals++;
    } catch (error) {
      failures++;
      lastError = (error as Error).message;
    }
  };
  let timer: NodeJS.Timeout | undefined;
  void cluster.client
    .applyObject({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: node, namespace: 'kube-node-lease' },
      spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: renewTime() },
    } as KubeObject)
    .then(() => {
      timer = setInterval(() => void beat(), 1000);
    });
  return {
    stop: () => {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      log(
        `heartbeat of ${node} stopped after ${renewals} renewals${failures > 0 ? ` (${failures} failed: ${lastError})` : ''}`,
      );
    },
  };
}

/** The checker's per-card series that name the node and hold a claim (gpustack_card_claims > 0). */
async function heldCardSeries(): Promise<number> {
  const text = await (await fetch(`${cluster.checker?.url}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('gpustack_card_claims{') && line.includes(`node="${NODE}"`))
    .filter((line) => Number(line.split(' ').at(-1)) > 0).length;
}

const taintsOf = async (): Promise<{ key: string; effect: string }[]> =>
  (await cluster.client.get<KubeObject & { spec?: { taints?: { key: string; effect: string }[] } }>('v1', 'Node', NODE))
    ?.spec?.taints ?? [];

let heartbeat: { stop(): void } | undefined;
let neighbour: { stop(): void } | undefined;
afterAll(() => {
  heartbeat?.stop();
  neighbour?.stop();
});

describe('faults survived: a Node silent past the eviction timeout', () => {
  it('7b. a Node NotReady past the eviction timeout with a whole card and a share held: its Pods are evicted but keep their cards until the Node is declared out of service, then everything lets go', async () => {
    // A healthy neighbour: with every Node of a zone silent the controller suspects its own
    // connectivity (full disruption) and evicts nothing.
    await createReadyNode(cluster.client, { name: `${NODE}-neighbour` });
    neighbour = startHeartbeat(`${NODE}-neighbour`);
    await createReadyNode(cluster.client, { name: NODE });
    heartbeat = startHeartbeat(NODE);
    const agent = await cluster.startAgent(NODE, nvidiaMachine('NVIDIA H100 80GB HBM3', 2));
    const whole = (d: SliceDevice) => attributeOf(d, NVIDIA, 'mode')?.string === 'whole';
    const pool = await waitPool(
      cluster.client,
      agent,
      NVIDIA,
      (p) => p.devices.filter(whole).length === 2,
      'two cards',
    );
    const key = attributeOf(pool.devices[0] as SliceDevice, NVIDIA, 'productKey')?.string ?? '';
    await waitFor(
      async () => (await cluster.client.get(RESOURCE, 'DeviceClass', `gpustack-${key}-shared`)) !== undefined,
      120_000,
      'the chain emits the DeviceClasses of the node',
    );
    await cluster.client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await cluster.client.applyObject(claimTemplate('silent-whole', `gpustack-${key}`, { namespace: NAMESPACE }));
    await cluster.client.applyObject(
      claimTemplate('silent-share', `gpustack-${key}-shared`, { namespace: NAMESPACE, capacity: { memory: '20Gi' } }),
    );
    const tolerations = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((taint) => ({
      key: taint,
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: TOLERATION_SECONDS,
    }));
    for (const [name, template] of [
      ['holds-whole', 'silent-whole'],
      ['holds-share', 'silent-share'],
    ] as const) {
      const spec = pod(name, NAMESPACE, {
        claims: [{ name: 'cards', template }],
        nodeSelector: { 'kubernetes.io/hostname': NODE },
      });
      // A workload's own grace period (the harness's Pods have none, so that deletions are instant).
      await cluster.client.applyObject({
        ...spec,
        spec: { ...(spec['spec'] as object), tolerations, terminationGracePeriodSeconds: 30 },
      } as KubeObject);
      await waitBound(cluster.client, NAMESPACE, name);
    }
    await waitFor(
      async () => (await heldCardSeries()) === 2,
      60_000,
      "the checker counts the node's two cards held",
      500,
    );

    // The node goes silent: its agent dies and its heartbeat stops; the Node object stays.
    await agent.process.kill('SIGKILL');
    heartbeat.stop();
    const silentAt = Date.now();
    await waitFor(
      async () =>
        (await taintsOf()).some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute'),
      120_000,
      'the node lifecycle controller taints the Node unreachable',
      500,
    );
    const taintedMs = Date.now() - silentAt;
    const terminating = async () =>
      (await cluster.client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE })).filter(
        (p) => p.metadata.deletionTimestamp !== undefined,
      );
    await waitFor(async () => (await terminating()).length === 2, 120_000, 'both holders evicted', 500).catch(
      async (error: Error) => {
        const pods = await cluster.client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE });
        throw new Error(
          `${error.message}: ${JSON.stringify(pods.map((p) => [p.metadata.name, p.metadata.deletionTimestamp ?? null, p.status?.phase]))}`,
        );
      },
    );
    const evictedMs = Date.now() - silentAt;

    // Evicted but not gone: no kubelet confirms, so the claims and the cards stay held, and the
    // checker and `cards` say so; nothing else can be given those cards.
    const allocatedHere = async () =>
      (await cluster.client.list<ResourceClaim>(RESOURCE, 'ResourceClaim', { namespace: NAMESPACE })).filter((c) =>
        (c.status?.allocation?.devices?.results ?? []).some((r) => r.pool === NODE),
      );
    expect((await allocatedHere()).length).toBe(2);
    expect(await heldCardSeries()).toBe(2);
    const held = (await liveCards(cluster.client, NVIDIA)).cards.filter((c) => c.node === NODE);
    expect(held.map((c) => c.state).sort()).toEqual(['shared', 'whole']);

    // The admin declares the node out of service (non-graceful node shutdown): the pod garbage
    // collector force-deletes the Terminating Pods, the claim controller deallocates their claims.
    await cluster.client.mergePatch('v1', 'Node', NODE, {
      spec: {
        taints: [
          ...(await taintsOf()),
          { key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' },
        ],
      },
    });
    const declaredAt = Date.now();
    await converge(
      "nothing holds the silent node's cards",
      async () => {
        const pods = (await cluster.client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE })).map(
          (p) => `pod ${p.metadata.name}`,
        );
        const claims = (await allocatedHere()).map((c) => `claim ${c.metadata.name} allocated`);
        const series = await heldCardSeries();
        const cards = (await liveCards(cluster.client, NVIDIA)).cards
          .filter((c) => c.node === NODE && c.state !== 'free')
          .map((c) => `card ${c.card} ${c.state}`);
        return [...pods, ...claims, ...cards, ...(series > 0 ? [`${series} card series held`] : [])];
      },
      180_000,
    );
    const releasedMs = Date.now() - declaredAt;
    const { summary, problems } = await checkInvariants(cluster.client, [
      'chain = render',
      'slices consistent',
      'no card over its counters',
      'bound Pods allocated',
    ]);
    expect(problems, summary).toEqual([]);
    log(
      `fault: Node silent (agent SIGKILL, heartbeat stopped, Node kept) with a whole card and a share held | ` +
        `tainted unreachable ${(taintedMs / 1000).toFixed(1)} s after, holders evicted ${(evictedMs / 1000).toFixed(1)} s after (grace ${GRACE_SECONDS} s, toleration ${TOLERATION_SECONDS} s), ` +
        `cards held while Terminating; out of service → released in ${(releasedMs / 1000).toFixed(1)} s | checks: ${summary}; claims, card metrics and cards followed`,
    );
  }, 600_000);
});
