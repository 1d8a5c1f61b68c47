/**
 * @module Metacontroller hook wire format, hook API v2 (docs/architecture.md#hook-server).
 * Requests are loose (we receive whole objects); responses are strict because v2 hooks decode
 * responses strictly and reject unknown fields.
 */
import { z } from 'zod';
import { KubeObjectSchema, LabelSelectorSchema } from './objects.js';

/**
 * The outer key of `children`/`related`/`attachments`: `Kind.version` for the core group,
 * `Kind.group/version` otherwise.
 * @example objectMapKey('ClusterQueue', 'kueue.x-k8s.io/v1beta2') // 'ClusterQueue.kueue.x-k8s.io/v1beta2'
 */
export function objectMapKey(kind: string, apiVersion: string): string {
  return `${kind}.${apiVersion}`;
}

/** `{ "<Kind.group/version>": { "<ns/name or name>": object } }` */
export function objectMapSchema<T extends z.ZodType>(item: T) {
  return z.record(z.string(), z.record(z.string(), item));
}

const ControllerSchema = z.looseObject({ metadata: z.looseObject({ name: z.string().optional() }).optional() });

/**
 * A sync (or finalize) hook body of hook API v2. CompositeController and DecoratorController send
 * the same shape: the parent (a decorator's target), its children (attachments) and the related
 * objects its customize hook asked for.
 */
export const SyncRequestSchema = z.looseObject({
  controller: ControllerSchema.optional(),
  parent: KubeObjectSchema,
  children: objectMapSchema(KubeObjectSchema).default({}),
  related: objectMapSchema(KubeObjectSchema).default({}),
  finalizing: z.boolean().default(false),
});

/**
 * A DecoratorController hook of version v2 sends its target as `parent` and the attachments as
 * `children` (metacontroller `pkg/controller/decorator/api/v2`); hook v1 — the only kind older
 * Metacontroller releases send, whatever the manifest says — names them `object` and
 * `attachments`. Both are read into the v2 names.
 */
function decoratorV1ToV2(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const { object, attachments, ...rest } = body as Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest };
  if (out['parent'] === undefined && object !== undefined) out['parent'] = object;
  if (out['children'] === undefined && attachments !== undefined) out['children'] = attachments;
  return out;
}

/** Wraps a decorator request schema so it also reads hook v1 bodies. */
export function decoratorRequest<T extends z.ZodType>(schema: T) {
  return z.preprocess(decoratorV1ToV2, schema);
}

export const CustomizeRequestSchema = z.looseObject({
  controller: ControllerSchema.optional(),
  parent: KubeObjectSchema,
});
export type CustomizeRequest = z.infer<typeof CustomizeRequestSchema>;

export const RelatedResourceRuleSchema = z.strictObject({
  apiVersion: z.string(),
  resource: z.string(),
  labelSelector: LabelSelectorSchema.optional(),
  namespace: z.string().optional(),
  names: z.array(z.string()).optional(),
});
export type RelatedResourceRule = z.infer<typeof RelatedResourceRuleSchema>;

export const CustomizeResponseSchema = z.strictObject({
  relatedResources: z.array(RelatedResourceRuleSchema),
});
export type CustomizeResponse = z.infer<typeof CustomizeResponseSchema>;

const DesiredObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});

export const CompositeSyncResponseSchema = z.strictObject({
  status: z.record(z.string(), z.unknown()).optional(),
  children: z.array(DesiredObjectSchema),
  resyncAfterSeconds: z.number().positive().optional(),
  finalized: z.boolean().optional(),
});
export type CompositeSyncResponse = z.infer<typeof CompositeSyncResponseSchema>;

export const DecoratorSyncResponseSchema = z.strictObject({
  labels: z.record(z.string(), z.string().nullable()).optional(),
  annotations: z.record(z.string(), z.string().nullable()).optional(),
  status: z.record(z.string(), z.unknown()).optional(),
  attachments: z.array(DesiredObjectSchema).optional(),
  resyncAfterSeconds: z.number().positive().optional(),
  finalized: z.boolean().optional(),
});
export type DecoratorSyncResponse = z.infer<typeof DecoratorSyncResponseSchema>;

/**
 * What a sync function returns: a response for Metacontroller, or a refusal that the server
 * turns into 429 + Retry-After (Metacontroller then keeps every child and retries).
 */
export type SyncOutcome<R> =
  { readonly ok: true; readonly response: R } | { readonly ok: false; readonly error: SyncRefusal };

export interface SyncRefusal {
  readonly code: SyncRefusalCode;
  readonly message: string;
  readonly retryAfterSeconds: number;
}

export type SyncRefusalCode = 'MissingRelated' | 'InvalidSettings';
