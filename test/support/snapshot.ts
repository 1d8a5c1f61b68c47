/**
 * @module Serialising test outcomes the way production does (sorted keys, no `undefined`, `null`
 * kept only where it means "delete this label"), and freezing fixtures to prove sync never mutates.
 */
import { stringify } from 'yaml';
import { canonicalize } from '../../src/k8s/index.js';

/**
 * Canonical YAML of any value: keys sorted, `undefined` dropped, `null` map values kept (a decorator's
 * `labels: {key: null}` deletes the key). The snapshot files are this text.
 * @example toYaml({ b: 1, a: null }) // 'a: null\nb: 1\n'
 */
export function toYaml(value: unknown): string {
  return stringify(canonicalize(value, { keepNull: true }), { lineWidth: 0 });
}

/** Freezes `value` and everything reachable from it, so any write inside sync throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value as Record<string, unknown>)) deepFreeze(member);
  }
  return value;
}
