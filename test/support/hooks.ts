/**
 * @module One way to run a hook in tests: parse the raw body with the controller's request schema
 * (as the server does), call the pure sync function with a fixed `now`, and check the outcome
 * against the strict response schemas. `runScenario` adds the fixture file and the YAML snapshot.
 */
import { expect } from 'vitest';
import type { CompositeSyncResponse, DecoratorSyncResponse, SyncOutcome } from '../../src/k8s/index.js';
import {
  InstanceTypeSyncRequestSchema,
  NodeDevicesCheckSyncRequestSchema,
  NodeProfileSyncRequestSchema,
  SchedulingChainSyncRequestSchema,
  syncInstanceType,
  syncNodeDevicesCheck,
  syncNodeProfile,
  syncSchedulingChain,
  type InstanceTypeSyncRequest,
  type NodeDevicesCheckSyncRequest,
  type NodeProfileSyncRequest,
  type SchedulingChainSyncRequest,
} from '../../src/sync/index.js';
import { readRequestFixture, responseSnapshotPath, type Controller } from './fixtures.js';
import { parseCompositeResponse, parseDecoratorResponse } from './responses.js';
import { toYaml } from './snapshot.js';

/** The fixed request time of every test: condition times either equal it or an older, kept value. */
export const NOW = '2026-03-01T12:00:00Z';

interface ResponseOf {
  'scheduling-chain': CompositeSyncResponse;
  'instance-type': CompositeSyncResponse;
  'node-profile': DecoratorSyncResponse;
  'node-devices-check': DecoratorSyncResponse;
}

export type OutcomeOf<C extends Controller> = SyncOutcome<ResponseOf[C]>;

interface Hook<C extends Controller> {
  /** The server's boundary: the raw body through the controller's request schema. */
  readonly parse: (raw: unknown) => unknown;
  /** The pure sync function on a parsed request. */
  readonly sync: (request: never, now: string) => OutcomeOf<C>;
}

const HOOKS: { readonly [C in Controller]: Hook<C> } = {
  'scheduling-chain': {
    parse: (raw) => SchedulingChainSyncRequestSchema.parse(raw),
    sync: (request: SchedulingChainSyncRequest, now) => syncSchedulingChain(request, { now }),
  },
  'instance-type': {
    parse: (raw) => InstanceTypeSyncRequestSchema.parse(raw),
    sync: (request: InstanceTypeSyncRequest, now) => syncInstanceType(request, { now }),
  },
  'node-profile': {
    parse: (raw) => NodeProfileSyncRequestSchema.parse(raw),
    sync: (request: NodeProfileSyncRequest) => syncNodeProfile(request),
  },
  'node-devices-check': {
    parse: (raw) => NodeDevicesCheckSyncRequestSchema.parse(raw),
    sync: (request: NodeDevicesCheckSyncRequest, now) => syncNodeDevicesCheck(request, { now }),
  },
};

/** A raw body parsed with the controller's request schema (zod returns a fresh object). */
export function parseRequest(controller: Controller, raw: unknown): unknown {
  return HOOKS[controller].parse(raw);
}

/** The sync function of a controller on an already parsed request (e.g. a deep-frozen one). */
export function syncParsed<C extends Controller>(controller: C, request: unknown, now = NOW): OutcomeOf<C> {
  return (HOOKS[controller] as Hook<C>).sync(request as never, now);
}

const COMPOSITE: ReadonlySet<Controller> = new Set(['scheduling-chain', 'instance-type']);

/** Runs one hook on a raw request body; an ok outcome must pass the strict response schemas. */
export function runHook<C extends Controller>(controller: C, raw: unknown, now = NOW): OutcomeOf<C> {
  const outcome = syncParsed(controller, parseRequest(controller, raw), now);
  if (outcome.ok) {
    if (COMPOSITE.has(controller)) parseCompositeResponse(outcome.response);
    else parseDecoratorResponse(outcome.response);
  } else {
    expect(outcome.error.retryAfterSeconds, 'a refusal always says when to retry').toBeGreaterThan(0);
  }
  return outcome;
}

/**
 * Runs a fixture scenario and compares the canonical YAML of its outcome with
 * `test/snapshots/sync/<controller>/<scenario>.response.yaml`. The caller asserts the point of the
 * scenario explicitly, so a careless `-u` cannot accept a regression.
 */
export async function runScenario<C extends Controller>(controller: C, scenario: string): Promise<OutcomeOf<C>> {
  const outcome = runHook(controller, readRequestFixture(controller, scenario));
  await expect(toYaml(outcome)).toMatchFileSnapshot(responseSnapshotPath(controller, scenario));
  return outcome;
}
