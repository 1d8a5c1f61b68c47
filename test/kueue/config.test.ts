import { describe, expect, it } from 'vitest';
import {
  buildKueueConfig,
  buildTransformations,
  KUEUE_FRAMEWORKS,
  kueueMinor,
  mergeKueueConfig,
  planDeviceClassMappings,
  type DeviceClassMapping,
} from '../../src/kueue/index.js';
import { buildDeviceClasses } from '../../src/dra/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';

type Config = {
  namespace?: string;
  integrations?: unknown;
  featureGates: Record<string, boolean>;
  resources: {
    quotaCheckStrategy?: string;
    transformations: { input: string; strategy: string }[];
    deviceClassMappings: DeviceClassMapping[];
  };
};

const DRA_GATES_17 = { DynamicResourceAllocation: true };
const DRA_GATES_18 = {
  KueueDRAIntegration: true,
  KueueDRAIntegrationPartitionableDevices: true,
  KueueDRAIntegrationExtendedResource: false,
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

  it('names the job frameworks the workloads run on: Jobs, JobSets, LeaderWorkerSets, Deployments of Pods', () => {
    for (const minor of [17, 19])
      expect((buildKueueConfig({ minor }) as Config).integrations).toEqual({
        frameworks: [
          'batch/job',
          'jobset.x-k8s.io/jobset',
          'leaderworkerset.x-k8s.io/leaderworkerset',
          'pod',
          'deployment',
        ],
      });
  });

  it('sets quotaCheckStrategy and its gate from Kueue 0.19 on and leaves both out before', () => {
    const v19 = buildKueueConfig({ minor: 19 }) as Config;
    const v17 = buildKueueConfig({ minor: 17 }) as Config;
    expect(v19.resources.quotaCheckStrategy).toBe('IgnoreUndeclared');
    expect(v19.featureGates).toEqual({ AssignQueueLabelsForPods: false, QuotaCheckStrategy: true, ...DRA_GATES_18 });
    expect(v17.resources).not.toHaveProperty('quotaCheckStrategy');
    expect(v17.featureGates).toEqual({ AssignQueueLabelsForPods: false, ...DRA_GATES_17 });
  });
});

describe('deviceClassMappings', () => {
  it("maps each manufacturer's whole-card class to its credits from 0.18, charged by the units counter (M per card)", () => {
    const { mappings, leftOut } = planDeviceClassMappings({ minor: 19 });
    expect(leftOut).toEqual([]);
    expect(mappings).toHaveLength(9);
    expect(mappings.find((m) => m.name === 'credits.gpustack.ai/nvidia')).toEqual({
      name: 'credits.gpustack.ai/nvidia',
      deviceClassNames: ['gpustack-nvidia'],
      sources: [
        {
          counter: {
            name: 'units',
            driver: 'nvidia.gpustack.ai',
            deviceSelector: {
              cel: {
                expression:
                  'device.driver == "nvidia.gpustack.ai" && device.attributes["nvidia.gpustack.ai"].mode == "whole"',
              },
            },
          },
        },
      ],
    });
    expect(planDeviceClassMappings({ minor: 18 }).mappings).toEqual(mappings);
  });

  it('maps them to whole cards (cards.gpustack.ai/<mfr>) on 0.17, which counts devices and knows no sources', () => {
    const { mappings } = planDeviceClassMappings({ minor: 17 });
    expect(mappings.map((m) => m.name)).toEqual(MANUFACTURER_NAMES.map((m) => `cards.gpustack.ai/${m}`));
    for (const mapping of mappings) expect(mapping).not.toHaveProperty('sources');
  });

  it("adds the model classes of the nodes, up to Kueue's 8 per mapping, and never a shared class", () => {
    const models = Array.from({ length: 9 }, (_, i) => `nvidia-model-${i}`);
    const { mappings, leftOut } = planDeviceClassMappings({ minor: 19, productKeys: [...models, 'amd-mi300x', 'x-y'] });
    const nvidia = mappings.find((m) => m.name === 'credits.gpustack.ai/nvidia');
    expect(nvidia?.deviceClassNames).toEqual(['gpustack-nvidia', ...models.slice(0, 7).map((m) => `gpustack-${m}`)]);
    expect(leftOut).toEqual(['gpustack-nvidia-model-7', 'gpustack-nvidia-model-8']);
    expect(mappings.find((m) => m.name === 'credits.gpustack.ai/amd')?.deviceClassNames).toEqual([
      'gpustack-amd',
      'gpustack-amd-mi300x',
    ]);
    // Every mapped class is one the chain emits for the same models, and a whole-card one.
    const emitted = new Map(
      buildDeviceClasses(new Set(MANUFACTURER_NAMES), [...models, 'amd-mi300x']).map((c) => [c.metadata.name, c]),
    );
    for (const name of mappings.flatMap((m) => m.deviceClassNames)) {
      expect(emitted.get(name)?.metadata.labels['resource.gpustack.ai/device-mode'], name).toBe('whole');
    }
  });

  it("keeps within Kueue's validation: ≤ 16 mappings, ≤ 8 classes each, unique names, a class in one mapping", () => {
    const { mappings } = planDeviceClassMappings({ minor: 19, productKeys: ['nvidia-h200', 'nvidia-h100'] });
    expect(mappings.length).toBeLessThanOrEqual(16);
    expect(new Set(mappings.map((m) => m.name)).size).toBe(mappings.length);
    const classes = mappings.flatMap((m) => m.deviceClassNames);
    expect(new Set(classes).size).toBe(classes.length);
    for (const mapping of mappings) expect(mapping.deviceClassNames.length).toBeLessThanOrEqual(8);
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

  it('replaces mappings of ours (by resource or by a gpustack- class) and keeps the others first', () => {
    const theirs = { name: 'example.com/fpga', deviceClassNames: ['fpga.example.com'] };
    const { resources, notes } = merged({
      resources: {
        deviceClassMappings: [
          theirs,
          { name: 'credits.gpustack.ai/nvidia', deviceClassNames: ['gpustack-nvidia'] },
          { name: 'example.com/old', deviceClassNames: ['gpustack-nvidia-h200'] },
        ],
      },
    });
    expect(resources.deviceClassMappings[0]).toEqual(theirs);
    expect(resources.deviceClassMappings).toHaveLength(1 + 9);
    expect(notes).toContain('replaced 2 deviceClassMappings of our DeviceClasses');
  });

  it('refuses when its mappings and yours pass the 16 Kueue accepts', () => {
    const theirs = Array.from({ length: 8 }, (_, i) => ({ name: `example.com/r${i}`, deviceClassNames: [`c${i}`] }));
    expect(mergeKueueConfig({ resources: { deviceClassMappings: theirs } }, { minor: 19 })).toEqual({
      ok: false,
      message: 'resources.deviceClassMappings: 8 of yours and our 9 exceed the 16 Kueue accepts',
    });
  });

  it('removes a DRA gate the target Kueue does not accept: the old name from 0.18, the new ones before', () => {
    const v19 = merged({ featureGates: { DynamicResourceAllocation: true } }, 19);
    expect(v19.featureGates).not.toHaveProperty('DynamicResourceAllocation');
    expect(v19.notes).toContain('removed featureGates.DynamicResourceAllocation: Kueue 0.19 does not accept it');
    const v17 = merged({ featureGates: { KueueDRAIntegration: true } }, 17);
    expect(v17.featureGates).toEqual({ AssignQueueLabelsForPods: false, DynamicResourceAllocation: true });
    expect(v17.notes).toContain('removed featureGates.KueueDRAIntegration: Kueue 0.17 does not accept it');
  });

  it('adds the job frameworks the workloads need after yours, keeping the other integration keys', () => {
    const config = merged({ integrations: { frameworks: ['ray.io/rayjob', 'pod'], labelKeysToCopy: ['team'] } });
    expect(config.integrations).toEqual({
      frameworks: [
        'ray.io/rayjob',
        'pod',
        'batch/job',
        'jobset.x-k8s.io/jobset',
        'leaderworkerset.x-k8s.io/leaderworkerset',
        'deployment',
      ],
      labelKeysToCopy: ['team'],
    });
    expect(config.notes).toContain(
      'added integrations.frameworks batch/job, jobset.x-k8s.io/jobset, leaderworkerset.x-k8s.io/leaderworkerset, deployment',
    );
  });

  it("keeps Kueue's default (batch/job) when none are named, for every version from 0.17, without a note", () => {
    for (const minor of [17, 18, 19]) {
      const config = merged({ integrations: { externalFrameworks: ['Foo.v1.example.com'] } }, minor);
      expect(config.integrations).toEqual({
        frameworks: [
          'batch/job',
          'jobset.x-k8s.io/jobset',
          'leaderworkerset.x-k8s.io/leaderworkerset',
          'pod',
          'deployment',
        ],
        externalFrameworks: ['Foo.v1.example.com'],
      });
      expect(config.notes.filter((n) => n.includes('integrations'))).toEqual([]);
    }
  });

  it('a configuration naming every framework already is left as it is', () => {
    const frameworks = [...KUEUE_FRAMEWORKS].reverse();
    const config = merged({ integrations: { frameworks } });
    expect(config.integrations).toEqual({ frameworks });
    expect(config.notes).toEqual([]);
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
    [{ integrations: ['pod'] }, 'integrations: expected a mapping, got ["pod"]'],
    [{ integrations: { frameworks: 'pod' } }, 'integrations.frameworks: expected a list of framework names'],
    [{ integrations: { frameworks: [1] } }, 'integrations.frameworks: expected a list of framework names'],
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
