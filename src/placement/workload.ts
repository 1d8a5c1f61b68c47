/**
 * @module Reading a Workload: whether our check has a decision to make, and what each PodSet asks
 * of which flavor (manufacturer from the `credits.gpustack.ai/<mfr>` resource Kueue assigned).
 */
import { podDeviceAsks, type DeviceAsk, type ReceivedResourceClaimTemplate } from '../dra/index.js';
import type { ManufacturerName, ReceivedToleration } from '../k8s/index.js';
import { CREDITS_PREFIX } from '../nodefeature/index.js';
import { isManufacturer } from '../contracts/index.js';
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

/**
 * What one PodSet asks of our cards through claims: `pods` pods, each with every ask in `asks`,
 * on the first of `flavors` whose nodes hold cards of `mfr` (the credits flavor when Kueue
 * assigned one; otherwise the PodSet's other assigned flavors, in name order).
 */
export interface ClaimDemand {
  readonly podSet: string;
  readonly mfr: ManufacturerName;
  readonly flavors: readonly string[];
  readonly pods: number;
  readonly asks: readonly DeviceAsk[];
  readonly tolerations: readonly ReceivedToleration[];
}

export type DemandResolution =
  | { readonly ok: true; readonly demand: PodSetDemand | undefined; readonly claims?: ClaimDemand }
  | { readonly ok: false; readonly message: string };

/** Looks up a ResourceClaimTemplate by namespace and name in the checker's store. */
export type TemplateLookup = (namespace: string, name: string) => ReceivedResourceClaimTemplate | undefined;

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

/** Flavors to resolve a claim demand on: the credits flavor of `mfr` first, then every other assigned one. */
function claimFlavors(
  assignment: PodSetAssignment,
  credits: readonly [ManufacturerName, string][],
  mfr: string,
): string[] {
  const first = credits.find(([m]) => m === mfr)?.[1];
  const others = [...new Set(Object.values(assignment.flavors ?? {}))].filter((f) => f !== first).sort();
  return first === undefined ? others : [first, ...others];
}

/** The claim demand of a PodSet, `undefined` when its pods ask nothing of our cards through claims. */
function claimDemand(
  podSet: PodSet,
  assignment: PodSetAssignment,
  credits: readonly [ManufacturerName, string][],
  pods: number,
  templates: { readonly namespace: string; readonly lookup: TemplateLookup } | undefined,
): { ok: true; claims: ClaimDemand | undefined } | { ok: false; message: string } {
  const refs = podSet.template.spec.resourceClaims ?? [];
  if (pods === 0 || !refs.some((r) => (r.resourceClaimTemplateName ?? '') !== ''))
    return { ok: true, claims: undefined };
  const label = `podset "${podSet.name}"`;
  if (templates === undefined) {
    return {
      ok: false,
      message:
        `${label} uses resource claims, but the checker has not listed ResourceSlices, ResourceClaims ` +
        `and ResourceClaimTemplates (yet); will retry once it has`,
    };
  }
  const resolution = podDeviceAsks(refs, (name) => templates.lookup(templates.namespace, name));
  if (!resolution.ok) return { ok: false, message: `${label}: ${resolution.message}; will retry once it is observed` };
  const [first] = resolution.asks;
  if (first === undefined) return { ok: true, claims: undefined };
  const flavors = claimFlavors(assignment, credits, first.mfr);
  const tolerations = podSet.template.spec.tolerations ?? [];
  return {
    ok: true,
    claims: { podSet: podSet.name, mfr: first.mfr, flavors, pods, asks: resolution.asks, tolerations },
  };
}

/**
 * A PodSet's card demand: whole cards by device resource (`demand`, `undefined` when it asks for
 * none) and, where its pods use claims on our DeviceClasses, the asks placed on the ledger
 * (`claims`). Kueue's resource transformations fold every device resource into credits, so the
 * credits resource it assigned tells the manufacturer and the flavor; more than one leaves no
 * single card pool to check. Claims name their manufacturer by their DeviceClass.
 */
export function podSetDemand(
  podSet: PodSet,
  assignment: PodSetAssignment | undefined,
  deviceResourceOf: (mfr: ManufacturerName) => string,
  templates?: { readonly namespace: string; readonly lookup: TemplateLookup },
): DemandResolution {
  const label = `podset "${podSet.name}"`;
  if (assignment === undefined) {
    return {
      ok: false,
      message: `${label} has no flavor assignment in status.admission; will retry once Kueue records one`,
    };
  }
  const credits = creditsOf(assignment);
  const pods = assignment.count ?? podSet.count;
  const claimResolution = claimDemand(podSet, assignment, credits, pods, templates);
  if (!claimResolution.ok) return claimResolution;
  const claims = claimResolution.claims === undefined ? {} : { claims: claimResolution.claims };
  const [first] = credits;
  if (first === undefined) return { ok: true, demand: undefined, ...claims };
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
  if (cards === 0 || pods === 0) return { ok: true, demand: undefined, ...claims };
  const tolerations = podSet.template.spec.tolerations ?? [];
  return { ok: true, demand: { podSet: podSet.name, mfr, resource, flavor, pods, cards, tolerations }, ...claims };
}
