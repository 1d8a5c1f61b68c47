/**
 * @module Prometheus metrics of the node agent, named like the hook server's (`gpustack_<part>_…`),
 * on a registry of its own; `/metrics` beside `/healthz` serves them.
 */
import type { Registry } from 'prom-client';
import { counterOn, createRegistry, secondsOn } from '../runtime/index.js';
import type { DetectResult } from '../../native/index.js';

export type PublishResult = 'published' | 'unchanged' | 'failed';

/** What the agent reports as it works; `NO_RECORDING` where nobody scrapes (tests, `detect`). */
export interface AgentRecorder {
  /** One detection took `seconds`; its per-manufacturer errors, or `undefined` when it threw. */
  detection(seconds: number, result: DetectResult | undefined): void;
  /** One cycle's end: labels written, already as published, or the cycle failed (detect or API). */
  publish(result: PublishResult): void;
  /** One cycle's ResourceSlices: written, already as published, or the writes failed. */
  slicePublish(result: PublishResult): void;
}

export const NO_RECORDING: AgentRecorder = { detection: () => {}, publish: () => {}, slicePublish: () => {} };

export interface AgentMetrics extends AgentRecorder {
  readonly registry: Registry;
}

export function createAgentMetrics(options: { defaultMetrics?: boolean } = {}): AgentMetrics {
  const registry = createRegistry(options);
  const duration = secondsOn(
    registry,
    'gpustack_agent_detection_duration_seconds',
    'Time of one detection through the vendor libraries.',
    [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30],
  );
  const detections = counterOn(
    registry,
    'gpustack_agent_detections_total',
    'Detections, by result (ok: the addon answered, per-manufacturer errors aside; failed: it threw).',
    ['result'],
  );
  const errors = counterOn(
    registry,
    'gpustack_agent_detection_errors_total',
    'Per-manufacturer detection errors, by manufacturer and code (LibraryNotFound is normal on nodes without that vendor).',
    ['manufacturer', 'code'],
  );
  const publishes = counterOn(
    registry,
    'gpustack_agent_publishes_total',
    'Agent cycles, by result: published (labels written), unchanged, failed (retried with backoff).',
    ['result'],
  );
  const slicePublishes = counterOn(
    registry,
    'gpustack_agent_slice_publishes_total',
    'ResourceSlice publishing per cycle, by result: published (slices written or deleted), unchanged, failed (retried with backoff).',
    ['result'],
  );
  return {
    registry,
    detection: (seconds, result) => {
      duration.observe(seconds);
      detections.inc({ result: result === undefined ? 'failed' : 'ok' });
      for (const error of result?.errors ?? []) errors.inc({ manufacturer: error.manufacturer, code: error.code });
    },
    publish: (result) => publishes.inc({ result }),
    slicePublish: (result) => slicePublishes.inc({ result }),
  };
}
