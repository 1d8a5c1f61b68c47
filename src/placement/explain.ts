/**
 * @module "Why is my workload not admitted": one Workload's state as Kueue and our check left it,
 * per PodSet — flavors, the topology domains TAS assigned — and the check's own reason, which
 * names the PodSet, the domain and the free cards per node (docs/operations.md#why). Pure: the
 * CLI reads the Workload and prints this.
 */
import { expandTopologyAssignment, describeDomain } from './topology.js';
import type { Workload } from './schema.js';

const MAX_DOMAINS_SHOWN = 8;

const pods = (n: number): string => `${n} pod${n === 1 ? '' : 's'}`;

function conditionLine(workload: Workload, type: string): string | undefined {
  const condition = workload.status?.conditions?.find((c) => c.type === type);
  if (condition === undefined) return undefined;
  const reason = condition.reason ? ` (${condition.reason})` : '';
  const message = condition.message ? `: ${condition.message}` : '';
  return `${type}=${condition.status}${reason}${message}`;
}

/**
 * Lines a person reads top down: the Workload and its queue, Kueue's conditions, each PodSet's
 * assignment, then every admission check with its state and message (ours first).
 * @example explainWorkload(workload, 'gpustack-node-devices') // ['workload team-a/train (queue …)', 'QuotaReserved=True …', …]
 */
export function explainWorkload(workload: Workload, checkName: string): string[] {
  const name = `${workload.metadata.namespace ?? ''}/${workload.metadata.name}`;
  const admission = workload.status?.admission;
  const lines = [`workload ${name}${admission ? ` (ClusterQueue ${admission.clusterQueue})` : ''}`];
  for (const type of ['QuotaReserved', 'Admitted', 'Evicted', 'Finished']) {
    const line = conditionLine(workload, type);
    if (line !== undefined) lines.push(`  ${line}`);
  }
  if (!admission)
    lines.push('  no quota reserved yet: Kueue has not found room in the queue (see its QuotaReserved message)');
  for (const podSet of workload.spec.podSets) {
    const assignment = admission?.podSetAssignments.find((a) => a.name === podSet.name);
    const flavors = Object.entries(assignment?.flavors ?? {})
      .map(([resource, flavor]) => `${resource}→${flavor}`)
      .join(', ');
    lines.push(`  podset "${podSet.name}": ${pods(podSet.count)}${flavors ? `; flavors ${flavors}` : ''}`);
    const topology = assignment?.topologyAssignment;
    if (topology) {
      const expanded = expandTopologyAssignment(topology);
      if (!expanded.ok) lines.push(`    topology: ${expanded.message}`);
      else {
        for (const domain of expanded.domains.slice(0, MAX_DOMAINS_SHOWN))
          lines.push(`    domain ${describeDomain(expanded.levels, domain)}: ${pods(domain.pods)}`);
        const more = expanded.domains.length - MAX_DOMAINS_SHOWN;
        if (more > 0) lines.push(`    … and ${more} more domains`);
      }
    }
  }
  const checks = [...(workload.status?.admissionChecks ?? [])].sort(
    (a, b) => Number(b.name === checkName) - Number(a.name === checkName) || (a.name < b.name ? -1 : 1),
  );
  for (const check of checks)
    lines.push(`  check ${check.name}: ${check.state}${check.message ? `: ${check.message}` : ''}`);
  return lines;
}
