/**
 * @module Reading a Workload: whether our check has a decision to make, and what each PodSet asks
 * of which flavor (manufacturer from the `credits.gpustack.ai/<mfr>` resource Kueue assigned).
 */
import type { ManufacturerName, ReceivedToleration } from '../k8s/index.js';
import { CREDITS_PREFIX, isManufacturer } from '../nodefeature/index.js';
import { podCards } from './demand.js';
import type { PodSet, PodSetAssignment, Workload } from './schema.js';

function hasCondition(workload: Workload, type: string): boolean {
  return workload.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;
}

/**
 * True when our check owes this Workload a verdict: quota reserved, the admission recorded, still
 * active, not evicted or finished, not yet admitted (its own pods would count against it), and
 * our check listed. Everything else is left alone.
 */
export function awaitsVerdict(workload: Workload, checkName: string): boolean {
  if (!hasCondition(workload, 'QuotaReserved') || !workload.status?.admission) return false;
  if (workload.spec.active === false) return false;
  if (hasCondition(workload, 'Evicted') || hasCondition(workload, 'Finished') || hasCondition(workload, 'Admitted'))
    return false;
  return workload.status.admissionChecks?.some((check) => check.name === checkName) ?? false;
}

/** What one PodSet needs placed: `pods` pods of `cards` whole cards each, from `flavor`. */
export interface PodSetDemand {
  readonly podSet: string;
  readonly mfr: ManufacturerName;
  readonly resource: string;
  readonly flavor: string;
  readonly pods: number;
  readonly cards: number;
  /** The pod template's own tolerations; the flavor's are added where the pool is resolved. */
  readonly tolerations: readonly ReceivedToleration[];
}

export type DemandResolution =
  { readonly ok: true; readonly demand: PodSetDemand | undefined } | { readonly ok: false; readonly message: string };

/** The credits resources of ours in an assignment; unknown `credits.gpustack.ai/<x>` are not our cards. */
function creditsOf(assignment: PodSetAssignment): [ManufacturerName, string][] {
  const found: [ManufacturerName, string][] = [];
  for (const [resource, flavor] of Object.entries(assignment.flavors ?? {})) {
    if (!resource.startsWith(CREDITS_PREFIX)) continue;
    const mfr = resource.slice(CREDITS_PREFIX.length);
    if (isManufacturer(mfr)) found.push([mfr, flavor]);
  }
  return found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A PodSet's card demand, `undefined` when it asks for no whole cards. Kueue's resource
 * transformations fold every device resource into credits, so the credits resource it assigned
 * tells the manufacturer and the flavor; more than one leaves no single card pool to check.
 */
export function podSetDemand(
  podSet: PodSet,
  assignment: PodSetAssignment | undefined,
  deviceResourceOf: (mfr: ManufacturerName) => string,
): DemandResolution {
  const label = `podset "${podSet.name}"`;
  if (assignment === undefined) {
    return {
      ok: false,
      message: `${label} has no flavor assignment in status.admission; will retry once Kueue records one`,
    };
  }
  const credits = creditsOf(assignment);
  const [first] = credits;
  if (first === undefined) return { ok: true, demand: undefined };
  if (credits.length > 1) {
    const names = credits.map(([mfr]) => `${CREDITS_PREFIX}${mfr}`).join(', ');
    return {
      ok: false,
      message:
        `${label} is assigned flavors for ${credits.length} credits resources ` +
        `(${names}), so no single card pool can be resolved; will retry once it is one`,
    };
  }
  const [mfr, flavor] = first;
  const resource = deviceResourceOf(mfr);
  const cards = podCards(podSet.template.spec, resource);
  const pods = assignment.count ?? podSet.count;
  if (cards === 0 || pods === 0) return { ok: true, demand: undefined };
  const tolerations = podSet.template.spec.tolerations ?? [];
  return { ok: true, demand: { podSet: podSet.name, mfr, resource, flavor, pods, cards, tolerations } };
}
