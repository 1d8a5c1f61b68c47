/**
 * @module The domains Kueue's topology-aware scheduling assigned a PodSet
 * (`podSetAssignments[].topologyAssignment`, Kueue v1beta2: levels and compressed slices) and the
 * nodes of a pool inside each (docs/architecture.md#topology-check). Kueue's TAS counts Node
 * allocatable; the check then verifies the cards inside each assigned domain.
 */
import { z } from 'zod';
import type { Node } from '../k8s/index.js';
import type { Pool, PoolNode } from './pool.js';

const LevelValuesSchema = z.looseObject({
  universal: z.string().optional(),
  individual: z
    .looseObject({
      prefix: z.string().optional(),
      suffix: z.string().optional(),
      roots: z.array(z.string()).default([]),
    })
    .optional(),
});

export const TopologyAssignmentSchema = z.looseObject({
  levels: z.array(z.string()).default([]),
  slices: z
    .array(
      z.looseObject({
        domainCount: z.number().int().positive(),
        valuesPerLevel: z.array(LevelValuesSchema).default([]),
        podCounts: z.looseObject({
          universal: z.number().int().positive().optional(),
          individual: z.array(z.number().int().positive()).optional(),
        }),
      }),
    )
    .default([]),
});
export type TopologyAssignment = z.infer<typeof TopologyAssignmentSchema>;

/** One assigned domain: a value per level (coarse to fine) and the pods Kueue put there. */
export interface TopologyDomain {
  readonly values: readonly string[];
  readonly pods: number;
}

export type DomainsResolution =
  | { readonly ok: true; readonly levels: readonly string[]; readonly domains: readonly TopologyDomain[] }
  | { readonly ok: false; readonly message: string };

/**
 * The assignment's domains, slices expanded: a level's value is its `universal` one for every
 * domain of the slice, or `prefix + roots[i] + suffix`; a domain's pods are `universal` or
 * `individual[i]`. A slice that does not add up (Kueue's CRD forbids it) is an error, not a guess.
 */
export function expandTopologyAssignment(assignment: TopologyAssignment): DomainsResolution {
  const { levels } = assignment;
  const domains: TopologyDomain[] = [];
  for (const [s, slice] of assignment.slices.entries()) {
    const bad = (what: string): DomainsResolution => ({
      ok: false,
      message: `topologyAssignment.slices[${s}]: ${what}`,
    });
    if (slice.valuesPerLevel.length !== levels.length)
      return bad(`${slice.valuesPerLevel.length} valuesPerLevel for ${levels.length} levels`);
    const counts = slice.podCounts.individual;
    if (counts !== undefined && counts.length !== slice.domainCount)
      return bad(`podCounts.individual has ${counts.length} entries for domainCount ${slice.domainCount}`);
    if (counts === undefined && slice.podCounts.universal === undefined) return bad('podCounts has no count');
    for (let d = 0; d < slice.domainCount; d++) {
      const values: string[] = [];
      for (const [l, level] of slice.valuesPerLevel.entries()) {
        if (level.universal !== undefined) values.push(level.universal);
        else if (level.individual !== undefined && level.individual.roots.length === slice.domainCount)
          values.push(`${level.individual.prefix ?? ''}${level.individual.roots[d]}${level.individual.suffix ?? ''}`);
        else return bad(`valuesPerLevel[${l}] has no value for domain ${d}`);
      }
      domains.push({ values, pods: counts?.[d] ?? slice.podCounts.universal ?? 0 });
    }
  }
  return { ok: true, levels, domains };
}

/** `key=value` for each level of a domain: how a message names it. */
export function describeDomain(levels: readonly string[], domain: TopologyDomain): string {
  return levels.map((level, i) => `${level}=${domain.values[i] ?? ''}`).join(',');
}

/**
 * The pool split by domain: its nodes grouped by their values at every level (one pass over the
 * pool, so a PodSet spread over many domains costs the pool's size once, not once per domain).
 * Cordoned or tainted nodes are already out of the pool. `inDomain` gives a domain's sub-pool.
 */
export function splitPoolByDomain(
  pool: Pool,
  levels: readonly string[],
  nodeOf: (name: string) => Node | undefined,
): (domain: TopologyDomain) => Pool {
  const groups = new Map<string, PoolNode[]>();
  for (const member of pool.nodes) {
    const labels = nodeOf(member.name)?.metadata.labels ?? {};
    const values = levels.map((level) => labels[level]);
    if (values.some((value) => value === undefined)) continue;
    const key = values.join('\u0000');
    const group = groups.get(key);
    if (group) group.push(member);
    else groups.set(key, [member]);
  }
  return (domain) => ({ ...pool, nodes: groups.get(domain.values.join('\u0000')) ?? [] });
}
