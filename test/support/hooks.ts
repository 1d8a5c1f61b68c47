/**
 * @module One way to run a hook in tests: parse the raw body with the controller's request schema
 * (as the server does), call the pure sync function with a fixed `now`, and check the outcome
 * against the strict response schemas. `runScenario` adds the fixture file and the YAML snapshot.
 */
import { expect } from 'vitest';
import type { CompositeSyncResponse, DecoratorSyncResponse, SyncOutcome } from '../../src/k8s/index.js';
import {
  InstanceTypeSyncRequestSchema, NodeDevicesCheckSyncRequestSchema, NodeProfileSyncRequestSchema, SchedulingChainSyncRequestSchema,
  syncInstanceType, syncNodeDevicesCheck, syncNodeProfile, syncSchedulingChain,
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

type Runner<C extends Controller> = (raw: unknown, now: string) => OutcomeOf<C>;

const RUNNERS: { readonly [C in Controller]: Runner<C> } = {
  'scheduling-chain': (raw, now) => syncSchedulingChain(SchedulingChainSyncRequestSchema.parse(raw), { now }),
  'instance-type': (raw, now) => syncInstanceType(InstanceTypeSyncRequestSchema.parse(raw), { now }),
  'node-profile': (raw) => syncNodeProfile(NodeProfileSyncRequestSchema.parse(raw)),
  'node-devices-check': (raw, now) => syncNodeDevicesCheck(NodeDevicesCheckSyncRequestSchema.parse(raw), { now }),
};

const COMPOSITE: ReadonlySet<Controller> = new Set(['scheduling-chain', 'instance-type']);

/** Runs one hook on a raw request body; an ok outcome must pass the strict response schemas. */
export function runHook<C extends Controller>(controller: C, raw: unknown, now = NOW): OutcomeOf<C> {
  const outcome = (RUNNERS[controller] as Runner<C>)(raw, now);
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
