/**
 * @module The generic object shapes we receive from Metacontroller. Loose on purpose:
 * everything we do not read passes through untouched (zod `looseObject`), and time
 * fields stay RFC 3339 strings.
 */
import { z } from 'zod';

export const LabelsSchema = z.record(z.string(), z.string());
export type Labels = z.infer<typeof LabelsSchema>;

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A label or annotation map as received: the same checks and issues as {@link LabelsSchema}, but
 * done in place, the object passed on as it came. A Node carries ~100 labels and the chain hook
 * receives every managed Node: `z.record` would copy each map on every sync.
 */
export const ReceivedLabelsSchema = z.custom<Labels>().check((payload) => {
  const input: unknown = payload.value;
  if (!isPlainRecord(input)) {
    payload.issues.push({ expected: 'record', code: 'invalid_type', input });
    return;
  }
  // for…in, not Object.keys: no key array per map (the prototype is Object.prototype or null, checked above).
  for (const key in input) {
    const value = input[key];
    if (typeof value !== 'string')
      payload.issues.push({ expected: 'string', code: 'invalid_type', input: value, path: [key] });
  }
});

/**
 * How deep a received value that we send back (an observed child's `spec`) may nest. Kubernetes
 * objects nest a handful of levels; the serialisers that write the answer (`canonicalize`, V8's
 * `JSON.stringify`) recurse and run out of stack a few thousand levels down.
 */
export const MAX_ECHOED_DEPTH = 100;

/**
 * Nesting depth of a JSON value (a scalar is 0, `[]` and `{}` are 1), walked without recursion so
 * that no depth can exhaust the stack; the walk stops as soon as the depth passes `limit`.
 * @example jsonDepth({ a: [1] }) // 2
 */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const [current, depth] = item;
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > limit) break;
    for (const member of Array.isArray(current) ? current : Object.values(current)) pending.push([member, depth + 1]);
  }
  return deepest;
}

/**
 * The largest `limit` of {@link pathPastDepth}: its walk recurses, one frame per level, and stops
 * one level past `limit`, so the limit bounds its stack whatever the value.
 */
export const MAX_DEPTH_LIMIT = 1000;

/** {@link pathPastDepth} below `value`, found at `level`; the path comes back last key first. */
function reversedPathPast(value: object, level: number, limit: number): PropertyKey[] | undefined {
  if (level > limit) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const member: unknown = value[i];
      if (member === null || typeof member !== 'object') continue;
      const path = reversedPathPast(member, level + 1, limit);
      if (path === undefined) continue;
      path.push(i);
      return path;
    }
    return undefined;
  }
  // for…in, not Object.entries: no array per object (a parsed JSON object has own keys only).
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key];
    if (member === null || typeof member !== 'object') continue;
    const path = reversedPathPast(member, level + 1, limit);
    if (path === undefined) continue;
    path.push(key);
    return path;
  }
  return undefined;
}

/**
 * The path to the first array or object (in document order) nested past `limit` levels, counted as
 * {@link jsonDepth} counts them; undefined when `value` (a parsed JSON value) nests at most `limit`.
 * Linear, and safe at any depth: the walk recurses, but never past `limit + 1` frames (at most
 * {@link MAX_DEPTH_LIMIT}); an explicit stack, as in {@link jsonDepth}, took twice the time.
 * @example pathPastDepth({ a: [[]] }, 2) // ['a', 0]
 */
export function pathPastDepth(value: unknown, limit: number): PropertyKey[] | undefined {
  if (!(limit >= 0 && limit <= MAX_DEPTH_LIMIT))
    throw new RangeError(`depth limit ${limit} is not in 0…${MAX_DEPTH_LIMIT}`);
  if (value === null || typeof value !== 'object') return undefined;
  return reversedPathPast(value, 1, limit)?.reverse();
}

/**
 * Adds the {@link MAX_ECHOED_DEPTH} bound to a schema of something we may send back as it came,
 * so a hostile body is a 400 naming the field and never a stack overflow (500) while the answer
 * is written.
 */
export function boundEchoedDepth<T extends z.ZodType>(schema: T): T {
  return schema.check((payload) => {
    if (jsonDepth(payload.value, MAX_ECHOED_DEPTH) > MAX_ECHOED_DEPTH)
      payload.issues.push({
        code: 'custom',
        message: `nests deeper than ${MAX_ECHOED_DEPTH} levels`,
        input: payload.value,
      });
  });
}

/** A received value we send back as it came (an observed child's `spec`): anything, depth-bounded. */
export const EchoedValueSchema = boundEchoedDepth(z.unknown());

export const ObjectMetaSchema = z.looseObject({
  name: z.string().min(1, 'metadata.name is required'),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.string().optional(),
  labels: ReceivedLabelsSchema.optional(),
  annotations: ReceivedLabelsSchema.optional(),
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

/**
 * A toleration as received (a pod template's, an observed flavor's): plain strings, so a value we
 * do not know (a newer operator or effect) reads as not matching instead of failing the object.
 */
export const ReceivedTolerationSchema = z.looseObject({
  key: z.string().optional(),
  operator: z.string().optional(),
  value: z.string().optional(),
  effect: z.string().optional(),
});
export type ReceivedToleration = z.infer<typeof ReceivedTolerationSchema>;

/** A Node taint as received; `key` and `effect` are required by the API server but not relied on here. */
export const TaintSchema = z.looseObject({
  key: z.string().optional(),
  value: z.string().optional(),
  effect: z.string().optional(),
});
export type Taint = z.infer<typeof TaintSchema>;

/** A Node: only what the hooks read is checked, the rest passes through. */
export const NodeSchema = KubeObjectSchema.extend({
  spec: z
    .looseObject({
      /** `true` once cordoned. */
      unschedulable: z.boolean().optional(),
      taints: z.array(TaintSchema).optional(),
    })
    .optional(),
  status: z
    .looseObject({
      capacity: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
      /** What the scheduler places against; a device plugin's `<base>` here makes it the cards' owner. */
      allocatable: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    })
    .optional(),
});
export type Node = z.infer<typeof NodeSchema>;

/** A Namespace: name, labels and whether it is going away. */
export const NamespaceSchema = KubeObjectSchema.extend({
  status: z.looseObject({ phase: z.string().optional() }).optional(),
});
export type Namespace = z.infer<typeof NamespaceSchema>;
