/**
 * @module The hook table: which controller answers which hook, with which request schema. The
 * routes are generated from it, so a manifest's hook URL resolves iff it is listed here.
 */
import type { z } from 'zod';
import type { SyncOutcome } from '../k8s/index.js';
import {
  InstanceTypeCustomizeRequestSchema, InstanceTypeSyncRequestSchema, NodeDevicesCheckSyncRequestSchema,
  NodeProfileCustomizeRequestSchema, NodeProfileSyncRequestSchema, SchedulingChainCustomizeRequestSchema,
  SchedulingChainSyncRequestSchema, customizeInstanceType, customizeNodeProfile, customizeSchedulingChain,
  syncInstanceType, syncNodeDevicesCheck, syncNodeProfile, syncSchedulingChain, type SyncContext,
} from '../sync/index.js';

export type HookKind = 'customize' | 'sync' | 'finalize';
export type ControllerName = 'node-profile' | 'scheduling-chain' | 'instance-type' | 'node-devices-check';

export interface HookDefinition {
  readonly schema: z.ZodType;
  /** Decorator answers carry `null` label values that mean "remove"; they must survive serialisation. */
  readonly keepNull: boolean;
  /** Top-level request fields as sent (wire name → name the schema reads); see {@link DECORATOR_V2_FIELDS}. */
  readonly wireFields?: Readonly<Record<string, string>>;
  readonly run: (request: never, context: SyncContext) => SyncOutcome<object>;
}

/**
 * A DecoratorController hook of version v2 sends its target as `parent` and the attachments as
 * `children` (metacontroller `pkg/controller/decorator/api/v2/hooks.go`); v1 sends `object` and
 * `attachments`, the names the decorator request schemas read. Both forms are accepted.
 */
export const DECORATOR_V2_FIELDS: Readonly<Record<string, string>> = { parent: 'object', children: 'attachments' };

/** A body as its schema reads it, and the way back from schema field names to the names sent. */
export interface SchemaBody {
  readonly body: unknown;
  readonly sentAs: Readonly<Record<string, string>>;
}

/**
 * Renames wire fields to schema fields. A body in the v1 form (schema names only) or that is not an
 * object passes as is; otherwise the v2 names are read, and a missing target is reported under its
 * v2 name (`parent`).
 */
export function toSchemaBody(body: unknown, wireFields: Readonly<Record<string, string>> | undefined): SchemaBody {
  if (!wireFields || body === null || typeof body !== 'object' || Array.isArray(body)) return { body, sentAs: {} };
  const record = body as Record<string, unknown>;
  const v1 = !Object.keys(wireFields).some((wire) => wire in record) && Object.values(wireFields).some((name) => name in record);
  if (v1) return { body, sentAs: {} };
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) renamed[wireFields[key] ?? key] = value;
  return { body: renamed, sentAs: Object.fromEntries(Object.entries(wireFields).map(([wire, name]) => [name, wire])) };
}

function hook<S extends z.ZodType>(
  schema: S, run: (request: z.infer<S>, context: SyncContext) => SyncOutcome<object>,
  options: { keepNull?: boolean; wireFields?: Readonly<Record<string, string>> } = {},
): HookDefinition {
  return { schema, run: run as HookDefinition['run'], keepNull: options.keepNull ?? false, ...(options.wireFields ? { wireFields: options.wireFields } : {}) };
}

function always<T extends object>(response: T): SyncOutcome<T> {
  return { ok: true, response };
}

export const HOOKS: Readonly<Record<ControllerName, Partial<Record<HookKind, HookDefinition>>>> = {
  'node-profile': {
    customize: hook(NodeProfileCustomizeRequestSchema, (r) => always(customizeNodeProfile(r))),
    sync: hook(NodeProfileSyncRequestSchema, (r) => syncNodeProfile(r), { keepNull: true, wireFields: DECORATOR_V2_FIELDS }),
  },
  'scheduling-chain': {
    customize: hook(SchedulingChainCustomizeRequestSchema, (r) => always(customizeSchedulingChain(r))),
    sync: hook(SchedulingChainSyncRequestSchema, syncSchedulingChain),
  },
  'instance-type': {
    customize: hook(InstanceTypeCustomizeRequestSchema, (r) => always(customizeInstanceType(r))),
    sync: hook(InstanceTypeSyncRequestSchema, syncInstanceType),
    // Metacontroller sets `finalizing: true`; the sync function tears down on that flag.
    finalize: hook(InstanceTypeSyncRequestSchema, syncInstanceType),
  },
  'node-devices-check': {
    sync: hook(NodeDevicesCheckSyncRequestSchema, syncNodeDevicesCheck, { wireFields: DECORATOR_V2_FIELDS }),
  },
};

/** Every hook route, e.g. `/hooks/instance-type/finalize`. */
export function hookRoutes(): string[] {
  return Object.entries(HOOKS).flatMap(([controller, hooks]) => Object.keys(hooks).map((kind) => `/hooks/${controller}/${kind}`));
}
