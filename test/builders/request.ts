/**
 * @module Hook requests as Metacontroller sends them (hook v2): object maps keyed
 * `Kind.group/version` → `namespace/name` (or `name`), an entry for every declared child type even
 * when empty, `finalizing` set. Each returns the raw body; tests parse it with the request schema.
 */
import type { Node } from '../../src/k8s/index.js';
import { buildNodeProfile } from '../../src/sync/index.js';
import type { Observed } from './kueue.js';

type ObjectMap = Record<string, Record<string, unknown>>;

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
export const KEYS = {
  node: 'Node.v1',
  namespace: 'Namespace.v1',
  chain: `SchedulingChain.${GPUSTACK}`,
  chainSettings: `ChainSettings.${GPUSTACK}`,
  nodeProfile: `NodeProfile.${GPUSTACK}`,
  instanceType: `InstanceType.${GPUSTACK}`,
  flavor: `ResourceFlavor.${KUEUE}`,
  clusterQueue: `ClusterQueue.${KUEUE}`,
  localQueue: `LocalQueue.${KUEUE}`,
  admissionCheck: `AdmissionCheck.${KUEUE}`,
  topology: `Topology.${KUEUE}`,
} as const;

type WithIdentity = {
  readonly kind?: string | undefined;
  readonly apiVersion?: string | undefined;
  readonly metadata: { readonly name: string; readonly namespace?: string | undefined };
};

/** One object map from a list: outer key from kind/apiVersion, inner key `ns/name` or `name`. */
export function objectMap(objects: readonly WithIdentity[], declared: readonly string[] = []): ObjectMap {
  const map: ObjectMap = Object.fromEntries(declared.map((key) => [key, {}]));
  for (const object of objects) {
    const outer = `${object.kind}.${object.apiVersion}`;
    const inner = object.metadata.namespace
      ? `${object.metadata.namespace}/${object.metadata.name}`
      : object.metadata.name;
    (map[outer] ??= {})[inner] = object;
  }
  return map;
}

function controller(kind: 'CompositeController' | 'DecoratorController', name: string): Record<string, unknown> {
  return { apiVersion: 'metacontroller.k8s.io/v1alpha1', kind, metadata: { name } };
}

export interface ChainRequestInput {
  readonly parent: Observed;
  /** Related managed Nodes; `undefined` leaves `related` empty (customize not applied yet). */
  readonly nodes: readonly Node[] | undefined;
  /**
   * How the Nodes reach the chain: as the NodeProfiles node-profile writes of them (default, a
   * cluster where node-profile has run), or whole (`nodes`: no profile yet, e.g. after an upgrade).
   */
  readonly relatedAs?: 'profiles' | 'nodes';
  readonly children?: readonly WithIdentity[];
}

/** The related object map of the chain for some managed Nodes. */
export function chainRelated(nodes: readonly Node[], relatedAs: 'profiles' | 'nodes' = 'profiles'): ObjectMap {
  if (relatedAs === 'nodes') return objectMap(nodes, [KEYS.nodeProfile, KEYS.node]);
  const profiles = nodes.map((n) => buildNodeProfile(n));
  return objectMap(profiles, [KEYS.nodeProfile, KEYS.node]);
}

/** A `gpustack-scheduling-chain` sync request. */
export function chainRequest(input: ChainRequestInput): unknown {
  return {
    controller: controller('CompositeController', 'gpustack-scheduling-chain'),
    parent: input.parent,
    children: objectMap(input.children ?? [], [KEYS.admissionCheck, KEYS.flavor, KEYS.instanceType]),
    related: input.nodes === undefined ? {} : chainRelated(input.nodes, input.relatedAs),
    finalizing: false,
  };
}

type ChainInput = (Observed & { readonly spec?: unknown }) | null | undefined;

/**
 * The related ChainSettings the chain writes from its spec: that of `chain` (absent: a chain of
 * defaults); `null` → none written yet (no chain, or before its first sync).
 */
function chainSettingsOf(chain: ChainInput): (WithIdentity & { readonly spec: unknown })[] {
  return chain === null
    ? []
    : [{ apiVersion: GPUSTACK, kind: 'ChainSettings', metadata: { name: 'default' }, spec: chain?.spec ?? {} }];
}

export interface InstanceTypeRequestInput {
  readonly parent: Observed;
  /** The chain whose ChainSettings is related (see `chainSettingsOf`). */
  readonly chain?: ChainInput;
  readonly flavors?: readonly Observed[];
  readonly namespaces?: readonly Observed[];
  readonly checks?: readonly Observed[];
  /** The chain's Kueue Topologies (related for `TopologyReady`). */
  readonly topologies?: readonly Observed[];
  readonly children?: readonly Observed[];
  readonly finalizing?: boolean;
  /** Related keys Metacontroller has not filled in yet. */
  readonly omitRelated?: readonly string[];
}

/** A `gpustack-instance-type` sync (or finalize) request. */
export function instanceTypeRequest(input: InstanceTypeRequestInput): unknown {
  const related = objectMap(
    [
      ...chainSettingsOf(input.chain),
      ...(input.flavors ?? []),
      ...(input.namespaces ?? []),
      ...(input.checks ?? []),
      ...(input.topologies ?? []),
    ],
    [KEYS.chainSettings, KEYS.flavor, KEYS.namespace, KEYS.admissionCheck, KEYS.topology],
  );
  for (const key of input.omitRelated ?? []) delete related[key];
  return {
    controller: controller('CompositeController', 'gpustack-instance-type'),
    parent: input.parent,
    children: objectMap(input.children ?? [], [KEYS.clusterQueue, KEYS.localQueue]),
    related,
    finalizing: input.finalizing ?? false,
  };
}

/** A `gpustack-node-profile` decorator sync request for one Node, relating the ChainSettings of `chain` (see `chainSettingsOf`). */
export function nodeProfileRequest(
  node: Node,
  chain?: ChainInput,
  /** The Node's NodeProfile as Metacontroller observed it (written by an earlier sync). */
  profile?: WithIdentity,
): unknown {
  const settings = chainSettingsOf(chain);
  return {
    controller: controller('DecoratorController', 'gpustack-node-profile'),
    parent: node,
    children: objectMap(profile ? [profile] : [], [KEYS.nodeProfile]),
    related: objectMap(settings, [KEYS.chainSettings]),
    finalizing: false,
  };
}

/** A `gpustack-node-devices-check` decorator sync request for one AdmissionCheck. */
export function nodeDevicesCheckRequest(check: Observed): unknown {
  return {
    controller: controller('DecoratorController', 'gpustack-node-devices-check'),
    parent: check,
    children: {},
    related: {},
    finalizing: false,
  };
}
