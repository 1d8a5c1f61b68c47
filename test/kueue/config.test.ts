import { describe, expect, it } from 'vitest';
import { buildKueueConfig, buildTransformations, kueueMinor, mergeKueueConfig } from '../../src/kueue/index.js';

type Config = {
  namespace?: string;
  featureGates: Record<string, boolean>;
  resources: { quotaCheckStrategy?: string; transformations: { input: string; strategy: string }[] };
};

function merged(existing: unknown, minor = 19): Config & { notes: string[] } {
  const result = mergeKueueConfig(existing, { minor });
  if (!result.ok) throw new Error(result.message);
  return { ...(result.config as Config), notes: result.notes };
}

const OURS = buildTransformations().length;

describe('buildKueueConfig', () => {
  it('folds a card, a share and a slice unit of each of the nine manufacturers into credits', () => {
    expect(OURS).toBe(27);
    expect(buildTransformations().find((t) => t.input === 'nvidia.com/gpu.shared')?.outputs).toEqual({
      'credits.gpustack.ai/nvidia': '160000',
    });
  });

  it('sets quotaCheckStrategy and its gate from Kueue 0.19 on and leaves both out before', () => {
    const v19 = buildKueueConfig({ minor: 19 }) as Config;
    const v17 = buildKueueConfig({ minor: 17 }) as Config;
    expect(v19.resources.quotaCheckStrategy).toBe('IgnoreUndeclared');
    expect(v19.featureGates).toEqual({ AssignQueueLabelsForPods: false, QuotaCheckStrategy: true });
    expect(v17.resources).not.toHaveProperty('quotaCheckStrategy');
    expect(v17.featureGates).toEqual({ AssignQueueLabelsForPods: false });
  });
});

describe('mergeKueueConfig', () => {
  const existing = {
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    namespace: 'kueue-system',
    manageJobsWithoutQueueName: true,
    featureGates: { TopologyAwareScheduling: true, AssignQueueLabelsForPods: true },
    resources: {
      excludeResourcePrefixes: ['example.com/'],
      transformations: [
        { input: 'example.com/fpga', strategy: 'Retain', outputs: { 'example.com/credits': '1' } },
        { input: 'nvidia.com/gpu', strategy: 'Retain', outputs: { 'example.com/gpu-credits': '7' } },
      ],
    },
  };

  it('keeps every key of the existing configuration', () => {
    const config = merged(existing) as Config & Record<string, unknown>;
    expect(config['namespace']).toBe('kueue-system');
    expect(config['manageJobsWithoutQueueName']).toBe(true);
    expect(config.featureGates['TopologyAwareScheduling']).toBe(true);
    expect((config.resources as Record<string, unknown>)['excludeResourcePrefixes']).toEqual(['example.com/']);
  });

  it('replaces the transformations of our device resources and keeps the others first, in their order', () => {
    const { resources, notes } = merged(existing);
    expect(resources.transformations).toHaveLength(1 + OURS);
    expect(resources.transformations[0]?.input).toBe('example.com/fpga');
    expect(resources.transformations.filter((t) => t.input === 'nvidia.com/gpu')).toEqual([
      expect.objectContaining({ strategy: 'Replace' }),
    ]);
    expect(notes).toContain('replaced 1 transformations of our device resources');
  });

  it('sets our gates, saying which value it overwrote', () => {
    const { featureGates, notes } = merged(existing);
    expect(featureGates['AssignQueueLabelsForPods']).toBe(false);
    expect(notes).toContain('featureGates.AssignQueueLabelsForPods true → false');
  });

  it('is idempotent: merging into its own output changes nothing', () => {
    const once = mergeKueueConfig(existing, { minor: 19 });
    if (!once.ok) throw new Error(once.message);
    const twice = mergeKueueConfig(once.config, { minor: 19 });
    expect(twice.ok && twice.config).toEqual(once.config);
  });

  it('removes quotaCheckStrategy and its gate for a Kueue that does not know them (0.17), saying so', () => {
    const { resources, featureGates, notes } = merged(
      { featureGates: { QuotaCheckStrategy: true }, resources: { quotaCheckStrategy: 'IgnoreUndeclared' } },
      17,
    );
    expect(resources).not.toHaveProperty('quotaCheckStrategy');
    expect(featureGates).not.toHaveProperty('QuotaCheckStrategy');
    expect(notes).toEqual([
      'removed featureGates.QuotaCheckStrategy: Kueue 0.17 does not know it',
      'removed resources.quotaCheckStrategy: Kueue 0.17 does not know it',
    ]);
  });

  it('an empty or absent configuration gives ours alone', () => {
    expect(merged(undefined)).toEqual({ ...(buildKueueConfig({ minor: 19 }) as Config), notes: [] });
    expect(merged({})).toEqual({ ...(buildKueueConfig({ minor: 19 }) as Config), notes: [] });
  });

  it.each([
    [[], 'the configuration to merge into is not a mapping'],
    [
      { apiVersion: 'config.kueue.x-k8s.io/v1beta1' },
      'apiVersion: expected config.kueue.x-k8s.io/v1beta2, got "config.kueue.x-k8s.io/v1beta1"',
    ],
    [{ kind: 'ConfigMap' }, 'kind: expected Configuration, got "ConfigMap"'],
    [{ featureGates: ['a'] }, 'featureGates: expected a mapping, got ["a"]'],
    [{ resources: { transformations: 'x' } }, 'resources.transformations: expected a list'],
  ])('refuses %j: %s', (input, message) => {
    expect(mergeKueueConfig(input, { minor: 19 })).toEqual({ ok: false, message });
  });
});

describe('kueueMinor', () => {
  it.each([
    ['0.19', 19],
    ['v0.19.2', 19],
    ['0.17.0', 17],
    ['v0.20.0-rc.1', 20],
    ['0.16', undefined],
    ['1.0', undefined],
    ['latest', undefined],
  ])('%s → %s', (version, minor) => {
    expect(kueueMinor(version)).toBe(minor);
  });
});
