/**
 * @module A shard's NodeProfiles → its summary: one group per distinct profile (what the chain reads
 * of a Node, less its name) with the count of its Nodes. The chain plans from the groups exactly as
 * from the profiles (test/sync/node-shard/summary.test.ts, test/render/shards.test.ts).
 */
import {
  MANUFACTURER_NAMES,
  MAX_GROUP_NAMES,
  type NodeGroup,
  type NodeProfile,
  type NodeShardStatus,
} from '../../k8s/index.js';
import { extractNodeFacts, readTopology, type NodeLabelsInput } from '../../nodefeature/index.js';

const EVERY_MANUFACTURER = new Set(MANUFACTURER_NAMES);

/** One canonical text per distinct view: its keys sorted, so map order does not split a group. */
function groupKey(view: Omit<NodeLabelsInput, 'name'>): string {
  const sorted = (record: Readonly<Record<string, string>> | undefined): [string, string][] | undefined =>
    record === undefined ? undefined : Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    sorted(view.labels),
    sorted(view.annotations),
    view.cpuCapacity === undefined ? null : String(view.cpuCapacity),
  ]);
}

/**
 * True when some settings could make the chain name a Node of this view: a problem (out of a pool:
 * an unreadable topology profile too) or a warning (unreadable label). With every manufacturer enabled the chain sees every problem and
 * warning it could see with fewer, and the general key's problem does not depend on them.
 */
function mayBeNamed(view: NodeLabelsInput): boolean {
  const facts = extractNodeFacts(view, EVERY_MANUFACTURER);
  return (
    facts.problems.length > 0 ||
    facts.warnings.length > 0 ||
    facts.generalProblem !== undefined ||
    readTopology(view).kind === 'unreadable'
  );
}

interface Building {
  readonly view: NodeLabelsInput;
  readonly names: string[];
}

/**
 * The summary of a shard's NodeProfiles: groups ordered by their first Node's name. Its size grows
 * with the number of distinct Node kinds, not with the Nodes (the names a group may carry are bounded).
 * @example summarizeShard([profileOf('a'), profileOf('b')]) // { profiles: 2, groups: [{ nodes: 2, first: 'a', labels: {…} }] }
 */
export function summarizeShard(profiles: readonly NodeProfile[]): NodeShardStatus {
  const groups = new Map<string, Building>();
  for (const { metadata, spec } of profiles) {
    const view: NodeLabelsInput = {
      name: metadata.name,
      labels: spec.labels,
      ...(spec.annotations !== undefined ? { annotations: spec.annotations } : {}),
      ...(spec.cpuCapacity !== undefined ? { cpuCapacity: String(spec.cpuCapacity) } : {}),
    };
    const key = groupKey(view);
    const group = groups.get(key);
    if (group) group.names.push(metadata.name);
    else groups.set(key, { view, names: [metadata.name] });
  }
  const out: NodeGroup[] = [];
  for (const { view, names } of groups.values()) {
    names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const first = names[0] as string;
    out.push({
      nodes: names.length,
      first,
      labels: { ...view.labels },
      ...(view.annotations !== undefined ? { annotations: { ...view.annotations } } : {}),
      ...(view.cpuCapacity !== undefined ? { cpuCapacity: String(view.cpuCapacity) } : {}),
      ...(mayBeNamed({ ...view, name: first }) ? { names: names.slice(0, MAX_GROUP_NAMES) } : {}),
    });
  }
  out.sort((a, b) => (a.first < b.first ? -1 : 1));
  return { profiles: profiles.length, groups: out };
}
