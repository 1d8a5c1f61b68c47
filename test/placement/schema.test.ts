/**
 * The receiving schemas are loose (style §9.8.7): what the checker does not read passes through,
 * quantities may be strings or numbers, and defaults fill what Kueue may leave out. The verdict
 * schema is strict: it is what we write.
 */
import { describe, expect, it } from 'vitest';
import {
  NodeDevicesVerdictSchema,
  ReceivedResourceFlavorSchema,
  PodSchema,
  WorkloadSchema,
} from '../../src/placement/index.js';

const workload = {
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'Workload',
  metadata: { name: 'job-train-1a2b3', namespace: 'team-a' },
  spec: {
    queueName: 'gpustack-fnv64-0123456789abcdef',
    podSets: [
      {
        name: 'main',
        template: {
          spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { 'nvidia.com/gpu': 2 } } }] },
        },
      },
    ],
  },
  status: {
    conditions: [
      {
        type: 'QuotaReserved',
        status: 'True',
        reason: 'QuotaReserved',
        message: '',
        lastTransitionTime: '2026-02-01T08:00:00Z',
      },
    ],
    admission: {
      clusterQueue: 'cq',
      podSetAssignments: [
        {
          name: 'main',
          flavors: { 'credits.gpustack.ai/nvidia': 'f' },
          resourceUsage: { 'credits.gpustack.ai/nvidia': '3200k' },
        },
      ],
    },
    admissionChecks: [
      { name: 'gpustack-node-devices', state: 'Pending', message: '', lastTransitionTime: '2026-02-01T08:00:00Z' },
    ],
  },
};

describe('received schemas', () => {
  it('keep the fields the checker does not read', () => {
    const parsed = WorkloadSchema.parse(workload);
    expect(parsed.spec['queueName']).toBe('gpustack-fnv64-0123456789abcdef');
    expect(parsed.status?.admission?.podSetAssignments[0]?.['resourceUsage']).toEqual({
      'credits.gpustack.ai/nvidia': '3200k',
    });
    expect(parsed.spec.podSets[0]?.template.spec.containers[0]?.['image']).toBe('x');
  });

  it('default a PodSet count to 1 and a missing podSets list to none', () => {
    expect(WorkloadSchema.parse(workload).spec.podSets[0]?.count).toBe(1);
    expect(WorkloadSchema.parse({ ...workload, spec: {} }).spec.podSets).toEqual([]);
  });

  it('accept a Workload Kueue has not looked at yet (no status)', () => {
    const { status: _status, ...fresh } = workload;
    expect(WorkloadSchema.parse(fresh).status).toBeUndefined();
  });

  it.each([
    ['a PodSet without a name', { ...workload, spec: { podSets: [{ template: { spec: {} } }] } }],
    [
      'a negative PodSet count',
      { ...workload, spec: { podSets: [{ name: 'main', count: -1, template: { spec: {} } }] } },
    ],
    [
      'a quantity that is neither string nor number',
      {
        ...workload,
        spec: {
          podSets: [{ name: 'main', template: { spec: { containers: [{ resources: { requests: { cpu: true } } }] } } }],
        },
      },
    ],
  ])('reject %s', (_name, bad) => {
    expect(WorkloadSchema.safeParse(bad).success).toBe(false);
  });

  it("read a PodSet template's tolerations and a flavor's, keeping fields they do not read", () => {
    const toleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
    const podSets = [{ name: 'main', template: { spec: { containers: [], tolerations: [toleration] } } }];
    expect(WorkloadSchema.parse({ ...workload, spec: { podSets } }).spec.podSets[0]?.template.spec.tolerations).toEqual(
      [toleration],
    );
    const flavor = ReceivedResourceFlavorSchema.parse({
      metadata: { name: 'f' },
      spec: { nodeLabels: {}, tolerations: [toleration] },
    });
    expect(flavor.spec?.tolerations).toEqual([toleration]);
  });

  it('reject a toleration that is not an object', () => {
    expect(
      ReceivedResourceFlavorSchema.safeParse({ metadata: { name: 'f' }, spec: { tolerations: ['nvidia.com/gpu'] } })
        .success,
    ).toBe(false);
  });

  it('read a Pod with no containers listed as asking nothing', () => {
    expect(PodSchema.parse({ metadata: { name: 'p' }, spec: { nodeName: 'gpu-a' } }).spec.containers).toEqual([]);
  });
});

describe('the verdict schema', () => {
  it.each([
    ['Rejected', { name: 'gpustack-node-devices', state: 'Rejected', message: '' }],
    [
      'a delay other than 30 s',
      { name: 'gpustack-node-devices', state: 'Retry', message: '', requeueAfterSeconds: 60 },
    ],
    [
      'a lastTransitionTime (the writer stamps it)',
      { name: 'gpustack-node-devices', state: 'Ready', message: '', lastTransitionTime: '2026-02-01T08:00:00Z' },
    ],
  ])('refuses %s', (_name, verdict) => {
    expect(NodeDevicesVerdictSchema.safeParse(verdict).success).toBe(false);
  });
});
