/**
 * Toleration matching as `k8s.io/api/core/v1` `Toleration.ToleratesTaint` does it, and the
 * scheduler's node-only filters (NodeUnschedulable, TaintToleration) built on it.
 */
import { describe, expect, it } from 'vitest';
import {
  NodeSchema,
  isSchedulableFor,
  toleratesTaint,
  type Node,
  type ReceivedToleration,
  type Taint,
} from '../../src/k8s/index.js';

const GPU: Taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };

describe('toleratesTaint', () => {
  it.each<{ name: string; toleration: ReceivedToleration; taint?: Taint; want: boolean }>([
    {
      name: 'Equal matches key, value and effect',
      toleration: { key: 'nvidia.com/gpu', operator: 'Equal', value: 'present', effect: 'NoSchedule' },
      want: true,
    },
    { name: 'no operator means Equal', toleration: { key: 'nvidia.com/gpu', value: 'present' }, want: true },
    {
      name: 'Equal rejects another value',
      toleration: { key: 'nvidia.com/gpu', operator: 'Equal', value: 'x' },
      want: false,
    },
    { name: 'Equal without a value rejects a taint with one', toleration: { key: 'nvidia.com/gpu' }, want: false },
    {
      name: 'Equal without a value matches a taint without one',
      toleration: { key: 'k' },
      taint: { key: 'k', effect: 'NoSchedule' },
      want: true,
    },
    {
      name: 'Exists ignores the value',
      toleration: { key: 'nvidia.com/gpu', operator: 'Exists', value: 'x' },
      want: true,
    },
    { name: 'another key does not match', toleration: { key: 'amd.com/gpu', operator: 'Exists' }, want: false },
    {
      name: 'Exists with an empty key matches every key',
      toleration: { operator: 'Exists' },
      taint: { key: 'anything', value: 'v', effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'an empty key with Equal matches every key with that value (upstream, though validation forbids it)',
      toleration: { value: 'present' },
      want: true,
    },
    {
      name: 'an empty effect matches every effect',
      toleration: { key: 'nvidia.com/gpu', operator: 'Exists' },
      taint: { ...GPU, effect: 'NoExecute' },
      want: true,
    },
    {
      name: 'another effect does not match',
      toleration: { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' },
      want: false,
    },
    {
      name: 'an unknown operator matches nothing',
      toleration: { key: 'nvidia.com/gpu', operator: 'Gt', value: 'present' },
      want: false,
    },
    {
      name: 'tolerationSeconds plays no part',
      toleration: { key: 'nvidia.com/gpu', operator: 'Exists', tolerationSeconds: 0 },
      want: true,
    },
  ])('$name', ({ toleration, taint, want }) => {
    expect(toleratesTaint(toleration, taint ?? GPU)).toBe(want);
  });
});

describe('isSchedulableFor', () => {
  const node = (spec?: Node['spec']): Node => ({ metadata: { name: 'gpu-a' }, ...(spec ? { spec } : {}) });
  it.each<{ name: string; node: Node; tolerations?: ReceivedToleration[]; want: boolean }>([
    { name: 'a node without spec', node: node(), want: true },
    { name: 'a cordoned node', node: node({ unschedulable: true }), want: false },
    {
      name: 'a cordoned node, tolerated',
      node: node({ unschedulable: true }),
      tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
      want: true,
    },
    {
      name: 'a cordoned node, tolerated for NoExecute only',
      node: node({ unschedulable: true }),
      tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }],
      want: false,
    },
    { name: 'a NoSchedule taint', node: node({ taints: [GPU] }), want: false },
    { name: 'a NoExecute taint', node: node({ taints: [{ ...GPU, effect: 'NoExecute' }] }), want: false },
    { name: 'a PreferNoSchedule taint', node: node({ taints: [{ ...GPU, effect: 'PreferNoSchedule' }] }), want: true },
    {
      name: 'a tolerated taint',
      node: node({ taints: [GPU] }),
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
      want: true,
    },
    {
      name: 'one of two taints tolerated',
      node: node({ taints: [GPU, { key: 'team', effect: 'NoSchedule' }] }),
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }],
      want: false,
    },
  ])('$name → $want', ({ node: n, tolerations, want }) => {
    expect(isSchedulableFor(n, tolerations ?? [])).toBe(want);
  });
});

describe('NodeSchema spec', () => {
  it('reads unschedulable and taints, and keeps what it does not read', () => {
    const parsed = NodeSchema.parse({
      metadata: { name: 'gpu-a' },
      spec: {
        unschedulable: true,
        podCIDR: '10.0.0.0/24',
        taints: [{ key: 'k', effect: 'SomeFutureEffect', timeAdded: '2026-02-01T08:00:00Z' }],
      },
    });
    expect(parsed.spec?.unschedulable).toBe(true);
    expect(parsed.spec?.taints?.[0]).toEqual({
      key: 'k',
      effect: 'SomeFutureEffect',
      timeAdded: '2026-02-01T08:00:00Z',
    });
    expect(parsed.spec?.['podCIDR']).toBe('10.0.0.0/24');
  });
});
