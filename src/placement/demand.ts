/**
 * @module Whole cards a pod asks for: one device resource (e.g. `nvidia.com/gpu`) read from a
 * PodSpec the way the scheduler sums it, so our count matches what kubelet will hand out.
 */
import { parseQuantity } from '../k8s/index.js';
import type { Container, PodSpec, ResourceList } from './schema.js';

/** Extended resources are whole numbers; int32 is the most Kueue counts in. */
const MAX_CARDS = 2 ** 31 - 1;

function quantityOf(list: ResourceList | undefined, resource: string): number | undefined {
  // hasOwn: a resource named like an Object.prototype member must not read the prototype.
  if (list === undefined || !Object.hasOwn(list, resource)) return undefined;
  const raw = list[resource];
  const value = typeof raw === 'number' ? raw : parseQuantity(raw ?? '');
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : 0;
}

/** Cards one container asks for: its request, else its limit (Kubernetes defaults the request to the limit). */
export function containerCards(container: Container, resource: string): number {
  const { requests, limits } = container.resources ?? {};
  const value = quantityOf(requests, resource) ?? quantityOf(limits, resource) ?? 0;
  // A fraction cannot be requested for an extended resource; round up rather than under-count.
  return Math.min(Math.ceil(value), MAX_CARDS);
}

/**
 * Cards one pod of `spec` asks for: max(the largest init step, app containers + sidecars), where
 * init steps run one at a time but each runs beside the sidecars started before it (restartable
 * init containers, `restartPolicy: Always`). Without sidecars this is max(max init, Σ app).
 */
export function podCards(spec: PodSpec, resource: string): number {
  let sidecars = 0;
  let initPeak = 0;
  for (const init of spec.initContainers ?? []) {
    const cards = containerCards(init, resource);
    if (init.restartPolicy === 'Always') {
      sidecars += cards;
      initPeak = Math.max(initPeak, sidecars);
    } else {
      initPeak = Math.max(initPeak, sidecars + cards);
    }
  }
  const app = spec.containers.reduce((sum, c) => sum + containerCards(c, resource), 0);
  return Math.min(Math.max(initPeak, app + sidecars), MAX_CARDS);
}
