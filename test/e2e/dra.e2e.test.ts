// Device allocation through DRA (DESIGN §8, issue 10 item 6) on real components: etcd,
// kube-apiserver, kube-controller-manager (with the resource claim controller), kube-scheduler
// v1.36.3, Metacontroller and our hook server, all built from the Go module proxy. No kubelet:
// the harness marks Nodes Ready, and a Pod the scheduler binds stays Pending with spec.nodeName
// set, its claim allocated. Run with `npm run test:e2e`.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { waitFor, type KubeClient, type KubeObject } from './support/apply.js';
import { describeComponents } from './support/components.js';
import { DRA_CONTROLLERS, planeComponents, startControlPlane, type ControlPlane } from './support/control-plane.js';
import {
  RESOURCE_API,
  allocated,
  claimsOf,
  createReadyNode,
  deletePodNow,
  pod,
  waitBound,
  waitUnschedulable,
  type ResourceClaim,
} from './support/scheduling.js';

const NAMESPACE = 'default';

let plane: ControlPlane;
let client: KubeClient;
let failed = false;
/** Each scenario's outcome and wall time, printed at the end (the issue asks for them). */
const timings: string[] = [];
let startedAt = 0;

function log(message: string): void {
  process.stderr.write(`[e2e] ${message}\n`);
}

beforeAll(async () => {
  plane = await startControlPlane({ scheduler: true, extraControllers: DRA_CONTROLLERS });
  client = plane.client;
  log(describeComponents(planeComponents(plane)));
}, 3_600_000);

beforeEach(() => {
  startedAt = Date.now();
});

afterEach((context) => {
  const state = context.task.result?.state === 'fail' ? 'FAIL' : 'pass';
  if (state === 'FAIL') failed = true;
  timings.push(`${state} ${((Date.now() - startedAt) / 1000).toFixed(1)} s  ${context.task.name}`);
});

afterAll(async () => {
  log(`scenario outcomes:\n  ${timings.join('\n  ')}`);
  if (failed) log(`component logs kept in ${plane?.logsDir}`);
  await plane?.stop({ failed });
}, 120_000);

describe('harness: kube-scheduler and the resource claim controller on the e2e control plane', () => {
  it('binds a plain Pod to the only Node that fits it, and leaves one that fits nowhere unschedulable', async () => {
    await createReadyNode(client, { name: 'harness-small', capacity: { cpu: '2', memory: '4Gi', pods: '10' } });
    await createReadyNode(client, { name: 'harness-big', capacity: { cpu: '32', memory: '64Gi', pods: '10' } });
    await client.applyObject(pod('harness-plain', NAMESPACE, { requests: { cpu: '8' } }));
    const bound = await waitBound(client, NAMESPACE, 'harness-plain');
    expect(bound.spec.nodeName).toBe('harness-big');

    await client.applyObject(pod('harness-too-big', NAMESPACE, { requests: { cpu: '100' } }));
    const message = await waitUnschedulable(client, NAMESPACE, 'harness-too-big');
    expect(message).toMatch(/Insufficient cpu/);
    await deletePodNow(client, NAMESPACE, 'harness-plain');
    await deletePodNow(client, NAMESPACE, 'harness-too-big');
  });

  // A harness self-test with a hand-written ResourceSlice: it proves the components allocate claims
  // at all. The scenarios below use the real agent's slices, never a hand-written one.
  it('harness self-test (hand-written ResourceSlice): a claim from a template is allocated and released', async () => {
    const driver = 'harness.e2e.test';
    await client.applyObject({
      apiVersion: RESOURCE_API,
      kind: 'DeviceClass',
      metadata: { name: 'harness-e2e' },
      spec: { selectors: [{ cel: { expression: `device.driver == "${driver}"` } }] },
    });
    await client.applyObject({
      apiVersion: RESOURCE_API,
      kind: 'ResourceSlice',
      metadata: { name: 'harness-big-harness' },
      spec: {
        driver,
        nodeName: 'harness-big',
        pool: { name: 'harness-big', generation: 1, resourceSliceCount: 1 },
        devices: [{ name: 'dev-0' }],
      },
    });
    await client.applyObject({
      apiVersion: RESOURCE_API,
      kind: 'ResourceClaimTemplate',
      metadata: { name: 'harness-one', namespace: NAMESPACE },
      spec: { spec: { devices: { requests: [{ name: 'dev', exactly: { deviceClassName: 'harness-e2e' } }] } } },
    });
    await client.applyObject(pod('harness-claim', NAMESPACE, { claims: [{ name: 'dev', template: 'harness-one' }] }));
    const bound = await waitBound(client, NAMESPACE, 'harness-claim');
    expect(bound.spec.nodeName).toBe('harness-big');
    const [claim] = await claimsOf(client, bound);
    expect(claim, 'the resource claim controller made a claim from the template').toBeDefined();
    expect(allocated(claim as ResourceClaim)).toEqual([
      expect.objectContaining({ driver, pool: 'harness-big', device: 'dev-0' }),
    ]);

    // The only device is taken: a second Pod waits, and gets it once the first is gone.
    await client.applyObject(pod('harness-claim-2', NAMESPACE, { claims: [{ name: 'dev', template: 'harness-one' }] }));
    expect(await waitUnschedulable(client, NAMESPACE, 'harness-claim-2')).toMatch(/cannot allocate all claims/);
    await deletePodNow(client, NAMESPACE, 'harness-claim');
    await waitFor(
      async () =>
        (await client.get(RESOURCE_API, 'ResourceClaim', (claim as KubeObject).metadata.name, NAMESPACE)) === undefined,
      60_000,
      'the generated claim is deleted with its Pod',
    );
    expect((await waitBound(client, NAMESPACE, 'harness-claim-2', 180_000)).spec.nodeName).toBe('harness-big');
    await deletePodNow(client, NAMESPACE, 'harness-claim-2');
    await client.delete(RESOURCE_API, 'ResourceSlice', 'harness-big-harness');
    await client.delete(RESOURCE_API, 'DeviceClass', 'harness-e2e');
    await client.delete(RESOURCE_API, 'ResourceClaimTemplate', 'harness-one', NAMESPACE);
    for (const node of ['harness-small', 'harness-big']) await client.delete('v1', 'Node', node);
  });
});
