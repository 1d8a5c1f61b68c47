/** @module Label-selector evaluation, as the API server does it for `namespaceSelector`. */
import type { LabelSelector, Labels } from './objects.js';

/**
 * True when `labels` satisfy `selector`. An empty selector matches everything.
 * @example matchesSelector({ matchLabels: { team: 'a' } }, { team: 'a' }) // true
 */
export function matchesSelector(selector: LabelSelector, labels: Labels | undefined): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(have, req.key);
    const value = have[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!present || !values.includes(value as string)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(value as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}
