// What the e2e scenarios share: installing our manifests against the hook server, creating
// Nodes through the API, and comparing the live chain with what `render` prints.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';

import { NodeSchema, type Node, type SchedulingChain } from '../../src/k8s/index.js';
import { renderChain, type RenderedObject } from '../../src/render/index.js';
import { parseManifests, waitFor, type KubeClient, type KubeObject } from './apply.js';
import { REPO_ROOT } from './components.js';

const MANIFESTS = path.join(REPO_ROOT, 'manifests');
const KUEUE = 'kueue.x-k8s.io/v1beta2';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
/** Kinds that need a kubelet or a scheduler: validated by dry-run, not created. */
const DRY_RUN_ONLY = new Set(['Deployment', 'DaemonSet', 'Service', 'PodDisruptionBudget']);
/** Short resyncs so a missed event costs seconds, not a minute. */
const E2E_RESYNC_SECONDS = 5;

export interface ManifestOptions {
  /**
   * Controllers (by name) that keep the resync period their manifest ships instead of the e2e's
   * short one: for scenarios that must not be rescued by a resync.
   */
  readonly shippedResync?: readonly string[];
}

/** Every object of `kubectl apply -k manifests/`, hook URLs pointed at `hookUrl`. */
export function ourManifests(hookUrl: string, options: ManifestOptions = {}): KubeObject[] {
  const kustomization = parse(readFileSync(path.join(MANIFESTS, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  return kustomization.resources
    .flatMap((file) => parseManifests(readFileSync(path.join(MANIFESTS, file), 'utf8')))
    .map((object) => {
      if (object.kind !== 'CompositeController' && object.kind !== 'DecoratorController') return object;
      const spec = object['spec'] as {
        hooks: Record<string, { webhook: { url: string } }>;
        resyncPeriodSeconds?: number;
      };
      const hooks = Object.fromEntries(
        Object.entries(spec.hooks).map(([name, hook]) => {
          const route = new URL(hook.webhook.url).pathname;
          // A plain-HTTP hook server (most scenarios) verifies and checks nothing: the hooks'
          // credentials (caBundle, authorization, clientTLS) name Secrets these clusters do not
          // have, so they go; trust.e2e.test.ts runs the hooks with them.
          const {
            caBundle: _ca,
            authorization: _token,
            clientTLS: _client,
            ...webhook
          } = hook.webhook as {
            url: string;
          } & Record<string, unknown>;
          const credentials = hookUrl.startsWith('http:') ? webhook : hook.webhook;
          return [name, { ...hook, webhook: { ...credentials, url: `${hookUrl}${route}` } }];
        }),
      );
      const shipped = options.shippedResync?.includes(object.metadata.name) ?? false;
      const resyncPeriodSeconds = shipped ? spec.resyncPeriodSeconds : E2E_RESYNC_SECONDS;
      return { ...object, spec: { ...spec, hooks, resyncPeriodSeconds } };
    });
}

/** Applies our manifests: CRDs first, the workloads only as server-side dry-run. */
export async function installOurManifests(
  client: KubeClient,
  hookUrl: string,
  options: ManifestOptions = {},
): Promise<{ applied: string[]; dryRun: string[] }> {
  const objects = ourManifests(hookUrl, options);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  for (const crd of crds) await client.applyObject(crd);
  await client.waitForCrds(crds.map((c) => c.metadata.name));
  const applied: string[] = [];
  const dryRun: string[] = [];
  for (const object of objects.filter((o) => o.kind !== 'CustomResourceDefinition')) {
    const id = `${object.kind}/${object.metadata.name}`;
    if (DRY_RUN_ONLY.has(object.kind)) {
      await client.applyObject(object, { dryRun: true });
      dryRun.push(id);
    } else {
      await client.applyObject(object);
      applied.push(id);
    }
  }
  return { applied, dryRun };
}

/** The Nodes of an examples/clusters dump. */
export function exampleNodes(file: string): Node[] {
  const doc = parse(readFileSync(path.join(REPO_ROOT, 'examples', 'clusters', file), 'utf8')) as
    { items?: unknown[] } | unknown[];
  const items = Array.isArray(doc) ? doc : (doc.items ?? []);
  return items.map((item) => NodeSchema.parse(item));
}

export function exampleClusterFiles(): string[] {
  return readdirSync(path.join(REPO_ROOT, 'examples', 'clusters'))
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort();
}

/** Creates a Node as a kubelet registers it, before its first status: the object alone. */
export async function registerNode(client: KubeClient, node: Node): Promise<void> {
  const { name, labels, annotations } = node.metadata;
  await client.applyObject({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
  });
}

/** Creates a Node as a kubelet would: the object, then its status (capacity) on the subresource. */
export async function createNode(client: KubeClient, node: Node): Promise<void> {
  const { name } = node.metadata;
  await registerNode(client, node);
  const status = node.status as { capacity?: unknown; allocatable?: unknown } | undefined;
  await client.applyObject(
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { capacity: status?.capacity, allocatable: status?.allocatable ?? status?.capacity },
    },
    { subresource: 'status' },
  );
}

/** Where each kind we emit lives, and how to list the ones we own. */
const OWNED: Record<string, { apiVersion: string; labelSelector?: string; filter?: (o: KubeObject) => boolean }> = {
  ResourceFlavor: { apiVersion: KUEUE, labelSelector: 'resource.gpustack.ai/type=nodes' },
  ClusterQueue: { apiVersion: KUEUE, labelSelector: 'resource.gpustack.ai/type=instancetypes' },
  LocalQueue: { apiVersion: KUEUE, filter: (o) => o.metadata.name.startsWith('gpustack-fnv64-') },
  AdmissionCheck: { apiVersion: KUEUE, filter: (o) => o.metadata.name === 'gpustack-node-devices' },
  InstanceType: { apiVersion: GPUSTACK },
  ChainSettings: { apiVersion: GPUSTACK },
  NodeProfile: { apiVersion: GPUSTACK },
  NodeShard: { apiVersion: GPUSTACK },
  DeviceClass: { apiVersion: 'resource.k8s.io/v1', labelSelector: 'resource.gpustack.ai/type=deviceclasses' },
};

export interface LiveChain {
  objects: Map<string, KubeObject>;
  nodes: Map<string, Record<string, string>>;
  nodeAnnotations: Map<string, Record<string, string>>;
}

/** `<Kind> [<namespace>/]<name>`: one key per object of the chain. */
export const idOf = (o: { kind: string; metadata: { name: string; namespace?: string | undefined } }): string =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

/**
 * Differences between the objects render expects and the live ones (keyed by `idOf`): the same
 * set, each live object carrying the expected labels, annotations and spec. Empty = equal.
 */
export function diffObjects(expected: readonly RenderedObject[], live: ReadonlyMap<string, KubeObject>): string[] {
  const out: string[] = [];
  const wanted = new Map(expected.map((o) => [idOf(o), o]));
  for (const id of wanted.keys()) if (!live.has(id)) out.push(`missing ${id}`);
  for (const id of live.keys()) if (!wanted.has(id)) out.push(`unexpected ${id}`);
  for (const [id, want] of wanted) {
    const have = live.get(id);
    if (!have) continue;
    const meta = want.metadata as { labels?: unknown; annotations?: unknown };
    subsetDiff(
      { labels: meta.labels ?? {}, annotations: meta.annotations ?? {} },
      have.metadata,
      `${id} metadata`,
      out,
    );
    subsetDiff(want['spec'], have['spec'], `${id} spec`, out);
    // A NodeShard's status is the summary the chain reads: render computes it as its controller does.
    if (want.kind === 'NodeShard') subsetDiff(want['status'], have['status'], `${id} status`, out);
  }
  return out;
}

export async function readLiveChain(client: KubeClient): Promise<LiveChain> {
  const objects = new Map<string, KubeObject>();
  for (const [kind, owned] of Object.entries(OWNED)) {
    const list = await client.list(
      owned.apiVersion,
      kind,
      owned.labelSelector ? { labelSelector: owned.labelSelector } : {},
    );
    for (const object of list.filter(owned.filter ?? (() => true))) objects.set(idOf(object), object);
  }
  const liveNodes = await client.list('v1', 'Node');
  const nodes = new Map(liveNodes.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  const nodeAnnotations = new Map(liveNodes.map((n) => [n.metadata.name, n.metadata.annotations ?? {}]));
  return { objects, nodes, nodeAnnotations };
}

/** `want` ⊆ `have`: every field we send is on the live object (the API server and Kueue add defaults). */
export function subsetDiff(want: unknown, have: unknown, at: string, out: string[]): void {
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) {
      out.push(`${at}: want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`);
      return;
    }
    want.forEach((w, i) => subsetDiff(w, have[i], `${at}[${i}]`, out));
  } else if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object') {
      out.push(`${at}: want an object, have ${JSON.stringify(have)}`);
      return;
    }
    for (const [key, value] of Object.entries(want))
      subsetDiff(value, (have as Record<string, unknown>)[key], `${at}.${key}`, out);
  } else if (want !== have) out.push(`${at}: want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`);
}

/**
 * Differences between the live cluster and what render prints for `nodes`: the same set of
 * owned objects, each carrying our labels, annotations and spec; every node carrying the
 * labels and annotations node-profile sets and none it removes. Empty = converged.
 */
export function diffAgainstRender(
  live: LiveChain,
  nodes: readonly Node[],
  namespaces: readonly string[],
  chain?: SchedulingChain,
): string[] {
  const result = renderChain({ nodes, namespaces, ...(chain ? { chain } : {}) }, { now: '2026-01-01T00:00:00Z' });
  if (!result.ok) return [`render refused: ${result.error.message}`];
  const out = diffObjects(result.objects, live.objects);
  for (const node of result.nodes) {
    const labels = live.nodes.get(node.name) ?? {};
    for (const [key, value] of Object.entries(node.labels)) {
      if (value === null ? key in labels : labels[key] !== value)
        out.push(`node ${node.name} label ${key}: want ${value}, have ${labels[key]}`);
    }
    const annotations = live.nodeAnnotations.get(node.name) ?? {};
    for (const [key, value] of Object.entries(node.annotations ?? {})) {
      if (value === null ? key in annotations : annotations[key] !== value)
        out.push(`node ${node.name} annotation ${key}: want ${value}, have ${annotations[key]}`);
    }
  }
  return out;
}

/**
 * Waits until the live chain is what render prints for the Nodes `nodesNow` returns (undefined: not
 * there yet) and the cluster's Namespaces, failing with the first 40 differences; returns the
 * SchedulingChain's `status.managedNodes` then.
 */
export async function waitForRender(
  client: KubeClient,
  nodesNow: () => Promise<readonly Node[] | undefined>,
  what: string,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<number | undefined> {
  let last: string[] = [];
  await waitFor(
    async () => {
      const nodes = await nodesNow();
      if (!nodes) return false;
      const namespaces = (await client.list('v1', 'Namespace')).map((n) => n.metadata.name);
      last = diffAgainstRender(await readLiveChain(client), nodes, namespaces);
      return last.length === 0;
    },
    timeoutMs,
    what,
    intervalMs,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\nstill different:\n  ${last.slice(0, 40).join('\n  ')}`, { cause: error });
  });
  const chain = await client.get<KubeObject & { status?: { managedNodes?: number } }>(
    'worker.gpustack.ai/v1alpha1',
    'SchedulingChain',
    'default',
  );
  return chain?.status?.managedNodes;
}
