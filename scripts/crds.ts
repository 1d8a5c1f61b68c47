/**
 * @module Our three CRDs, generated from the zod schemas in src/k8s so the API server validates
 * exactly what the sync functions read and write. `npm run generate:manifests` writes them, the
 * same bytes into manifests/crds (the kustomization) and the Helm chart's crds/;
 * test/manifests/generated.test.ts fails when either copy drifts from the schemas.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import {
  GPUSTACK_API_VERSION,
  InstanceTypeSpecSchema,
  InstanceTypeStatusSchema,
  NodeProfileSpecSchema,
  NodeShardSpecSchema,
  NodeShardStatusSchema,
  SchedulingChainSpecSchema,
  SchedulingChainStatusSchema,
} from '../src/k8s/index.js';

type JsonSchema = Record<string, unknown>;
const [GROUP, VERSION] = GPUSTACK_API_VERSION.split('/') as [string, string];
const SAFE_INT = Number.MAX_SAFE_INTEGER;

/**
 * JSON Schema → structural OpenAPI v3 for a CRD: unknown fields are pruned by the API server, so
 * `additionalProperties: false` goes; zod's ±2^53 integer bounds are noise.
 */
function toStructural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toStructural);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$schema') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) >= SAFE_INT) continue;
    out[key] = toStructural(value);
  }
  return out;
}

function openApi(schema: z.ZodType): JsonSchema {
  return toStructural(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' })) as JsonSchema;
}

function withObservedGeneration(status: JsonSchema): JsonSchema {
  const properties = status['properties'] as JsonSchema;
  return { ...status, properties: { ...properties, observedGeneration: { type: 'integer', format: 'int64' } } };
}

interface CrdNames {
  readonly kind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: string[];
}

/** One CRD; `status` undefined → no status field and no status subresource (ChainSettings). */
function crd(
  names: CrdNames,
  spec: JsonSchema,
  status: JsonSchema | undefined,
  printerColumns: JsonSchema[],
): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}`, labels: { 'app.kubernetes.io/part-of': 'gpustack-operator' } },
    spec: {
      group: GROUP,
      names: { ...names, listKind: `${names.kind}List`, categories: ['gpustack'] },
      scope: 'Cluster',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          ...(status !== undefined ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: spec,
                ...(status !== undefined ? { status: withObservedGeneration(status) } : {}),
              },
            },
          },
        },
      ],
    },
  };
}

/**
 * What zod's refinements of `deviceLabelSources` say, for the API server: each source once (a
 * `set` list) and `Agent` first (CEL), so a bad order is refused at admission.
 */
function withDeviceLabelSourceRules(spec: JsonSchema): JsonSchema {
  const properties = spec['properties'] as Record<string, JsonSchema>;
  const sources = properties['deviceLabelSources'] as JsonSchema;
  return {
    ...spec,
    properties: {
      ...properties,
      deviceLabelSources: {
        ...sources,
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-validations': [
          {
            rule: "self[0] == 'Agent'",
            message: 'must start with Agent: labels our agent publishes are never overwritten',
          },
        ],
      },
    },
  };
}

/** The SchedulingChain, InstanceType, ChainSettings, NodeProfile and NodeShard CRDs, in that order. */
export function buildCrds(): JsonSchema[] {
  const chainSpec = { ...withDeviceLabelSourceRules(openApi(SchedulingChainSpecSchema)), default: {} };
  const typeSpec = {
    ...openApi(InstanceTypeSpecSchema),
    'x-kubernetes-validations': [
      {
        rule: '!self.acceleratable || (has(self.acceleratorGroup) && self.acceleratorGroup != "")',
        message: 'acceleratorGroup is required when acceleratable is true',
      },
    ],
  };
  return [
    crd(
      { kind: 'SchedulingChain', plural: 'schedulingchains', singular: 'schedulingchain', shortNames: ['schain'] },
      chainSpec,
      openApi(SchedulingChainStatusSchema),
      [
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Managed-Nodes', type: 'integer', jsonPath: '.status.managedNodes' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    ),
    crd(
      { kind: 'InstanceType', plural: 'instancetypes', singular: 'instancetype', shortNames: ['instype'] },
      typeSpec,
      openApi(InstanceTypeStatusSchema),
      [
        { name: 'Entrance', type: 'string', jsonPath: '.status.entrance' },
        { name: 'Unit-CPU', type: 'string', jsonPath: '.spec.unitResources.cpu' },
        { name: 'Unit-RAM', type: 'string', jsonPath: '.spec.unitResources.ram' },
        { name: 'Capacity', type: 'string', jsonPath: '.status.capacity' },
        { name: 'Free-Cards', type: 'integer', jsonPath: '.status.devices.free', priority: 1 },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    ),
    // The chain's resolved settings, written by the chain (its child) for node-profile to relate.
    crd(
      { kind: 'ChainSettings', plural: 'chainsettings', singular: 'chainsetting', shortNames: ['chainset'] },
      withDeviceLabelSourceRules(openApi(SchedulingChainSpecSchema)),
      undefined,
      [
        { name: 'Node-Management', type: 'string', jsonPath: '.spec.nodeManagement' },
        { name: 'General-Key', type: 'string', jsonPath: '.spec.generalKey' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    ),
    // What the chain reads of one managed Node, written by node-profile (the Node's attachment).
    crd(
      { kind: 'NodeProfile', plural: 'nodeprofiles', singular: 'nodeprofile', shortNames: ['nprof'] },
      openApi(NodeProfileSpecSchema),
      undefined,
      [
        { name: 'CPU', type: 'string', jsonPath: '.spec.cpuCapacity' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    ),
    // One shard of the NodeProfiles, written by the chain (its child); the node-shard controller
    // writes the summary the chain reads into its status (docs/architecture.md#node-shards).
    crd(
      { kind: 'NodeShard', plural: 'nodeshards', singular: 'nodeshard', shortNames: ['nshard'] },
      openApi(NodeShardSpecSchema),
      openApi(NodeShardStatusSchema),
      [
        { name: 'Index', type: 'integer', jsonPath: '.spec.index' },
        { name: 'Profiles', type: 'integer', jsonPath: '.status.profiles' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    ),
  ];
}

/** File name of each generated CRD under manifests/crds/ (and the chart's crds/). */
export function crdFileName(crdObject: JsonSchema): string {
  return `${(crdObject['metadata'] as { name: string }).name}.yaml`;
}

/** Every folder that holds the CRD files: the kustomization's and the Helm chart's (Helm installs crds/ first). */
export const CRD_DIRS = ['manifests/crds', 'charts/gpustack-operator/crds'] as const;

const CRD_HEADER = '# Generated by `npm run generate:manifests` from the zod schemas in src/k8s. Do not edit.\n';

/** The exact text of a CRD file, in every folder of CRD_DIRS. */
export function crdFileText(crdObject: JsonSchema): string {
  return CRD_HEADER + stringify(crdObject, { lineWidth: 0 });
}
