/**
 * @module Whether the kube-scheduler would let a pod onto a node at all, as far as the node itself
 * says: its NodeUnschedulable and TaintToleration filters, with toleration matching as
 * `k8s.io/api/core/v1` `Toleration.ToleratesTaint` does it.
 */
import type { Node, ReceivedToleration, Taint } from './objects.js';

/** The taint a cordoned node stands for; a pod tolerating it may still be scheduled there. */
export const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/**
 * True when `toleration` tolerates `taint`: an empty effect matches every effect, an empty key
 * every key; `Exists` ignores the value, `Equal` (the default operator) compares it. Any other
 * operator (the feature-gated `Lt`/`Gt`) matches nothing, as upstream does with the gate off.
 * @example toleratesTaint({ operator: 'Exists' }, { key: 'nvidia.com/gpu', effect: 'NoSchedule' }) // true
 */
export function toleratesTaint(toleration: ReceivedToleration, taint: Taint): boolean {
  const effect = toleration.effect ?? '';
  if (effect !== '' && effect !== (taint.effect ?? '')) return false;
  const key = toleration.key ?? '';
  if (key !== '' && key !== (taint.key ?? '')) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

function tolerated(tolerations: readonly ReceivedToleration[], taint: Taint): boolean {
  return tolerations.some((toleration) => toleratesTaint(toleration, taint));
}

/**
 * True when a pod with `tolerations` passes the scheduler's node filters that read only the node:
 * not cordoned (unless it tolerates `node.kubernetes.io/unschedulable:NoSchedule`), and every
 * `NoSchedule`/`NoExecute` taint tolerated. `PreferNoSchedule` only scores, so it never excludes.
 * @example isSchedulableFor({ ...node, spec: { unschedulable: true } }, []) // false
 */
export function isSchedulableFor(node: Node, tolerations: readonly ReceivedToleration[]): boolean {
  const spec = node.spec;
  if (spec?.unschedulable === true && !tolerated(tolerations, { key: TAINT_NODE_UNSCHEDULABLE, effect: 'NoSchedule' }))
    return false;
  return (spec?.taints ?? []).every(
    (taint) => (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') || tolerated(tolerations, taint),
  );
}
