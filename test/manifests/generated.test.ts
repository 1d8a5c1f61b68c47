import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildCrds, crdFileName } from '../../scripts/crds.js';
import { KUEUE_CONFIG_PATH, buildKueueConfig } from '../../scripts/kueue-config.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';

const readYaml = (path: string): unknown => parse(readFileSync(path, 'utf8'));

describe('generated manifests', () => {
  it.each(buildCrds().map((crd) => [crdFileName(crd), crd] as const))(
    '%s matches the zod schemas (run `npm run generate:manifests`)',
    (file, crd) => {
      expect(readYaml(join('manifests', 'crds', file))).toEqual(crd);
    },
  );

  it('the Kueue configuration matches the manufacturer table (run `npm run generate:manifests`)', () => {
    expect(readYaml(KUEUE_CONFIG_PATH)).toEqual(buildKueueConfig());
  });

  it('folds whole cards, shares and slice units of all nine manufacturers into credits', () => {
    const config = buildKueueConfig() as {
      resources: { transformations: { input: string; outputs: Record<string, string> }[] };
    };
    const byInput = new Map(config.resources.transformations.map((t) => [t.input, t.outputs]));
    expect(byInput.get('nvidia.com/gpu')).toEqual({ 'credits.gpustack.ai/nvidia': '1600000' });
    expect(byInput.get('nvidia.com/gpu.shared')).toEqual({ 'credits.gpustack.ai/nvidia': '160000' });
    expect(byInput.get('huawei.com/npu.sliced.units')).toEqual({ 'credits.gpustack.ai/ascend': '1' });
    expect(config.resources.transformations).toHaveLength(MANUFACTURER_NAMES.length * 3);
  });

  it('the SchedulingChain CRD refuses a repeated device-label source and one that does not start with Agent', () => {
    const [chain] = buildCrds() as [
      { spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: object } } } } }[] } },
    ];
    const spec = chain.spec.versions[0]?.schema.openAPIV3Schema.properties.spec;
    expect(spec?.properties).toHaveProperty('deviceLabelSources', {
      type: 'array',
      minItems: 1,
      maxItems: 4,
      default: ['Agent', 'NVIDIAGFD', 'AMDNodeLabeller', 'AscendDevicePlugin'],
      items: { type: 'string', enum: ['Agent', 'NVIDIAGFD', 'AMDNodeLabeller', 'AscendDevicePlugin'] },
      'x-kubernetes-list-type': 'set',
      'x-kubernetes-validations': [{ rule: "self[0] == 'Agent'", message: expect.stringContaining('Agent') }],
    });
  });

  it('InstanceType status admits what the sync writes plus observedGeneration, and the CRD requires acceleratorGroup for device types', () => {
    const [, instanceTypes] = buildCrds() as [
      unknown,
      {
        spec: {
          versions: {
            schema: {
              openAPIV3Schema: {
                properties: Record<
                  string,
                  { properties?: Record<string, unknown>; 'x-kubernetes-validations'?: unknown[] }
                >;
              };
            };
          }[];
        };
      },
    ];
    const schema = instanceTypes.spec.versions[0]?.schema.openAPIV3Schema;
    expect(Object.keys(schema?.properties['status']?.properties ?? {})).toEqual(
      expect.arrayContaining(['phase', 'entrance', 'flavors', 'capacity', 'conditions', 'observedGeneration']),
    );
    expect(schema?.properties['spec']?.['x-kubernetes-validations']).toHaveLength(1);
  });
});
