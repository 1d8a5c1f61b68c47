/**
 * @module Prometheus metrics of the admission checker, named like the hook server's
 * (`gpustack_<part>_…`), on a registry of its own; `/metrics` beside `/healthz` serves them.
 */
import type { Registry } from 'prom-client';
import { counterOn, createRegistry, secondsOn } from '../runtime/index.js';

/** What the checker reports as it works; `NO_RECORDING` where nobody scrapes (tests, `serve --admission` off). */
export interface AdmissionRecorder {
  /** One reconcile pass took `seconds`. */
  pass(seconds: number): void;
  /** One write of our entry: `written` with the verdict's state, or `skipped` (404/409) / `failed`. */
  write(result: 'written' | 'skipped' | 'failed', state: string): void;
  /** A watch of `resource` lost its stream for good and lists again (not the first list). */
  watchRestart(resource: string): void;
}

export const NO_RECORDING: AdmissionRecorder = { pass: () => {}, write: () => {}, watchRestart: () => {} };

export interface AdmissionMetrics extends AdmissionRecorder {
  readonly registry: Registry;
}

export function createAdmissionMetrics(options: { defaultMetrics?: boolean } = {}): AdmissionMetrics {
  const registry = createRegistry(options);
  const passDuration = secondsOn(
    registry,
    'gpustack_admission_pass_duration_seconds',
    'Time of one reconcile pass: every Workload awaiting our verdict decided, changed entries written.',
    [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const verdicts = counterOn(
    registry,
    'gpustack_admission_verdicts_total',
    'Verdicts written to Workloads (only changes are written), by state (Ready, Retry).',
    ['state'],
  );
  const writes = counterOn(
    registry,
    'gpustack_admission_writes_total',
    'Writes of our admission check entry, by result (written, skipped: 404/409, failed: retried).',
    ['result'],
  );
  const restarts = counterOn(
    registry,
    'gpustack_admission_watch_restarts_total',
    'Relists of a watched resource after its watch was lost (410 Gone, errors), by resource.',
    ['resource'],
  );
  return {
    registry,
    pass: (seconds) => passDuration.observe(seconds),
    write: (result, state) => {
      writes.inc({ result });
      if (result === 'written') verdicts.inc({ state });
    },
    watchRestart: (resource) => restarts.inc({ resource }),
  };
}
