/**
 * @module The whole chain offline: node-profile on every Node, then scheduling-chain, the
 * node-devices-check decorator on its AdmissionCheck, and instance-type on every InstanceType —
 * the same functions the hooks run, fed the objects Metacontroller would relate.
 */
import {
  GPUSTACK_API_VERSION,
  SCHEDULING_CHAIN_NAME,
  sortObjects,
  type InstanceType,
  type Node,
  type SchedulingChain,
  type SyncRefusal,
} from '../../k8s/index.js';
import { MANAGED_LABEL } from '../../nodefeature/index.js';
import {
  ADMISSION_CHECK_KEY,
  NAMESPACE_KEY,
  NODE_KEY,
  RESOURCE_FLAVOR_KEY,
  SCHEDULING_CHAIN_KEY,
  type SyncContext,
} from '../common/index.js';
import { syncInstanceType, type ObservedObject } from '../instance-type/index.js';
import { syncNodeDevicesCheck, type NodeDevicesCheckSyncRequest } from '../node-devices-check/index.js';
import { syncNodeProfile } from '../node-profile/index.js';
import { syncSchedulingChain } from '../scheduling-chain/index.js';

export interface RenderInput {
  readonly nodes: readonly Node[];
  /** The SchedulingChain `default`; absent → default settings. */
  readonly chain?: SchedulingChain;
  /** Namespaces that exist in the cluster (LocalQueues go to the eligible ones). */
  readonly namespaces: readonly string[];
}

export interface RenderedNode {
  readonly name: string;
  /** What node-profile answers: a value sets the label, `null` removes it. */
  readonly labels: Record<string, string | null>;
}

/** Plain desired objects, sorted (apiVersion, kind, namespace, name). */
export interface RenderedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly [field: string]: unknown;
}

/** A node left out of a pool, as the SchedulingChain status reports it. */
export interface RenderedSkip {
  readonly name: string;
  readonly reason: string;
  readonly message: string;
}

export type RenderResult =
  | {
      readonly ok: true;
      readonly nodes: RenderedNode[];
      readonly objects: RenderedObject[];
      readonly skipped: RenderedSkip[];
    }
  | { readonly ok: false; readonly error: SyncRefusal };

const DEFAULT_CHAIN: SchedulingChain = {
  apiVersion: GPUSTACK_API_VERSION,
  kind: 'SchedulingChain',
  metadata: { name: SCHEDULING_CHAIN_NAME },
  spec: {},
};

function applyLabels(node: Node, labels: Record<string, string | null>): Node {
  const merged: Record<string, string> = { ...node.metadata.labels };
  for (const [key, value] of Object.entries(labels)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return { ...node, metadata: { ...node.metadata, labels: merged } };
}

function byName<T extends { metadata: { name: string; namespace?: string } }>(
  objects: readonly T[],
): Record<string, T> {
  return Object.fromEntries(
    objects.map((o) => [o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name, o]),
  );
}

/**
 * Runs the chain on a node dump. A refusal from any hook (e.g. invalid settings) stops the run.
 * @example renderChain({ nodes, namespaces: ['default'] }, { now }) // { ok: true, nodes: [...], objects: [...] }
 */
export function renderChain(input: RenderInput, context: SyncContext): RenderResult {
  const chain = input.chain ?? DEFAULT_CHAIN;
  const chainMap = { [SCHEDULING_CHAIN_KEY]: { [chain.metadata.name]: chain } };
  const rendered: RenderedNode[] = [];
  const profiled: Node[] = [];
  for (const node of sortObjects(input.nodes)) {
    const outcome = syncNodeProfile({ parent: node, children: {}, related: chainMap, finalizing: false });
    if (!outcome.ok) return outcome;
    const labels = outcome.response.labels ?? {};
    rendered.push({ name: node.metadata.name, labels });
    profiled.push(applyLabels(node, labels));
  }
  const managed = profiled.filter((n) => n.metadata.labels?.[MANAGED_LABEL] === 'true');
  const chainOutcome = syncSchedulingChain(
    { parent: chain, children: {}, related: { [NODE_KEY]: byName(managed) }, finalizing: false },
    context,
  );
  if (!chainOutcome.ok) return chainOutcome;
  const chainChildren = chainOutcome.response.children as unknown as ObservedObject[];
  const checks = chainChildren
    .filter((c) => c.kind === 'AdmissionCheck')
    .map((check) => {
      const parent = check as NodeDevicesCheckSyncRequest['parent'];
      const outcome = syncNodeDevicesCheck({ parent, children: {}, related: {}, finalizing: false }, context);
      return outcome.ok && outcome.response.status ? { ...check, status: outcome.response.status } : check;
    });
  const related = {
    ...chainMap,
    [RESOURCE_FLAVOR_KEY]: byName(chainChildren.filter((c) => c.kind === 'ResourceFlavor')),
    [NAMESPACE_KEY]: byName(
      input.namespaces.map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })),
    ),
    [ADMISSION_CHECK_KEY]: byName(checks as ObservedObject[]),
  };
  const objects: RenderedObject[] = [...(chainOutcome.response.children as RenderedObject[])];
  for (const type of chainChildren.filter((c) => c.kind === 'InstanceType') as unknown as InstanceType[]) {
    const outcome = syncInstanceType({ parent: type, children: {}, related, finalizing: false }, context);
    if (!outcome.ok) return outcome;
    objects.push(...(outcome.response.children as RenderedObject[]));
  }
  const skipped = (chainOutcome.response.status as { skippedNodes?: RenderedSkip[] } | undefined)?.skippedNodes ?? [];
  return { ok: true, nodes: rendered, objects: sortObjects(objects), skipped };
}
