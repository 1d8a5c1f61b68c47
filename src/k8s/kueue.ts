/**
 * @module The Kueue v1beta2 objects we emit, as strict schemas: the fields we own and nothing
 * else. Limits follow the CRDs (≤ 8 nodeLabels/tolerations, ≤ 64 flavors per group).
 */
import { z } from 'zod';
import { LabelsSchema, TolerationSchema } from './objects.js';

export const KUEUE_API_VERSION = 'kueue.x-k8s.io/v1beta2';
export const KUEUE_MAX_FLAVORS_PER_GROUP = 64;
export const KUEUE_MAX_NODE_LABELS = 8;

const NameOnlyMetaSchema = z.strictObject({
  name: z.string(),
  labels: LabelsSchema.optional(),
  annotations: LabelsSchema.optional(),
});

export const ResourceFlavorSchema = z.strictObject({
  apiVersion: z.literal(KUEUE_API_VERSION),
  kind: z.literal('ResourceFlavor'),
  metadata: NameOnlyMetaSchema,
  spec: z.strictObject({
    nodeLabels: LabelsSchema.refine((m) => Object.keys(m).length <= KUEUE_MAX_NODE_LABELS, 'at most 8 nodeLabels'),
    tolerations: z.array(TolerationSchema).max(8).optional(),
    /** The flavor's Kueue Topology (docs/architecture.md#topology); immutable once set, with nodeLabels and tolerations. */
    topologyName: z.string().optional(),
  }),
});
export type ResourceFlavor = z.infer<typeof ResourceFlavorSchema>;

/** A Kueue Topology: its levels' node labels, coarse to fine, `kubernetes.io/hostname` last (immutable). */
export const TopologySchema = z.strictObject({
  apiVersion: z.literal(KUEUE_API_VERSION),
  kind: z.literal('Topology'),
  metadata: NameOnlyMetaSchema,
  spec: z.strictObject({
    levels: z
      .array(z.strictObject({ nodeLabel: z.string() }))
      .min(1)
      .max(16),
  }),
});
export type Topology = z.infer<typeof TopologySchema>;

export const FlavorQuotasSchema = z.strictObject({
  name: z.string(),
  resources: z.array(z.strictObject({ name: z.string(), nominalQuota: z.string() })).min(1),
});

export const ClusterQueueSchema = z.strictObject({
  apiVersion: z.literal(KUEUE_API_VERSION),
  kind: z.literal('ClusterQueue'),
  metadata: NameOnlyMetaSchema,
  spec: z.strictObject({
    namespaceSelector: z.strictObject({}),
    resourceGroups: z
      .array(
        z.strictObject({
          coveredResources: z.array(z.string()).min(1),
          flavors: z.array(FlavorQuotasSchema).min(1).max(KUEUE_MAX_FLAVORS_PER_GROUP),
        }),
      )
      .max(1)
      .optional(),
    preemption: z.strictObject({ withinClusterQueue: z.literal('LowerPriority') }),
    stopPolicy: z.enum(['None', 'Hold']),
    admissionChecksStrategy: z
      .strictObject({
        admissionChecks: z.array(z.strictObject({ name: z.string() })).min(1),
      })
      .optional(),
  }),
});
export type ClusterQueue = z.infer<typeof ClusterQueueSchema>;

export const LocalQueueSchema = z.strictObject({
  apiVersion: z.literal(KUEUE_API_VERSION),
  kind: z.literal('LocalQueue'),
  metadata: NameOnlyMetaSchema.extend({ namespace: z.string() }),
  spec: z.strictObject({ clusterQueue: z.string() }),
});
export type LocalQueue = z.infer<typeof LocalQueueSchema>;

export const AdmissionCheckSchema = z.strictObject({
  apiVersion: z.literal(KUEUE_API_VERSION),
  kind: z.literal('AdmissionCheck'),
  metadata: NameOnlyMetaSchema,
  spec: z.strictObject({ controllerName: z.string() }),
});
export type AdmissionCheck = z.infer<typeof AdmissionCheckSchema>;
