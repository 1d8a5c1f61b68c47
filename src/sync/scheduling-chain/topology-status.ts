/**
 * @module The SchedulingChain's `TopologyReady` condition (docs/architecture.md#topology-status):
 * whether the Kueue Topologies its flavors name exist as the chain wants them, read from what
 * Metacontroller observed (the flavors and Topologies in the request's children), never assumed
 * from the desired list. The modelled system reports the same condition on its ClusterQueues.
 */
import type { ConditionInput } from '../../k8s/index.js';
import { topologyName } from '../../nodefeature/index.js';
import { fieldAt, isTerminating, listedNames, topologyNameOf } from '../common/index.js';
import type { FlavorPlan } from './pools.js';
import type { ChildObject } from './schema.js';

export interface TopologyStatusInput {
  readonly mode: 'Disabled' | 'Auto';
  /** The flavors the chain wants now, with the profile and levels of their Nodes. */
  readonly desiredFlavors: readonly FlavorPlan[];
  readonly observedFlavors: readonly ChildObject[];
  readonly observedTopologies: readonly ChildObject[];
}

/** An observed Topology's levels; undefined when they cannot be read. */
function levelsOf(topology: ChildObject): string[] | undefined {
  const levels = fieldAt(topology, 'spec', 'levels');
  if (!Array.isArray(levels)) return undefined;
  const labels = levels.map((level) => fieldAt(level, 'nodeLabel'));
  return labels.every((label): label is string => typeof label === 'string') ? labels : undefined;
}

/**
 * `TopologyReady`, by the first that holds:
 * - `TopologyDrift` (False): an observed Topology of a desired flavor has other levels than its
 *   Nodes' (a Topology's levels are immutable; its name hashes its levels, so only a hand edit
 *   gets here) — Kueue would place by the wrong levels;
 * - `TopologyMissing` (False): an observed flavor names a Topology that is not observed and the
 *   chain cannot re-create (not desired) — Kueue's TAS cannot place work on that flavor;
 * - `TopologyPending` (Unknown): a desired Topology or topology-qualified flavor is not observed
 *   yet, or, with topology on, a flavor's Nodes carry no profile yet (node-profile labels them
 *   after the settings change);
 * - `Migrating` (Unknown): observed flavors of an old profile are still there (deleted, held by
 *   Kueue's `resource-in-use` finalizer while a queue lists them), their Topologies kept with them;
 * - `Disabled` (False): topology is off and no observed flavor names a Topology;
 * - `Ready` (True): every flavor names an observed Topology with its Nodes' levels.
 */
export function topologyReadyCondition(input: TopologyStatusInput): ConditionInput {
  const condition = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
    type: 'TopologyReady',
    status,
    reason,
    message,
  });
  const observedTopologies = new Map(
    input.observedTopologies.filter((t) => !isTerminating(t)).map((t) => [t.metadata.name, t]),
  );
  const observedFlavors = new Map(input.observedFlavors.map((f) => [f.metadata.name, f]));
  const wanted = new Map<string, readonly string[]>();
  for (const flavor of input.desiredFlavors)
    if (flavor.topology !== undefined) wanted.set(topologyName(flavor.topology.profile), flavor.topology.levels);

  const drifted = [...wanted].flatMap(([name, levels]) => {
    const observed = observedTopologies.get(name);
    const actual = observed === undefined ? undefined : levelsOf(observed);
    return observed !== undefined && actual?.join(',') !== levels.join(',')
      ? [`${name} has levels [${actual?.join(', ') ?? 'unreadable'}], its Nodes [${levels.join(', ')}]`]
      : [];
  });
  if (drifted.length > 0)
    return condition(
      'False',
      'TopologyDrift',
      `${listedNames(drifted)}; a Topology's levels cannot change: delete it and the chain re-creates it`,
    );

  const missing = [...observedFlavors.values()].flatMap((flavor) => {
    const name = topologyNameOf(flavor);
    return name !== undefined && !observedTopologies.has(name) && !wanted.has(name)
      ? [`${flavor.metadata.name} (${name})`]
      : [];
  });
  if (missing.length > 0)
    return condition(
      'False',
      'TopologyMissing',
      `flavors name a Topology that does not exist: ${listedNames(missing)}; Kueue cannot place work on them`,
    );

  const pending = [
    ...[...wanted.keys()].filter((name) => !observedTopologies.has(name)).map((name) => `Topology ${name}`),
    ...input.desiredFlavors
      .filter((f) => f.topology !== undefined && observedFlavors.get(f.name) === undefined)
      .map((f) => `ResourceFlavor ${f.name}`),
  ];
  if (pending.length > 0) return condition('Unknown', 'TopologyPending', `not observed yet: ${listedNames(pending)}`);
  const unprofiled = input.desiredFlavors.filter((f) => f.topology === undefined).map((f) => f.name);
  if (input.mode === 'Auto' && unprofiled.length > 0)
    return condition(
      'Unknown',
      'TopologyPending',
      `the Nodes of ${listedNames(unprofiled)} have no topology profile yet; node-profile labels them`,
    );

  const desiredNames = new Set(input.desiredFlavors.map((f) => f.name));
  const old = [...observedFlavors.values()].filter(
    (f) => topologyNameOf(f) !== undefined && !desiredNames.has(f.metadata.name),
  );
  if (old.length > 0)
    return condition(
      'Unknown',
      'Migrating',
      `flavors no longer wanted (their Nodes' profile changed, or they left) still name a Topology, held while a ClusterQueue lists them: ${listedNames(
        old.map((f) => `${f.metadata.name} (${topologyNameOf(f) ?? ''})`),
      )}; their Topologies stay until they are gone`,
    );

  if (input.mode === 'Disabled')
    return condition('False', 'Disabled', 'spec.topology.mode is Disabled: no flavor names a Topology');
  return condition(
    'True',
    'Ready',
    wanted.size === 0
      ? 'no flavor yet: no Topology needed'
      : `${input.desiredFlavors.length} flavors name ${wanted.size} observed ${wanted.size === 1 ? 'Topology' : 'Topologies'}: ${listedNames([...wanted.keys()])}`,
  );
}
