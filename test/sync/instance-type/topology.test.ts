/**
 * An InstanceType's `TopologyReady` (docs/architecture.md#topology-status): the modelled system
 * reports it on each ClusterQueue; ours is on the InstanceType of the queue, read from the related
 * flavors and Topologies and the observed ClusterQueue.
 */
import { describe, expect, it } from 'vitest';
import { topologyProfileOf } from '../../../src/nodefeature/index.js';
import { makeInstanceType, makeSchedulingChain } from '../../builders/gpustack.js';
import { makeClusterQueue, makeNamespace, makeResourceFlavor, type Observed } from '../../builders/kueue.js';
import { instanceTypeRequest, type InstanceTypeRequestInput } from '../../builders/request.js';
import { runHook, runScenario } from '../../support/hooks.js';
import { conditionOf, expectOk, instanceTypeStatusOf } from '../../support/responses.js';

const C = 'instance-type';
const H100 = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64';
const HOST = 'kubernetes.io/hostname';
const BLOCK = 'cloud.google.com/gce-topology-block';
const BLOCK_PROFILE = topologyProfileOf([BLOCK, HOST]);
const HOST_PROFILE = topologyProfileOf([HOST]);
const AUTO = makeSchedulingChain().spec({ topology: { mode: 'Auto' } });

/** A topology-qualified 8-card H100 flavor of `profile`, as the chain emits it. */
function flavor(profile: string | undefined, deleting = false): Observed {
  const base = makeResourceFlavor(profile === undefined ? undefined : `${H100}-8d-${profile}`)
    .device('nvidia-h100-80gb-hbm3', 8)
    .nodes(2);
  const object = (deleting ? base.deleting() : base).obj();
  if (profile === undefined) return object;
  return { ...object, spec: { ...(object.spec as object), topologyName: `gpustack-${profile}` } };
}

function topology(profile: string): Observed {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Topology',
    metadata: { name: `gpustack-${profile}`, labels: { 'resource.gpustack.ai/type': 'topology' } },
    spec: { levels: [{ nodeLabel: BLOCK }, { nodeLabel: HOST }] },
  };
}

/** The observed queue listing `flavors`. */
function queueListing(...flavors: string[]): Observed {
  const queue = makeClusterQueue(H100).active().obj();
  return {
    ...queue,
    spec: { ...(queue.spec as object), resourceGroups: [{ flavors: flavors.map((name) => ({ name })) }] },
  };
}

function topologyReady(input: Omit<InstanceTypeRequestInput, 'parent'>) {
  const parent = makeInstanceType(H100).device('nvidia-h100-80gb-hbm3').obj();
  const raw = instanceTypeRequest({ parent, namespaces: [makeNamespace('default').obj()], ...input });
  return conditionOf(instanceTypeStatusOf(expectOk(runHook(C, raw))), 'TopologyReady');
}

describe('TopologyReady on an InstanceType', () => {
  it('reports the queue mid-migration', async () => {
    const response = expectOk(await runScenario(C, 'reports-the-queue-mid-migration'));
    const condition = conditionOf(instanceTypeStatusOf(response), 'TopologyReady');
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'Migrating' });
    expect(condition.message).toContain(`${H100}-8d-${HOST_PROFILE}`);
    expect(instanceTypeStatusOf(response).flavors).toEqual([`${H100}-8d-${BLOCK_PROFILE}`]);
  });

  it('is Ready when every flavor of the queue names an observed Topology', () => {
    const condition = topologyReady({
      chain: AUTO.obj(),
      flavors: [flavor(BLOCK_PROFILE)],
      topologies: [topology(BLOCK_PROFILE)],
    });
    expect(condition).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(condition.message).toBe(`1 flavors name observed Topologies: gpustack-${BLOCK_PROFILE}`);
  });

  it('is TopologyMissing when a flavor of the queue names a Topology that does not exist', () => {
    const condition = topologyReady({ chain: AUTO.obj(), flavors: [flavor(BLOCK_PROFILE)], topologies: [] });
    expect(condition).toMatchObject({ status: 'False', reason: 'TopologyMissing' });
    expect(condition.message).toContain(`${H100}-8d-${BLOCK_PROFILE} (gpustack-${BLOCK_PROFILE})`);
  });

  it('is TopologyPending while topology is on and a flavor names no Topology yet', () => {
    const condition = topologyReady({ chain: AUTO.obj(), flavors: [flavor(undefined)], topologies: [] });
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'TopologyPending' });
    expect(condition.message).toContain(`${H100}-8d`);
  });

  it('is TopologyPending while the Topologies are not in the request', () => {
    const parent = makeInstanceType(H100).device('nvidia-h100-80gb-hbm3').obj();
    const raw = instanceTypeRequest({
      parent,
      chain: AUTO.obj(),
      flavors: [flavor(BLOCK_PROFILE)],
      omitRelated: ['Topology.kueue.x-k8s.io/v1beta2'],
    });
    const condition = conditionOf(instanceTypeStatusOf(expectOk(runHook(C, raw))), 'TopologyReady');
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'TopologyPending' });
  });

  it('is Disabled while topology is off', () => {
    const condition = topologyReady({
      chain: makeSchedulingChain().obj(),
      flavors: [flavor(undefined)],
      topologies: [],
    });
    expect(condition).toMatchObject({ status: 'False', reason: 'Disabled' });
  });

  it('is Migrating while topology is off and the queue still lists a deleted topology flavor', () => {
    const condition = topologyReady({
      chain: makeSchedulingChain().obj(),
      flavors: [flavor(undefined), flavor(BLOCK_PROFILE, true)],
      topologies: [topology(BLOCK_PROFILE)],
      children: [queueListing(`${H100}-8d-${BLOCK_PROFILE}`)],
    });
    expect(condition).toMatchObject({ status: 'Unknown', reason: 'Migrating' });
    expect(condition.message).toContain('this update moves it to 1 flavors');
  });

  it('keeps the last TopologyReady while the spec is invalid', () => {
    const last = {
      type: 'TopologyReady',
      status: 'True',
      reason: 'Ready',
      message: 'before',
      lastTransitionTime: '2026-02-01T08:00:00Z',
    };
    const parent = makeInstanceType(H100).device('nvidia-h100-80gb-hbm3').obj();
    const broken = { ...parent, spec: { ...(parent.spec as object), os: 'Linux OS' }, status: { conditions: [last] } };
    const raw = instanceTypeRequest({ parent: broken, chain: AUTO.obj(), flavors: [], topologies: [] });
    const status = instanceTypeStatusOf(expectOk(runHook(C, raw)));
    expect(conditionOf(status, 'Ready')).toMatchObject({ reason: 'InvalidSpec' });
    expect(conditionOf(status, 'TopologyReady')).toEqual(last);
  });
});
