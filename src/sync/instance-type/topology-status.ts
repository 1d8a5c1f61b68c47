/**
 * @module An InstanceType's `TopologyReady` condition (docs/architecture.md#topology-status): the
 * modelled system reports it on each ClusterQueue; Kueue owns a ClusterQueue's status, so ours is
 * on the InstanceType, one per queue. Read from the related flavors and Topologies and the
 * observed ClusterQueue only.
 */
import type { ConditionInput } from '../../k8s/index.js';
import { fieldAt, isTerminating, listedNames, topologyNameOf } from '../common/index.js';
import type { ReceivedObject } from './schema.js';

export interface PoolTopologyInput {
  readonly mode: 'Disabled' | 'Auto';
  /** The flavors the queue is given now (by name). */
  readonly selected: readonly string[];
  /** Every related flavor of the pool, terminating ones included. */
  readonly poolFlavors: readonly ReceivedObject[];
  /** The related Topologies; undefined while Metacontroller has not sent them (customize not applied yet). */
  readonly topologies: readonly ReceivedObject[] | undefined;
  readonly observedQueue: ReceivedObject | undefined;
}

/** The flavor names the observed ClusterQueue lists (Kueue keeps a listed flavor from being deleted). */
function queuedFlavors(queue: ReceivedObject | undefined): string[] {
  const groups = fieldAt(queue, 'spec', 'resourceGroups');
  if (!Array.isArray(groups)) return [];
  return groups.flatMap((group) => {
    const flavors = fieldAt(group, 'flavors');
    return Array.isArray(flavors)
      ? flavors.flatMap((f) => {
          const name = fieldAt(f, 'name');
          return typeof name === 'string' ? [name] : [];
        })
      : [];
  });
}

/**
 * `TopologyReady` of one queue, by the first that holds:
 * - `TopologyMissing` (False): a flavor of the queue names a Topology that is not there;
 * - `TopologyPending` (Unknown): the Topologies are not in the request yet, or, with topology
 *   on, a flavor of the queue names none (its Nodes have no profile yet);
 * - `Migrating` (Unknown): the observed queue still lists a deleted flavor that names a Topology
 *   (a profile change, or topology turned off: the queue moves to the new flavors in this update),
 *   or topology is off and a flavor of the queue still names a Topology;
 * - `Disabled` (False): topology is off;
 * - `Ready` (True): every flavor of the queue names an observed Topology.
 */
export function poolTopologyCondition(input: PoolTopologyInput): ConditionInput {
  const condition = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
    type: 'TopologyReady',
    status,
    reason,
    message,
  });
  const byName = new Map(input.poolFlavors.map((f) => [f.metadata.name, f]));
  const named = input.selected.map((name) => ({ name, topology: topologyNameOf(byName.get(name)) }));
  const withTopology = named.filter((f) => f.topology !== undefined);
  if (input.topologies !== undefined) {
    const present = new Set(input.topologies.filter((t) => !isTerminating(t)).map((t) => t.metadata.name));
    const missing = withTopology.filter((f) => !present.has(f.topology ?? ''));
    if (missing.length > 0)
      return condition(
        'False',
        'TopologyMissing',
        `flavors of the queue name a Topology that does not exist: ${listedNames(missing.map((f) => `${f.name} (${f.topology ?? ''})`))}; Kueue cannot place work on them`,
      );
  } else if (withTopology.length > 0 || input.mode === 'Auto') {
    return condition('Unknown', 'TopologyPending', 'the Topologies are not in the request yet');
  }
  const without = named.filter((f) => f.topology === undefined).map((f) => f.name);
  if (input.mode === 'Auto' && without.length > 0)
    return condition(
      'Unknown',
      'TopologyPending',
      `flavors of the queue name no Topology yet (their Nodes have no topology profile yet): ${listedNames(without)}`,
    );
  const selected = new Set(input.selected);
  const leaving = queuedFlavors(input.observedQueue).filter((name) => {
    const flavor = byName.get(name);
    return !selected.has(name) && flavor !== undefined && isTerminating(flavor) && topologyNameOf(flavor) !== undefined;
  });
  if (leaving.length > 0)
    return condition(
      'Unknown',
      'Migrating',
      `the ClusterQueue still lists deleted flavors that name a Topology: ${listedNames(leaving)}; this update moves it to ${input.selected.length} flavors`,
    );
  if (input.mode === 'Disabled') {
    if (withTopology.length > 0)
      return condition(
        'Unknown',
        'Migrating',
        `topology is off but flavors of the queue still name a Topology: ${listedNames(withTopology.map((f) => f.name))}; the chain replaces them`,
      );
    return condition('False', 'Disabled', 'spec.topology.mode of the chain is Disabled: no flavor names a Topology');
  }
  return condition(
    'True',
    'Ready',
    named.length === 0
      ? 'no flavor in the queue: no Topology needed'
      : `${named.length} flavors name observed Topologies: ${listedNames([...new Set(withTopology.map((f) => f.topology ?? ''))])}`,
  );
}
