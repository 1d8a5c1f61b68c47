/** @module Status conditions that only move their timestamp when they change. */
import type { Condition, OutputCondition } from './objects.js';

export interface ConditionInput {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/**
 * Builds a condition; keeps the previous `lastTransitionTime` while the status is unchanged (the
 * Kubernetes convention: the time marks a status transition, not a new message), so an unchanged
 * status stays byte-identical and does not re-trigger a sync.
 */
export function buildCondition(
  input: ConditionInput,
  previous: readonly Condition[] | undefined,
  now: string,
): OutputCondition {
  const old = previous?.find((c) => c.type === input.type);
  const unchanged = old !== undefined && old.status === input.status && typeof old.lastTransitionTime === 'string';
  return { ...input, lastTransitionTime: unchanged ? (old.lastTransitionTime as string) : now };
}

/**
 * RFC 3339 at whole seconds, as the API server stores `metav1.Time`: a value read back compares
 * equal to the one written, so no needless status churn.
 */
export function rfc3339Seconds(date: Date): string {
  // toISOString always prints milliseconds; dropping them floors to the second, also before 1970.
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
