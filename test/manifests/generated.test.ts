import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CRD_DIRS, buildCrds, crdFileName, crdFileText } from '../../scripts/crds.js';
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

  it.each(buildCrds().flatMap((crd) => CRD_DIRS.map((dir) => [join(dir, crdFileName(crd)), crd] as const)))(
    '%s is byte for byte what `npm run generate:manifests` writes',
    (path, crd) => {
      expect(readFileSync(path, 'utf8')).toBe(crdFileText(crd));
    },
  );

  it.each(CRD_DIRS)('%s holds the generated CRDs and nothing else', (dir) => {
    expect(readdirSync(dir).sort()).toEqual(buildCrds().map(crdFileName).sort());
  });

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

  describe('the InstanceType CRD admits only what can become a label', () => {
    interface StringRule {
      readonly minLength?: number;
      readonly maxLength?: number;
      readonly pattern?: string;
    }
    const [, instanceTypes] = buildCrds() as [
      unknown,
      {
        spec: {
          versions: {
            schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, StringRule> } } } };
          }[];
        };
      },
    ];
    const fields = instanceTypes.spec.versions[0]?.schema.openAPIV3Schema.properties.spec.properties ?? {};
    /** What the API server does with a string field's OpenAPI rules. */
    const admits = (field: string, value: string): boolean => {
      const rule = fields[field] ?? {};
      return (
        value.length >= (rule.minLength ?? 0) &&
        value.length <= (rule.maxLength ?? Number.POSITIVE_INFINITY) &&
        (rule.pattern === undefined || new RegExp(rule.pattern).test(value))
      );
    };

    it.each([
      { field: 'os', value: 'linuxé' },
      { field: 'os', value: 'linux/amd64' },
      { field: 'os', value: 'l'.repeat(65_536) },
      { field: 'os', value: '' },
      { field: 'arch', value: 'x86_64!' },
      { field: 'arch', value: '-amd64' },
      { field: 'acceleratorGroup', value: 'nvidia-tesla t4' },
      { field: 'acceleratorGroup', value: `nvidia-${'x'.repeat(32)}` },
      { field: 'generalGroup', value: 'amd:epyc' },
    ])('refuses $field $value', ({ field, value }) => {
      expect(admits(field, value)).toBe(false);
    });

    it.each([
      { field: 'os', value: 'linux' },
      { field: 'os', value: 'l'.repeat(63) },
      { field: 'arch', value: 'x86_64' },
      { field: 'acceleratorGroup', value: 'nvidia-tesla-t4' },
      { field: 'acceleratorGroup', value: `nvidia-${'x'.repeat(31)}` },
      { field: 'generalGroup', value: 'amd-epyc-7763' },
    ])('admits $field $value', ({ field, value }) => {
      expect(admits(field, value)).toBe(true);
    });
  });
});
