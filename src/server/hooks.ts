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
  NodeShardCustomizeRequestSchema,
  NodeShardSyncRequestSchema,
  SchedulingChainCustomizeRequestSchema,
  SchedulingChainSyncRequestSchema,
  customizeInstanceType,
  customizeNodeProfile,
  customizeNodeShard,
  customizeSchedulingChain,
  NODE_KEY,
  NODE_PROFILE_KEY,
  shardPace,
  chainPace,
  profileArrival,
  NODE_SHARD_KEY,
  type Pace,
  syncInstanceType,
  syncNodeDevicesCheck,
  syncNodeProfile,
  syncNodeShard,
  syncSchedulingChain,
  type SyncContext,
} from '../sync/index.js';

export type HookKind = 'customize' | 'sync' | 'finalize';
export type ControllerName =
  'node-profile' | 'node-shard' | 'scheduling-chain' | 'instance-type' | 'node-devices-check';

/** A body that passed its hook's schema, ready to run; or the schema's issues. */
export type PreparedHook =
  | {
      readonly ok: true;
      run(context: SyncContext): SyncOutcome<object>;
      /** How long to hold this sync while Nodes join, read from the request and `now` (undefined: not at all). */
      pace(now: string, maxHoldSeconds: number): Pace | undefined;
    }
  | { readonly ok: false; readonly error: z.ZodError };

/** What the server needs of any hook, whatever its request type. */
export interface HookDefinition {
  /** Decorator answers carry `null` label values that mean "remove"; they must survive serialisation. */
  readonly keepNull: boolean;
  /** Parses a body with the hook's schema; the runner it returns is bound to the parsed request. */
  prepare(body: unknown): PreparedHook;
}

/** A hook that owns its schema and its runner: the runner takes exactly what the schema outputs. */
export interface Hook<S extends z.ZodType> extends HookDefinition {
  readonly schema: S;
  readonly run: (request: z.output<S>, context: SyncContext) => SyncOutcome<object>;
}

/** How join pacing (src/server/join-pacing.ts) reads a hook's request: its pure pace (src/sync). */
type Pacing<S extends z.ZodType> = (request: z.output<S>, now: string, maxHoldSeconds: number) => Pace | undefined;

/**
 * Defines a hook from its request schema and its runner; the runner's input type is inferred from
 * the schema, so the pair cannot drift apart.
 * @example defineHook({ schema: NodeDevicesCheckSyncRequestSchema, run: syncNodeDevicesCheck })
 */
export function defineHook<S extends z.ZodType>(definition: {
  readonly schema: S;
  readonly run: (request: z.output<S>, context: SyncContext) => SyncOutcome<object>;
  readonly keepNull?: boolean;
  readonly pacing?: Pacing<S>;
}): Hook<S> {
  const pacing = definition.pacing;
  const hook: Hook<S> = {
    schema: definition.schema,
    run: definition.run,
    keepNull: definition.keepNull ?? false,
    prepare(body) {
      const parsed = hook.schema.safeParse(body);
      if (!parsed.success) return { ok: false, error: parsed.error };
      // `hook.run`, read at call time: a test may replace the runner of a defined hook.
      return {
        ok: true,
        run: (context) => hook.run(parsed.data, context),
        pace: (now, maxHoldSeconds) => pacing?.(parsed.data, now, maxHoldSeconds),
      };
    },
  };
  return hook;
}

function always<T extends object>(response: T): SyncOutcome<T> {
  return { ok: true, response };
}

export const HOOKS = {
  'node-profile': {
    customize: defineHook({
      schema: NodeProfileCustomizeRequestSchema,
      run: (r) => always(customizeNodeProfile(r)),
    }),
    sync: defineHook({
      schema: NodeProfileSyncRequestSchema,
      run: (r) => syncNodeProfile(r),
      keepNull: true,
    }),
  },
  'node-shard': {
    customize: defineHook({
      schema: NodeShardCustomizeRequestSchema,
      run: (r) => always(customizeNodeShard(r)),
    }),
    sync: defineHook({
      schema: NodeShardSyncRequestSchema,
      run: (r) => syncNodeShard(r),
      pacing: (r, now, max) => shardPace(Object.values(r.related[NODE_PROFILE_KEY] ?? {}), now, max),
    }),
  },
  'scheduling-chain': {
    customize: defineHook({
      schema: SchedulingChainCustomizeRequestSchema,
      run: (r) => always(customizeSchedulingChain(r)),
    }),
    sync: defineHook({
      schema: SchedulingChainSyncRequestSchema,
      run: syncSchedulingChain,
      pacing: (r, now, max) =>
        chainPace(
          Object.values(r.children[NODE_SHARD_KEY] ?? {}).map((shard) => shard.status?.arrival),
          now,
          max,
          // The managed Nodes without a profile yet: Nodes joining, before any shard counts them.
          profileArrival(Object.values(r.related[NODE_KEY] ?? {})),
        ),
    }),
  },
  'instance-type': {
    customize: defineHook({
      schema: InstanceTypeCustomizeRequestSchema,
      run: (r) => always(customizeInstanceType(r)),
    }),
    sync: defineHook({ schema: InstanceTypeSyncRequestSchema, run: syncInstanceType }),
    // Metacontroller sets `finalizing: true`; the sync function tears down on that flag.
    finalize: defineHook({ schema: InstanceTypeSyncRequestSchema, run: syncInstanceType }),
  },
  'node-devices-check': {
    sync: defineHook({ schema: NodeDevicesCheckSyncRequestSchema, run: syncNodeDevicesCheck }),
  },
} as const satisfies Readonly<Record<ControllerName, Partial<Record<HookKind, HookDefinition>>>>;

/** One row of the hook table: its route's controller and hook kind, and the definition. */
export interface HookRoute {
  readonly controller: string;
  readonly kind: string;
  readonly definition: HookDefinition;
}

/** Every hook of the table, in table order. */
export function hookTable(): HookRoute[] {
  const table: Readonly<Record<string, Readonly<Partial<Record<string, HookDefinition>>>>> = HOOKS;
  return Object.entries(table).flatMap(([controller, hooks]) =>
    Object.entries(hooks).flatMap(([kind, definition]) => (definition ? [{ controller, kind, definition }] : [])),
  );
}

/** Every hook route, e.g. `/hooks/instance-type/finalize`. */
export function hookRoutes(): string[] {
  return hookTable().map(({ controller, kind }) => `/hooks/${controller}/${kind}`);
}
