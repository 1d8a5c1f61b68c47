/**
 * @module The generic object shapes we receive from Metacontroller. Loose on purpose:
 * everything we do not read passes through untouched (zod `looseObject`), and time
 * fields stay RFC 3339 strings.
 */
import { z } from 'zod';

export const LabelsSchema = z.record(z.string(), z.string());
export type Labels = z.infer<typeof LabelsSchema>;

export const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1, 'metadata.name is required'),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().optional(),
  labels: LabelsSchema.optional(),
  annotations: LabelsSchema.optional(),
  deletionTimestamp: z.string().nullish(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

/** Any Kubernetes object as received: metadata validated, the rest kept as is. */
export const KubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
});
export type KubeObject = z.infer<typeof KubeObjectSchema>;

export const ConditionSchema = z.looseObject({
  type: z.string(),
  status: z.string(),
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  observedGeneration: z.number().optional(),
});
export type Condition = z.infer<typeof ConditionSchema>;

/** A condition as we write it: every field present, so output is deterministic. */
export const OutputConditionSchema = z.strictObject({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
});
export type OutputCondition = z.infer<typeof OutputConditionSchema>;

export const LabelSelectorRequirementSchema = z.strictObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});

export const LabelSelectorSchema = z.strictObject({
  matchLabels: LabelsSchema.optional(),
  matchExpressions: z.array(LabelSelectorRequirementSchema).optional(),
});
export type LabelSelector = z.infer<typeof LabelSelectorSchema>;

export const TolerationSchema = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Equal', 'Exists']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: z.number().int().optional(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/** A Node: only what the hooks read is checked, the rest passes through. */
export const NodeSchema = KubeObjectSchema.extend({
  status: z.looseObject({
    capacity: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  }).optional(),
});
export type Node = z.infer<typeof NodeSchema>;

/** A Namespace: name, labels and whether it is going away. */
export const NamespaceSchema = KubeObjectSchema.extend({
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type Namespace = z.infer<typeof NamespaceSchema>;
