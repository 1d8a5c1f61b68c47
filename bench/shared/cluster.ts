/**
 * @module A seeded generator of realistic clusters and the hook requests Metacontroller would send
 * for them. The Nodes are those of {@link buildNode}. Children and related objects carry what the
 * API server adds (uid, resourceVersion, ownerReferences, Metacontroller's last-applied
 * annotation, managedFields, Kueue status).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Node } from '../../src/k8s/index.js';
import { SCHEDULING_CHAIN_NAME } from '../../src/k8s/index.js';
import { PROFILED_LABEL } from '../../src/nodefeature/index.js';
import {
  SchedulingChainSyncRequestSchema,
  InstanceTypeSyncRequestSchema,
  buildNodeProfile,
  syncInstanceType,
  syncSchedulingChain,
} from '../../src/sync/index.js';
import { buildNode, fieldSet, imagePool, pickKind, type Json } from './cluster-nodes.js';
import { kindNamed } from './fleet.js';
import { createRandom, type Random } from './random.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const NOW = '2026-02-01T08:00:00Z';

type ObjectMap = Record<string, Record<string, Json>>;

/** The SchedulingChain `default` as the API server holds it. */
function schedulingChain(random: Random, deriveInstanceTypes: boolean): Json {
  return {
    apiVersion: GPUSTACK,
    kind: 'SchedulingChain',
    metadata: {
      name: SCHEDULING_CHAIN_NAME,
      uid: random.uuid(),
      generation: 1,
      resourceVersion: '4388',
      creationTimestamp: '2025-05-20T09:20:00Z',
    },
    spec: {
      nodeManagement: 'Automatic',
      generalKey: 'Generic',
      mixedOnNode: true,
      ...(deriveInstanceTypes ? { deriveInstanceTypes: true } : {}),
      admissionCheck: 'Enabled',
      systemNamespace: 'gpustack-system',
    },
  };
}

/** The kinds of the chain's children, as its sync request declares them. */
const CHAIN_CHILDREN = [`AdmissionCheck.${KUEUE}`, `InstanceType.${GPUSTACK}`, `ResourceFlavor.${KUEUE}`];

/** The chain's sync request before it has any child: what Metacontroller sends first. */
function firstChainRequest(chain: Json, nodes: readonly Node[], random: Random): Json {
  return {
    controller: exampleController('scheduling-chain'),
    parent: chain,
    children: objectMap([], CHAIN_CHILDREN),
    related: chainRelated(nodes, random),
    finalizing: false,
  };
}

function syncChain(request: Json) {
  return unwrap(syncSchedulingChain(SchedulingChainSyncRequestSchema.parse(request), { now: NOW }));
}

/**
 * `size` realistic Nodes of one kind (`h100-8x`, `a10g-4x` …), built as {@link generateCluster}
 * builds them, and the ResourceFlavors the chain emits for them (observed, with the API server's
 * metadata): what the admission checker lists.
 */
export function generateNodesOfKind(
  size: number,
  kindName: string,
  seed = 20260201,
): { nodes: Node[]; flavors: Json[] } {
  const kind = kindNamed(kindName);
  const random = createRandom(seed ^ size);
  const images = imagePool(createRandom(seed));
  const nodes = Array.from({ length: size }, (_, i) => buildNode(i, kind, images, random));
  const chain = schedulingChain(random, false);
  const output = syncChain(firstChainRequest(chain, nodes, random));
  const flavors = output.children
    .filter((c) => c['kind'] === 'ResourceFlavor')
    .map((c) => observed(c as Json, chain, random));
  return { nodes, flavors };
}

/** The hooks whose requests carry cluster data; the others (customize, node-devices-check) are constant and tiny. */
export const HOOKS = ['scheduling-chain/sync', 'instance-type/sync', 'node-profile/sync'] as const;
export type HookName = (typeof HOOKS)[number];

/** The hook requests of one synthetic cluster, as JSON text (what Metacontroller POSTs). */
export interface ClusterBodies {
  readonly nodes: number;
  /** Mean size of one Node's JSON in bytes. */
  readonly nodeBytes: number;
  readonly flavors: number;
  readonly namespaces: number;
  readonly bodies: Readonly<Record<HookName, string>>;
}

function exampleController(hook: string): Json {
  const example = JSON.parse(readFileSync(path.join(ROOT, 'examples', 'hooks', `${hook}.sync.json`), 'utf8')) as {
    controller: Json;
  };
  return example.controller;
}

function objectMap(objects: readonly Json[], declared: readonly string[]): ObjectMap {
  const map: ObjectMap = Object.fromEntries(declared.map((key) => [key, {}]));
  for (const object of objects) {
    const meta = object['metadata'] as { name: string; namespace?: string };
    const outer = `${String(object['kind'])}.${String(object['apiVersion'])}`;
    (map[outer] ??= {})[meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name] = object;
  }
  return map;
}

/**
 * What Metacontroller relates to the chain for labelled Nodes: the NodeProfile node-profile wrote
 * of each (as the API server serves it: uid, ownerReferences…), no whole Node.
 */
function chainRelated(nodes: readonly Node[], random: Random): Record<string, Record<string, Json>> {
  return { ...chainRelatedProfiles(nodes, random), 'Node.v1': {} };
}

/** The NodeProfiles of labelled Nodes as the API server serves them (uid, ownerReferences…). */
function chainRelatedProfiles(nodes: readonly Node[], random: Random): Record<string, Record<string, Json>> {
  const profiles = nodes.map((node) =>
    observed(buildNodeProfile(node) as unknown as Json, node as unknown as Json, random),
  );
  return objectMap(profiles, [`NodeProfile.${GPUSTACK}`]);
}

/** A desired object as the API server returns it once Metacontroller has applied it. */
function observed(desired: Json, parent: Json, random: Random, status?: Json): Json {
  const meta = desired['metadata'] as Json;
  const parentMeta = parent['metadata'] as Json;
  return {
    ...desired,
    metadata: {
      ...meta,
      uid: random.uuid(),
      resourceVersion: String(random.int(1_000_000, 99_999_999)),
      generation: 1,
      creationTimestamp: '2025-06-10T11:02:20Z',
      annotations: {
        ...(meta['annotations'] as Json | undefined),
        'metacontroller.k8s.io/last-applied-configuration': JSON.stringify(desired),
      },
      ownerReferences: [
        {
          apiVersion: parent['apiVersion'],
          kind: parent['kind'],
          name: parentMeta['name'],
          uid: parentMeta['uid'],
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      ...(desired['apiVersion'] === KUEUE && desired['kind'] !== 'LocalQueue'
        ? { finalizers: ['kueue.x-k8s.io/resource-in-use'] }
        : {}),
      managedFields: [
        {
          apiVersion: desired['apiVersion'],
          fieldsType: 'FieldsV1',
          manager: 'metacontroller',
          operation: 'Update',
          time: '2025-06-10T11:02:20Z',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': fieldSet(['metacontroller.k8s.io/last-applied-configuration']),
              'f:labels': fieldSet(Object.keys((meta['labels'] as Json | undefined) ?? {})),
              'f:ownerReferences': {},
            },
            'f:spec': {},
          },
        },
      ],
    },
    ...(status ? { status } : {}),
  };
}

function condition(type: string, status: string, reason: string, message: string): Json {
  return { type, status, reason, message, lastTransitionTime: '2025-06-10T11:02:25Z', observedGeneration: 1 };
}

function namespaces(count: number, random: Random): Json[] {
  const fixed = [
    'default',
    'kube-system',
    'kube-public',
    'kube-node-lease',
    'gpustack-system',
    'kueue-system',
    'monitoring',
  ];
  const names = [
    ...fixed,
    ...Array.from({ length: Math.max(0, count - fixed.length) }, (_, i) => `team-${String(i).padStart(4, '0')}`),
  ];
  return names.map((name) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name,
      uid: random.uuid(),
      resourceVersion: String(random.int(1000, 9_999_999)),
      creationTimestamp: '2025-04-02T03:30:00Z',
      labels: {
        'kubernetes.io/metadata.name': name,
        ...(name.startsWith('team-') ? { 'gpustack.ai/tenant': random.pick(['research', 'prod', 'batch']) } : {}),
      },
      managedFields: [
        {
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } },
          manager: 'kubectl-create',
          operation: 'Update',
          time: '2025-04-02T03:30:00Z',
        },
      ],
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  }));
}

/** Namespaces grow with the cluster: one team per 50 nodes, at least 20 namespaces. */
export function namespaceCount(nodes: number): number {
  return 20 + Math.floor(nodes / 50);
}

function unwrap<T>(outcome: { ok: true; response: T } | { ok: false; error: { message: string } }): T {
  if (!outcome.ok) throw new Error(`bench cluster: sync refused: ${outcome.error.message}`);
  return outcome.response;
}

/**
 * A cluster of `size` nodes from `seed`, and the bodies of the three data-bearing hooks in their
 * steady state: every child observed as the API server holds it after an earlier sync.
 */
export function generateCluster(size: number, seed = 20260201): ClusterBodies {
  const random = createRandom(seed ^ size);
  const images = imagePool(createRandom(seed));
  const nodes = Array.from({ length: size }, (_, i) => buildNode(i, pickKind(random), images, random));
  const sample = nodes.slice(0, 200);
  const nodeBytes = sample.reduce((sum, node) => sum + JSON.stringify(node).length, 0) / sample.length;
  const chain = schedulingChain(random, true);
  const firstChain = firstChainRequest(chain, nodes, random);
  const first = syncChain(firstChain);
  const chainWithStatus: Json = { ...chain, status: first.status };
  const chainChildren = first.children.map((child) => observed(child as Json, chain, random));
  const chainSettings = chainChildren.find((c) => c['kind'] === 'ChainSettings') as Json;
  const chainBody = JSON.stringify({
    ...firstChain,
    parent: chainWithStatus,
    children: objectMap(chainChildren, CHAIN_CHILDREN),
  });

  // The instance-type hook of the largest device pool (most flavors).
  const types = chainChildren.filter((c) => c['kind'] === 'InstanceType');
  const flavors = chainChildren.filter((c) => c['kind'] === 'ResourceFlavor');
  const pools = (first.status as { pools: { name: string; acceleratable: boolean; flavors: string[] }[] }).pools;
  const largest = [...pools].sort(
    (a, b) => Number(b.acceleratable) - Number(a.acceleratable) || b.flavors.length - a.flavors.length,
  )[0];
  const type = types.find((t) => (t['metadata'] as Json)['name'] === largest?.name) as Json;
  const admissionCheck = chainChildren.find((c) => c['kind'] === 'AdmissionCheck') as Json;
  const itRelated = objectMap(
    [
      chainSettings,
      ...flavors,
      ...namespaces(namespaceCount(size), random),
      {
        ...admissionCheck,
        status: { conditions: [condition('Active', 'True', 'Active', 'the admission check is active')] },
      },
    ],
    [`AdmissionCheck.${KUEUE}`, `ChainSettings.${GPUSTACK}`, 'Namespace.v1', `ResourceFlavor.${KUEUE}`],
  );
  const itKeys = [`ClusterQueue.${KUEUE}`, `LocalQueue.${KUEUE}`];
  const firstType = {
    controller: exampleController('instance-type'),
    parent: type,
    children: objectMap([], itKeys),
    related: itRelated,
    finalizing: false,
  };
  const typeOutput = unwrap(syncInstanceType(InstanceTypeSyncRequestSchema.parse(firstType), { now: NOW }));
  const queues = typeOutput.children.map((child) =>
    observed(
      child as Json,
      type,
      random,
      child['kind'] === 'ClusterQueue'
        ? {
            conditions: [condition('Active', 'True', 'Ready', 'Can admit new workloads')],
            admittedWorkloads: 3,
            pendingWorkloads: 1,
            reservingWorkloads: 3,
            flavorsReservation: [],
            flavorsUsage: [],
          }
        : {
            conditions: [condition('Active', 'True', 'Ready', 'Can submit new workloads')],
            admittedWorkloads: 0,
            pendingWorkloads: 0,
            reservingWorkloads: 0,
          },
    ),
  );
  const typeBody = JSON.stringify({
    ...firstType,
    parent: { ...type, status: typeOutput.status },
    children: objectMap(queues, itKeys),
  });

  // node-profile in the steady state: a marked Node whose NodeProfile exists, the ChainSettings related.
  const target = nodes.find((n) => n.metadata.name.startsWith('h100')) ?? (nodes[0] as Node);
  const marked = {
    ...target,
    metadata: { ...target.metadata, labels: { ...target.metadata.labels, [PROFILED_LABEL]: 'true' } },
  };
  const profileBody = JSON.stringify({
    controller: exampleController('node-profile'),
    parent: marked,
    children: chainRelatedProfiles([target], random),
    related: objectMap([chainSettings], [`ChainSettings.${GPUSTACK}`]),
    finalizing: false,
  });
  return {
    nodes: size,
    nodeBytes,
    flavors: flavors.length,
    namespaces: namespaceCount(size),
    bodies: { 'scheduling-chain/sync': chainBody, 'instance-type/sync': typeBody, 'node-profile/sync': profileBody },
  };
}
