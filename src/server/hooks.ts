/**
 * @module The hook table: which controller answers which hook, with which request schema. The
 * routes are generated from it, so a manifest's hook URL resolves iff it is listed here.
 */
import type { z } from 'zod';
import type { SyncOutcome } from '../k8s/index.js';
import {
  InstanceTypeCustomizeRequestSchema,
  InstanceTypeSyncRequestSchema,
  NodeDevicesCheckSyncRequestSchema,
  NodeProfileCustomizeRequestSchema,
  NodeProfileSyncRequestSchema,
  SchedulingChainCustomizeRequestSchema,
  SchedulingChainSyncRequestSchema,
  customizeInstanceType,
  customizeNodeProfile,
  customizeSchedulingChain,
  syncInstanceType,
  syncNodeDevicesCheck,
  syncNodeProfile,
  syncSchedulingChain,
  type SyncContext,
} from '../sync/index.js';

export type HookKind = 'customize' | 'sync' | 'finalize';
export type ControllerName = 'node-profile' | 'scheduling-chain' | 'instance-type' | 'node-devices-check';

export interface HookDefinition {
  readonly schema: z.ZodType;
  /** Decorator answers carry `null` label values that mean "remove"; they must survive serialisation. */
  readonly keepNull: boolean;
  readonly run: (request: never, context: SyncContext) => SyncOutcome<object>;
}

function hook<S extends z.ZodType>(
  schema: S,
  run: (request: z.infer<S>, context: SyncContext) => SyncOutcome<object>,
  options: { keepNull?: boolean } = {},
): HookDefinition {
  return { schema, run: run as HookDefinition['run'], keepNull: options.keepNull ?? false };
}

function always<T extends object>(response: T): SyncOutcome<T> {
  return { ok: true, response };
}

export const HOOKS: Readonly<Record<ControllerName, Partial<Record<HookKind, HookDefinition>>>> = {
  'node-profile': {
    customize: hook(NodeProfileCustomizeRequestSchema, (r) => always(customizeNodeProfile(r))),
    sync: hook(NodeProfileSyncRequestSchema, (r) => syncNodeProfile(r), { keepNull: true }),
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
    sync: hook(NodeDevicesCheckSyncRequestSchema, syncNodeDevicesCheck),
  },
};

/** Every hook route, e.g. `/hooks/instance-type/finalize`. */
export function hookRoutes(): string[] {
  return Object.entries(HOOKS).flatMap(([controller, hooks]) =>
    Object.keys(hooks).map((kind) => `/hooks/${controller}/${kind}`),
  );
}
