// Nobody in where they don't belong (issue 34), on a real API server and Metacontroller:
// 1. the chart's ValidatingAdmissionPolicy holds gpustack-agent, with a real Pod-bound token of a
//    Pod on node A, to node A's ResourceSlices, Node labels and NodeFeature: node B's are refused
//    with a message naming node A, node A's own succeed;
//    The holes of issue 43 each get a denial: a pool named after node B, a slice named as node B's,
//    another driver's slice, NodeFeature labels the agent does not own, a token bound to the Node
//    and not a Pod, a legacy Secret token (403, not an expression error), and the kustomize base
//    moved to another namespace (kubectl kustomize renders the overlay users build);
// 2. Metacontroller syncs the chain over HTTPS with the certificate and token the chart makes, a
//    caller without the token is refused, and a rotated serving certificate keeps the chain syncing;
//    a rotated token (the old one kept as `previous`, issue 43) keeps every hook call at 200 while
//    Metacontroller still sends the old one, and after its restart reads the new one.
// Run with `npm run build && npx vitest run --config vitest.e2e.config.ts test/e2e/trust.e2e.test.ts`.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { makeLeaf } from '../support/certs.js';
import { KubeClient, KubeError, waitFor, type KubeObject } from '../../harness/e2e/apply.js';
import { NodeSchema } from '../../src/k8s/index.js';
import { createNode, diffAgainstRender, exampleNodes, readLiveChain } from '../../harness/e2e/chain.js';
import { REPO_ROOT, ensureCrds, type Component } from '../../harness/e2e/components.js';
import { startMetacontroller, type ControlPlane, type Metacontroller } from '../../harness/e2e/control-plane.js';
import { CHART, NAMESPACE, createHelm, type Helm } from '../../harness/e2e/helm.js';
import { CLI } from '../../harness/e2e/hook-server.js';
import { freePorts, startProcess, type ManagedProcess } from '../../harness/e2e/processes.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';

const AGENT = 'gpustack-agent';
const NODE_A = 'trust-node-a';
const NODE_B = 'trust-node-b';
const DRIVER = 'nvidia.gpustack.ai';
/** The one topology key the agent may set: its node's NVLink clique from NVML's fabric info. */
const CLIQUE = 'topology.gpustack.ai/nvlink-clique';
const CLIQUE_VALUE = '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11.3';
const CONVERGE_MS = 120_000;

let helm: Helm;
let kubectl: Component;
let plane: ControlPlane;
let admin: KubeClient;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-trust-'));

// The API server, and of the controllers only the one that fills a legacy Secret token (the other
// two the controller manager always runs are idle here); each describe starts what it tests itself,
// the hook server from the certificates the chart renders.
useCluster({
  controllers: ['serviceaccount-token-controller'],
  components: ['helm', 'kubectl'],
  setup: async (c) => {
    plane = c.plane;
    admin = c.client;
    helm = createHelm(c.components.helm as Component);
    kubectl = c.components.kubectl as Component;
  },
  teardown: async () => helm?.dispose(),
  cleanup: () => rmSync(scratch, { recursive: true, force: true }),
});

/** The chart's objects of these kinds, rendered with `set`. */
function chartObjects(kinds: readonly string[], set: Record<string, string> = {}): KubeObject[] {
  return helm.template({ set, includeCrds: false }).filter((o) => kinds.includes(o.kind));
}

/** The error a write gets, or undefined when it succeeds. */
async function refusal(write: () => Promise<unknown>): Promise<KubeError | undefined> {
  try {
    await write();
    return undefined;
  } catch (error) {
    if (error instanceof KubeError) return error;
    throw error;
  }
}

const slice = (
  name: string,
  node: string,
  { pool = node, driver = DRIVER }: { pool?: string; driver?: string } = {},
): KubeObject => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceSlice',
  metadata: { name },
  spec: { driver, nodeName: node, pool: { name: pool, generation: 1, resourceSliceCount: 1 }, devices: [] },
});

const SLICES = '/apis/resource.k8s.io/v1/resourceslices';

/** As the agent writes a slice: create (POST), or replace (PUT) the current one changed by `change`. */
async function createSlice(client: KubeClient, object: KubeObject): Promise<void> {
  await client.request('POST', SLICES, JSON.stringify(object));
}
async function replaceSlice(client: KubeClient, name: string, change: (spec: Record<string, unknown>) => void) {
  const current = await admin.request<KubeObject & { spec: Record<string, unknown> }>('GET', `${SLICES}/${name}`);
  change(current.spec);
  await client.request('PUT', `${SLICES}/${name}`, JSON.stringify(current));
}

const nodeFeature = (name: string, node: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'nfd.k8s-sigs.io/v1alpha1',
  kind: 'NodeFeature',
  metadata: { name, namespace: NAMESPACE, labels: { 'nfd.node.kubernetes.io/node-name': node } },
  spec: { labels: { 'acceleratable.feature.gpustack.ai/nvidia': 'true', ...labels } },
});

/** The agent's objects of a kustomize overlay of manifests/ that moves it to `namespace`, as `kubectl kustomize` renders it. */
function overlayObjects(namespace: string): KubeObject[] {
  const dir = mkdtempSync(path.join(scratch, 'overlay-'));
  writeFileSync(
    path.join(dir, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      `namespace: ${namespace}`,
      'resources:',
      `  - ${path.relative(dir, path.join(REPO_ROOT, 'manifests'))}`,
      '',
    ].join('\n'),
  );
  const run = spawnSync(kubectl.binary, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 1 << 26 });
  if (run.status !== 0) throw new Error(`kubectl kustomize: ${run.stderr}`);
  return parseAllDocuments(run.stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

/**
 * NFD's NodeFeature CRD as far as the policy needs it (a namespaced nfd.k8s-sigs.io/v1alpha1 kind):
 * NFD's module is not in the Go module cache the suite builds from, and the policy judges the
 * request, not the schema.
 */
const NODE_FEATURE_CRD: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'nodefeatures.nfd.k8s-sigs.io' },
  spec: {
    group: 'nfd.k8s-sigs.io',
    names: { kind: 'NodeFeature', listKind: 'NodeFeatureList', plural: 'nodefeatures', singular: 'nodefeature' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe("the agent's writes are held to its own node (ValidatingAdmissionPolicy of the chart)", () => {
  /** gpustack-agent with the token of its Pod on node A. */
  let agentA: KubeClient;
  /** gpustack-agent with a token bound to nothing (no node name). */
  let unbound: KubeClient;
  /** gpustack-agent with a token bound to node A's Node object: a node name, no Pod. */
  let nodeBound: KubeClient;
  let as: (token: string) => KubeClient;
  let tokenOf: (boundObjectRef?: unknown, namespace?: string) => Promise<string>;

  beforeAll(async () => {
    await admin.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    await admin.applyObject(NODE_FEATURE_CRD);
    await admin.waitForCrds([NODE_FEATURE_CRD.metadata.name]);
    // The agent's ServiceAccount and roles, and the policy with its binding, as the chart renders them.
    for (const object of chartObjects([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]).filter((o) => o.metadata.name.startsWith(AGENT)))
      await admin.applyObject(object);
    for (const node of [NODE_A, NODE_B])
      await admin.applyObject({ apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
    // The agent's Pod, bound to node A (no kubelet runs it: the token's binding is what counts).
    const pod = await admin.applyObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'gpustack-agent-a', namespace: NAMESPACE },
      spec: {
        serviceAccountName: AGENT,
        nodeName: NODE_A,
        containers: [{ name: 'agent', image: 'gpustack-operator' }],
      },
    });
    tokenOf = async (boundObjectRef?: unknown, namespace = NAMESPACE): Promise<string> => {
      const review = await admin.request<{ status: { token: string } }>(
        'POST',
        `/api/v1/namespaces/${namespace}/serviceaccounts/${AGENT}/token`,
        JSON.stringify({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600, ...(boundObjectRef ? { boundObjectRef } : {}) },
        }),
      );
      return review.status.token;
    };
    as = (token: string) => new KubeClient({ ...admin.connection, token });
    agentA = as(await tokenOf({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata['uid'] }));
    unbound = as(await tokenOf());
    const nodeA = await admin.get('v1', 'Node', NODE_A);
    nodeBound = as(await tokenOf({ apiVersion: 'v1', kind: 'Node', name: NODE_A, uid: nodeA?.metadata['uid'] }));
    // What the API server makes of the tokens: the node name (and the Pod) the policy reads.
    const extraOf = async (client: KubeClient) => {
      const review = await client.request<{
        status: { userInfo: { username: string; extra?: Record<string, string[]> } };
      }>(
        'POST',
        '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      );
      expect(review.status.userInfo.username).toBe(`system:serviceaccount:${NAMESPACE}:${AGENT}`);
      return review.status.userInfo.extra ?? {};
    };
    const podClaims = await extraOf(agentA);
    expect(podClaims['authentication.kubernetes.io/node-name']).toEqual([NODE_A]);
    expect(podClaims['authentication.kubernetes.io/pod-name']).toEqual([pod.metadata.name]);
    const nodeClaims = await extraOf(nodeBound);
    expect(nodeClaims['authentication.kubernetes.io/node-name']).toEqual([NODE_A]);
    expect(nodeClaims).not.toHaveProperty('authentication.kubernetes.io/pod-name');
    // The policy is in force once a write of node B's slice is refused (policies load asynchronously).
    let last: KubeError | undefined;
    await waitFor(
      async () => {
        last = await refusal(() =>
          agentA.request('POST', `${SLICES}?dryRun=All`, JSON.stringify(slice('probe-b', NODE_B))),
        );
        return last?.status === 403 && last.message.includes(`node ${NODE_A}`);
      },
      30_000,
      'the policy refuses node B',
      250,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the last answer: ${last?.message ?? 'allowed'}`);
    });
  }, 300_000);

  afterAll(() => {
    agentA?.close();
    unbound?.close();
    nodeBound?.close();
  });

  it("creates, updates and deletes node A's ResourceSlice", async () => {
    await createSlice(agentA, slice(`${NODE_A}-nvidia-devices-0`, NODE_A));
    await replaceSlice(agentA, `${NODE_A}-nvidia-devices-0`, (spec) => {
      (spec['pool'] as { generation: number }).generation = 2;
    });
    expect(await agentA.delete('resource.k8s.io/v1', 'ResourceSlice', `${NODE_A}-nvidia-devices-0`)).toBe(true);
  });

  it("is refused node B's ResourceSlice — create, update, delete, and moving its own to node B — naming node A", async () => {
    const create = await refusal(() => createSlice(agentA, slice(`${NODE_B}-nvidia`, NODE_B)));
    expect(create?.status).toBe(403);
    expect(create?.message).toContain(`the agent of node ${NODE_A} writes only ResourceSlices of node ${NODE_A}`);
    expect(create?.message).toContain(`spec.nodeName "${NODE_B}"`);
    // Node B's own slice, written by someone allowed (here the admin), stays out of reach.
    await createSlice(admin, slice(`${NODE_B}-nvidia`, NODE_B));
    const update = await refusal(() =>
      replaceSlice(agentA, `${NODE_B}-nvidia`, (spec) => {
        (spec['pool'] as { generation: number }).generation = 2;
      }),
    );
    expect(update?.status).toBe(403);
    expect(update?.message).toContain(`node ${NODE_A}`);
    const remove = await refusal(() => agentA.delete('resource.k8s.io/v1', 'ResourceSlice', `${NODE_B}-nvidia`));
    expect(remove?.status).toBe(403);
    expect(await admin.get('resource.k8s.io/v1', 'ResourceSlice', `${NODE_B}-nvidia`)).toBeDefined();
    // Its own slice pointed at node B: the new nodeName is judged, not just the old.
    await createSlice(agentA, slice(`${NODE_A}-nvidia-devices-1`, NODE_A));
    const moved = await refusal(() =>
      replaceSlice(agentA, `${NODE_A}-nvidia-devices-1`, (spec) => {
        spec['nodeName'] = NODE_B;
      }),
    );
    // spec.nodeName is immutable besides: the API server's validation (422) comes before the policy.
    expect([403, 422]).toContain(moved?.status);
  });

  it("is refused a slice of node A in a pool named after node B (the ledger's pool), naming node A", async () => {
    const error = await refusal(() =>
      createSlice(agentA, slice(`${NODE_A}-nvidia-devices-3`, NODE_A, { pool: NODE_B })),
    );
    expect(error?.status).toBe(403);
    expect(error?.message).toContain(`the agent of node ${NODE_A} writes ResourceSlices only in pool ${NODE_A}`);
    expect(error?.message).toContain(`spec.pool.name "${NODE_B}"`);
  });

  it("is refused node B's slice name on node A (squatting), naming node A; names derived from node A pass, generated ones too", async () => {
    for (const name of [
      `${NODE_B}-nvidia-devices-0`,
      `${NODE_A}-x`,
      `${NODE_A}-amd-devices-0`,
      `${NODE_A}-nvidia-x-0`,
    ]) {
      const error = await refusal(() => createSlice(agentA, slice(name, NODE_A)));
      expect(error?.status, name).toBe(403);
      expect(error?.message).toContain(
        `the agent of node ${NODE_A} creates ResourceSlices only under names derived from node ${NODE_A}`,
      );
      expect(error?.message).toContain(`not ${name}`);
    }
    await createSlice(agentA, slice(`${NODE_A}-nvidia-counters-0`, NODE_A));
    // The publisher's way round a name someone else holds: the API server generates the rest.
    const generated = await agentA.request<KubeObject>(
      'POST',
      SLICES,
      JSON.stringify({ ...slice('', NODE_A), metadata: { generateName: `${NODE_A}-nvidia-devices-3-` } }),
    );
    expect(generated.metadata.name).toMatch(new RegExp(`^${NODE_A}-nvidia-devices-3-[a-z0-9]{5}$`));
    for (const name of [`${NODE_A}-nvidia-counters-0`, generated.metadata.name])
      expect(await agentA.delete('resource.k8s.io/v1', 'ResourceSlice', name)).toBe(true);
  });

  it("is refused another driver's slice on node A — its create, and the delete of one its driver wrote — naming node A", async () => {
    const create = await refusal(() =>
      createSlice(agentA, slice(`${NODE_A}-gpu-devices-0`, NODE_A, { driver: 'gpu.nvidia.com' })),
    );
    expect(create?.status).toBe(403);
    expect(create?.message).toContain(
      `the agent of node ${NODE_A} writes only ResourceSlices of the drivers <manufacturer>.gpustack.ai`,
    );
    expect(create?.message).toContain('spec.driver "gpu.nvidia.com"');
    await createSlice(admin, slice(`gpu-nvidia-com-${NODE_A}`, NODE_A, { driver: 'gpu.nvidia.com' }));
    const remove = await refusal(() =>
      agentA.delete('resource.k8s.io/v1', 'ResourceSlice', `gpu-nvidia-com-${NODE_A}`),
    );
    expect(remove?.status).toBe(403);
    expect(remove?.message).toContain(`the agent of node ${NODE_A}`);
    expect(await admin.get('resource.k8s.io/v1', 'ResourceSlice', `gpu-nvidia-com-${NODE_A}`)).toBeDefined();
  });

  it("patches node A's acceleratable labels, its NVLink clique and its agent-labels annotation", async () => {
    await agentA.mergePatch('v1', 'Node', NODE_A, {
      metadata: {
        labels: {
          'feature.gpustack.ai/acceleratable': 'true',
          'acceleratable.feature.gpustack.ai/nvidia-h100.count': '8',
          [CLIQUE]: CLIQUE_VALUE,
        },
        annotations: {
          'feature.gpustack.ai/agent-labels': `acceleratable.feature.gpustack.ai/nvidia-h100.count,${CLIQUE}`,
        },
      },
    });
    expect((await admin.get('v1', 'Node', NODE_A))?.metadata.labels?.[CLIQUE]).toBe(CLIQUE_VALUE);
    await agentA.mergePatch('v1', 'Node', NODE_A, {
      metadata: { labels: { 'acceleratable.feature.gpustack.ai/nvidia-h100.count': null, [CLIQUE]: null } },
    });
    const node = await admin.get('v1', 'Node', NODE_A);
    expect(node?.metadata.labels).toMatchObject({ 'feature.gpustack.ai/acceleratable': 'true' });
    expect(node?.metadata.labels).not.toHaveProperty('acceleratable.feature.gpustack.ai/nvidia-h100.count');
    expect(node?.metadata.labels).not.toHaveProperty(CLIQUE);
  });

  it.each([
    [
      "node B's labels",
      NODE_B,
      { metadata: { labels: { 'feature.gpustack.ai/acceleratable': 'true' } } },
      `may only update Node ${NODE_A}, not UPDATE Node ${NODE_B}`,
    ],
    [
      'a label it does not own (gpustack.ai/managed)',
      NODE_A,
      { metadata: { labels: { 'gpustack.ai/managed': 'true' } } },
      'changed labels gpustack.ai/managed',
    ],
    [
      'a forged topology key (topology.gpustack.ai/other)',
      NODE_A,
      { metadata: { labels: { 'topology.gpustack.ai/other': 'x' } } },
      'changed labels topology.gpustack.ai/other',
    ],
    [
      "node-profile's topology profile",
      NODE_A,
      { metadata: { labels: { 'topology.gpustack.ai/profile': 'fnv64-87bf574bea2a4f23' } } },
      'changed labels topology.gpustack.ai/profile',
    ],
    [
      "node B's NVLink clique",
      NODE_B,
      { metadata: { labels: { [CLIQUE]: CLIQUE_VALUE } } },
      `may only update Node ${NODE_A}, not UPDATE Node ${NODE_B}`,
    ],
    [
      "node-profile's .sliced.units label",
      NODE_A,
      { metadata: { labels: { 'acceleratable.feature.gpustack.ai/nvidia-h100.sliced.units': '10' } } },
      'sliced.units',
    ],
    ['a taint', NODE_A, { spec: { taints: [{ key: 'evil', effect: 'NoSchedule' }] } }, 'no taints'],
    [
      'unschedulable',
      NODE_A,
      { spec: { unschedulable: true } },
      `on Node ${NODE_A} only its acceleratable labels, ${CLIQUE} and the feature.gpustack.ai/agent-labels annotation`,
    ],
    [
      'another annotation',
      NODE_A,
      { metadata: { annotations: { 'feature.gpustack.ai/derived-device-labels': '{}' } } },
      'annotations feature.gpustack.ai/derived-device-labels',
    ],
  ])('is refused %s, naming node A', async (_what, node, patch, message) => {
    const error = await refusal(() => agentA.mergePatch('v1', 'Node', node, patch));
    expect(error?.status).toBe(403);
    expect(error?.message).toContain(`the agent of node ${NODE_A}`);
    expect(error?.message).toContain(message);
  });

  it("writes node A's NodeFeature (server-side apply, as the agent does) and is refused node B's", async () => {
    await agentA.applyObject(nodeFeature(`${NODE_A}-gpustack-agent`, NODE_A), { fieldManager: AGENT });
    for (const object of [
      nodeFeature(`${NODE_B}-gpustack-agent`, NODE_B),
      nodeFeature(`${NODE_A}-gpustack-agent-2`, NODE_A),
      nodeFeature(`${NODE_B}-gpustack-agent`, NODE_A),
    ]) {
      const error = await refusal(() => agentA.applyObject(object, { fieldManager: AGENT }));
      expect(error?.status, object.metadata.name).toBe(403);
      expect(error?.message).toContain(`writes only NodeFeature ${NODE_A}-gpustack-agent`);
    }
    // Relabelled to node B: refused, its own name notwithstanding.
    const relabelled = await refusal(() =>
      agentA.applyObject(nodeFeature(`${NODE_A}-gpustack-agent`, NODE_B), { fieldManager: AGENT }),
    );
    expect(relabelled?.status).toBe(403);
  });

  it('sets its NVLink clique in the labels of its own NodeFeature', async () => {
    await agentA.applyObject(nodeFeature(`${NODE_A}-gpustack-agent`, NODE_A, { [CLIQUE]: CLIQUE_VALUE }), {
      fieldManager: AGENT,
    });
    const object = await admin.get<KubeObject & { spec: { labels: Record<string, string> } }>(
      'nfd.k8s-sigs.io/v1alpha1',
      'NodeFeature',
      `${NODE_A}-gpustack-agent`,
      NAMESPACE,
    );
    expect(object?.spec.labels[CLIQUE]).toBe(CLIQUE_VALUE);
  });

  it.each([
    ["node-profile's .sliced.units", 'acceleratable.feature.gpustack.ai/nvidia-h100.sliced.units', '99999999'],
    ['gpustack.ai/managed', 'gpustack.ai/managed', 'true'],
    ['a forged topology key', 'topology.gpustack.ai/other', CLIQUE_VALUE],
    ["node-profile's topology profile", 'topology.gpustack.ai/profile', 'fnv64-87bf574bea2a4f23'],
  ])('is refused %s in the labels of its own NodeFeature, naming node A', async (_what, key, value) => {
    const error = await refusal(() =>
      agentA.applyObject(nodeFeature(`${NODE_A}-gpustack-agent`, NODE_A, { [key]: value }), { fieldManager: AGENT }),
    );
    expect(error?.status).toBe(403);
    expect(error?.message).toContain(
      `the agent of node ${NODE_A} sets in NodeFeature ${NODE_A}-gpustack-agent only its acceleratable labels and ${CLIQUE}, not ${key}`,
    );
  });

  it('a token of the account bound to no Pod (no node name) writes nothing, not even a slice of node A', async () => {
    const error = await refusal(() => createSlice(unbound, slice(`${NODE_A}-nvidia-devices-2`, NODE_A)));
    expect(error?.status).toBe(403);
    expect(error?.message).toContain('this token names no node');
  });

  it("a token of the account bound to node A's Node, not to a Pod, writes nothing, naming node A", async () => {
    const error = await refusal(() => createSlice(nodeBound, slice(`${NODE_A}-nvidia-devices-4`, NODE_A)));
    expect(error?.status).toBe(403);
    expect(error?.message).toContain(`this token of node ${NODE_A} is bound to no Pod`);
  });

  it('a legacy Secret token of the account (no claims at all) is refused with 403, not an expression error', async () => {
    await admin.applyObject({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        name: `${AGENT}-legacy`,
        namespace: NAMESPACE,
        annotations: { 'kubernetes.io/service-account.name': AGENT },
      },
    });
    let token = '';
    await waitFor(
      async () => {
        const secret = await admin.get('v1', 'Secret', `${AGENT}-legacy`, NAMESPACE);
        token = Buffer.from(
          (secret?.['data'] as Record<string, string> | undefined)?.['token'] ?? '',
          'base64',
        ).toString();
        return token !== '';
      },
      60_000,
      'the token controller fills the legacy token',
      250,
    );
    const legacy = as(token);
    try {
      const error = await refusal(() => createSlice(legacy, slice(`${NODE_A}-nvidia-devices-4`, NODE_A)));
      expect(error?.status).toBe(403);
      expect(error?.message).toContain('this token names no node');
    } finally {
      legacy.close();
    }
  });

  it('the kustomize base moved to another namespace by an overlay still holds the agent there, naming node A', async () => {
    const objects = overlayObjects('gpu-ops');
    const policy = objects.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'));
    expect(policy.map((o) => o.kind).sort()).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    const account = objects.find((o) => o.kind === 'ServiceAccount' && o.metadata.name === AGENT);
    expect(account?.metadata.namespace).toBe('gpu-ops');
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === AGENT);
    expect(binding?.['subjects']).toEqual([{ kind: 'ServiceAccount', name: AGENT, namespace: 'gpu-ops' }]);
    await admin.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gpu-ops' } });
    await admin.applyObject(account as KubeObject);
    // The overlay's binding under another name: the chart's agent in gpustack-system keeps its own.
    await admin.applyObject({ ...(binding as KubeObject), metadata: { name: `${AGENT}-gpu-ops` } });
    const pod = await admin.applyObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'gpustack-agent-a', namespace: 'gpu-ops' },
      spec: {
        serviceAccountName: AGENT,
        nodeName: NODE_A,
        containers: [{ name: 'agent', image: 'gpustack-operator' }],
      },
    });
    const moved = as(
      await tokenOf({ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata['uid'] }, 'gpu-ops'),
    );
    const probeB = (client: KubeClient) =>
      refusal(() =>
        client.request('POST', `${SLICES}?dryRun=All`, JSON.stringify(slice(`${NODE_B}-nvidia-devices-0`, NODE_B))),
      );
    try {
      // The chart's policy out of the way first (the overlay's alone must hold the moved agent):
      // policies load asynchronously, so until node A's own agent writes node B's slice again.
      for (const kind of ['ValidatingAdmissionPolicyBinding', 'ValidatingAdmissionPolicy'])
        await admin.delete('admissionregistration.k8s.io/v1', kind, 'gpustack-agent-node-restriction');
      await waitFor(async () => (await probeB(agentA)) === undefined, 30_000, 'no policy in force', 250);
      for (const object of policy) await admin.applyObject(object);
      let last: KubeError | undefined;
      await waitFor(
        async () => {
          last = await probeB(moved);
          return last !== undefined;
        },
        30_000,
        "the overlay's policy refuses the agent in gpu-ops",
        250,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; the last answer: ${last?.message ?? 'allowed'}`);
      });
      expect(last?.status).toBe(403);
      expect(last?.message).toContain(`the agent of node ${NODE_A} writes only ResourceSlices of node ${NODE_A}`);
    } finally {
      moved.close();
      for (const object of chartObjects(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']))
        await admin.applyObject(object);
    }
  });

  it('with agent.nodeRestriction.enabled=false the chart renders no policy; before Kubernetes 1.32 it refuses to install', () => {
    expect(
      chartObjects(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'], {
        'agent.nodeRestriction.enabled': 'false',
      }),
    ).toEqual([]);
    expect(() => helm.run(['template', 'x', CHART, '--kube-version', '1.31.0'])).toThrow(
      /ServiceAccountTokenPodNodeInfo[\s\S]*agent\.nodeRestriction\.enabled=false/,
    );
    expect(helm.run(['template', 'x', CHART, '--kube-version', '1.32.0'])).toContain('ValidatingAdmissionPolicy');
  });
});

/** A PEM file pair written the way the kubelet updates a Secret volume: a new folder, then one rename. */
function writeSecretVolume(dir: string, files: Record<string, string>): void {
  const next = `${dir}.next`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(next, name), content);
  const old = `${dir}.old`;
  rmSync(old, { recursive: true, force: true });
  if (existsSync(dir)) renameSync(dir, old);
  renameSync(next, dir);
}

/** The certificate a TLS server presents, and the status of a POST without a token. */
function probe(
  url: string,
  ca: string,
  token?: string,
): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/hooks/node-devices-check/sync`,
      {
        method: 'POST',
        ca,
        agent: false,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ parent: { metadata: { name: 'someone-elses-check' } } }));
  });
}

/** A sample's value on a /metrics page (0 when absent). */
async function counter(url: string, sample: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

/** Waits until the live chain is what render makes of every Node of the cluster (the policy scenarios' too). */
async function converged(what: string, server: ManagedProcess): Promise<void> {
  let last: string[] = [];
  await waitFor(
    async () => {
      const nodes = (await admin.list('v1', 'Node')).map((n) => NodeSchema.parse(n));
      const namespaces = (await admin.list('v1', 'Namespace')).map((n) => n.metadata.name);
      last = diffAgainstRender(await readLiveChain(admin), nodes, namespaces);
      return last.length === 0;
    },
    CONVERGE_MS,
    what,
    1000,
  ).catch((error: Error) => {
    throw new Error(
      `${error.message}\nstill different:\n  ${last.slice(0, 40).join('\n  ')}\nserver: ${server.tail()}`,
    );
  });
}

describe('Metacontroller v4 calls the hooks over HTTPS with the credentials the chart makes', () => {
  let hookUrl: string;
  let metricsUrl: string;
  let server: ManagedProcess;
  let tlsDir: string;
  let tokenDir: string;
  let metacontroller: Metacontroller;
  let secrets: Record<string, Record<string, string>>;
  const decode = (secret: KubeObject): Record<string, string> =>
    Object.fromEntries(
      Object.entries(secret['data'] as Record<string, string>).map(([k, v]) => [
        k,
        Buffer.from(v, 'base64').toString(),
      ]),
    );

  beforeAll(async () => {
    const [port, metricsPort] = (await freePorts(2)) as [number, number];
    hookUrl = `https://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    // The chart, pointed at a hook server on this machine whose certificate holds its address.
    const rendered = helm.template({
      set: { 'controllers.hookBaseURL': hookUrl, 'hooks.tls.extraIPAddresses[0]': '127.0.0.1' },
      includeCrds: true,
    });
    secrets = Object.fromEntries(
      rendered.filter((o) => o.kind === 'Secret').map((o) => [o.metadata.name, decode(o)] as const),
    );
    expect(Object.keys(secrets).sort()).toEqual([
      'gpustack-operator-hooks-ca',
      'gpustack-operator-hooks-tls',
      'gpustack-operator-hooks-token',
    ]);
    const served = new X509Certificate(secrets['gpustack-operator-hooks-tls']?.['tls.crt'] as string);
    expect(served.checkIP('127.0.0.1')).toBe('127.0.0.1');

    // The Secrets as the Pod would mount them, and the server as the Deployment runs it.
    tlsDir = path.join(scratch, 'hooks-tls');
    writeSecretVolume(tlsDir, secrets['gpustack-operator-hooks-tls'] as Record<string, string>);
    tokenDir = path.join(scratch, 'hooks-token');
    writeSecretVolume(tokenDir, secrets['gpustack-operator-hooks-token'] as Record<string, string>);
    server = startProcess(
      'hook-server-tls',
      process.execPath,
      [
        CLI,
        'serve',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--metrics-port',
        String(metricsPort),
        '--tls-cert',
        path.join(tlsDir, 'tls.crt'),
        '--tls-key',
        path.join(tlsDir, 'tls.key'),
        '--token-file',
        path.join(tokenDir, 'token'),
        '--previous-token-file',
        path.join(tokenDir, 'previous'),
        // Read the files every half second, not every 10 s: the rotation below waits for it.
        '--reload-interval',
        '500ms',
      ],
      plane.logsDir,
    );
    plane.adopt({ name: 'hook-server-tls', stop: () => server.stop() });
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`, { signal: AbortSignal.timeout(1000) })).ok,
      30_000,
      'the hook server is ready',
    );

    // Kueue's CRDs, Metacontroller v4 (its own CRDs), then the chart's CRDs, Secrets, controllers and chain.
    const kueue = ensureCrds('kueue');
    await admin.installCrds(
      readdirSync(kueue.dir)
        .filter((f) => f.startsWith('kueue.x-k8s.io_') && f.endsWith('.yaml'))
        .map((f) => path.join(kueue.dir, f)),
    );
    metacontroller = await startMetacontroller({ kubeconfig: plane.kubeconfig, logsDir: plane.logsDir, plane });
    // A Metacontroller that knows the hooks' credentials (v4.16 or later): its CRDs have the fields.
    const controllerCrd = await admin.get(
      'apiextensions.k8s.io/v1',
      'CustomResourceDefinition',
      'compositecontrollers.metacontroller.k8s.io',
    );
    expect(JSON.stringify(controllerCrd)).toContain('"caBundle"');
    const crds = rendered.filter((o) => o.kind === 'CustomResourceDefinition');
    for (const crd of crds) await admin.applyObject(crd);
    await admin.waitForCrds(crds.map((c) => c.metadata.name));
    for (const object of rendered.filter((o) =>
      ['Secret', 'CompositeController', 'DecoratorController', 'SchedulingChain'].includes(o.kind),
    ))
      await admin.applyObject(object);
  }, 600_000);

  it('the chain converges: every hook call went over HTTPS with the bearer token', async () => {
    for (const node of exampleNodes('reference-4-node.yaml')) await createNode(admin, node);
    await converged('the live chain matches render', server);
    // The server refused nobody: Metacontroller always brought the token.
    expect(server.tail(1000)).not.toContain('caller refused');
  });

  it('a caller without the token, or with another, gets 401 and nothing else; with it, an answer', async () => {
    const ca = secrets['gpustack-operator-hooks-tls']?.['ca.crt'] as string;
    for (const token of [undefined, 'not-the-token']) {
      const answer = await probe(hookUrl, ca, token);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({ error: { code: 'Unauthorized', message: 'credentials required' } });
    }
    const token = secrets['gpustack-operator-hooks-token']?.['token'] as string;
    expect((await probe(hookUrl, ca, token)).status).toBe(200);
    expect(await counter(metricsUrl, 'gpustack_hook_refused_total{reason="no bearer token"}')).toBe(1);
    expect(await counter(metricsUrl, 'gpustack_hook_refused_total{reason="wrong bearer token"}')).toBe(1);
  });

  it('a rotated serving certificate (same CA) is served to new connections and the chain keeps syncing', async () => {
    const ca = secrets['gpustack-operator-hooks-tls']?.['ca.crt'] as string;
    const before = (await probe(hookUrl, ca)).fingerprint;
    // A new serving certificate signed by the chart's CA, as an upgrade after deleting the Secret
    // or cert-manager's renewal makes; written as the kubelet updates a Secret volume.
    const caDir = path.join(scratch, 'ca');
    mkdirSync(caDir, { recursive: true });
    writeFileSync(path.join(caDir, 'ca.crt'), secrets['gpustack-operator-hooks-ca']?.['tls.crt'] as string);
    writeFileSync(path.join(caDir, 'ca.key'), secrets['gpustack-operator-hooks-ca']?.['tls.key'] as string);
    const next = makeLeaf(
      caDir,
      'rotated',
      { cert: '', key: '', certFile: path.join(caDir, 'ca.crt'), keyFile: path.join(caDir, 'ca.key') },
      'server',
    );
    writeSecretVolume(tlsDir, { 'tls.crt': next.cert, 'tls.key': next.key, 'ca.crt': ca });
    const rotated = new X509Certificate(next.cert).fingerprint256;
    expect(rotated).not.toBe(before);
    await waitFor(
      async () => (await probe(hookUrl, ca)).fingerprint === rotated,
      30_000,
      'the rotated certificate',
      250,
    );
    // From here on only Metacontroller opens connections to the hook port, and only the new
    // certificate is served there: new handshakes below are Metacontroller verifying it.
    const handshakes = await counter(metricsUrl, 'gpustack_hook_tls_handshakes_total');

    // A change the chain must follow: a new T4 node joins the existing pool.
    const [t4] = exampleNodes('reference-4-node.yaml').filter((n) =>
      Object.keys(n.metadata.labels ?? {}).some((k) => k.includes('tesla-t4')),
    );
    expect(t4).toBeDefined();
    const joined = structuredClone(t4) as NonNullable<typeof t4>;
    joined.metadata.name = 'trust-t4-after-rotation';
    await createNode(admin, joined);
    await converged('the live chain follows the new node after the rotation', server);
    expect(await counter(metricsUrl, 'gpustack_hook_tls_handshakes_total')).toBeGreaterThan(handshakes);
    expect(await counter(metricsUrl, 'gpustack_hook_credential_reloads_total{result="ok"}')).toBeGreaterThanOrEqual(1);
    expect(server.tail(1000)).toContain('credentials reloaded');
  });

  it('a token rotation: with the old token as `previous`, every hook keeps answering 200 until Metacontroller reads the new one, and after', async () => {
    const ca = secrets['gpustack-operator-hooks-tls']?.['ca.crt'] as string;
    const old = secrets['gpustack-operator-hooks-token']?.['token'] as string;
    const next = 'rotated-token-0123456789abcdef0123456789abcdef';
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const wrong = 'gpustack_hook_refused_total{reason="wrong bearer token"}';
    const previous = 'gpustack_hook_previous_token_total';
    const refusedBefore = await counter(metricsUrl, wrong);
    let ours = 0; // 401s of this test's own probes with the old token
    let oursPrevious = 0; // and the probes the server let in as the previous token
    const join = async (name: string, what: string) => {
      const [t4] = exampleNodes('reference-4-node.yaml').filter((n) =>
        Object.keys(n.metadata.labels ?? {}).some((k) => k.includes('tesla-t4')),
      );
      const joined = structuredClone(t4) as NonNullable<typeof t4>;
      joined.metadata.name = name;
      await createNode(admin, joined);
      await converged(what, server);
    };

    // Step 1: the Secret gets the new token and keeps the old one as `previous` (one write); the
    // volume follows, as the kubelet updates it.
    await admin.mergePatch(
      'v1',
      'Secret',
      'gpustack-operator-hooks-token',
      { data: { token: b64(next), previous: b64(old) } },
      NAMESPACE,
    );
    writeSecretVolume(tokenDir, { token: next, previous: old });
    // Step 2: the server has read both.
    // Until the server has read the new token, this probe is refused: those 401s are ours.
    await waitFor(
      async () => {
        const accepted = (await probe(hookUrl, ca, next)).status === 200;
        if (!accepted) ours++;
        return accepted;
      },
      30_000,
      'the new token accepted',
      250,
    );
    expect((await probe(hookUrl, ca, old)).status).toBe(200);
    const previousBefore = await counter(metricsUrl, previous);
    // Metacontroller has not read the new token: it syncs a change with the old one, let in.
    await join('trust-t4-token-old', 'the chain follows a node joining while Metacontroller sends the old token');
    expect(await counter(metricsUrl, previous)).toBeGreaterThan(previousBefore + 1);
    expect(await counter(metricsUrl, wrong)).toBe(refusedBefore + ours);

    // Step 3: Metacontroller restarted reads the new token.
    await metacontroller.stop();
    metacontroller = await startMetacontroller({ kubeconfig: plane.kubeconfig, logsDir: plane.logsDir, plane });
    await join('trust-t4-token-new', 'the chain follows a node joining after Metacontroller read the new token');
    const previousAfterRestart = await counter(metricsUrl, previous);

    // Step 5: the old token leaves the Secret and the volume; only the new one gets in.
    await admin.mergePatch('v1', 'Secret', 'gpustack-operator-hooks-token', { data: { previous: null } }, NAMESPACE);
    writeSecretVolume(tokenDir, { token: next });
    await waitFor(
      async () => {
        const refused = (await probe(hookUrl, ca, old)).status === 401;
        if (refused) ours++;
        else oursPrevious++; // let in as `previous` until the server has read the volume
        return refused;
      },
      30_000,
      'the old token refused',
      250,
    );
    await join('trust-t4-token-only-new', 'the chain follows a node joining once only the new token is accepted');
    // Metacontroller sent the new token throughout: the only 401s were this test's probe, and
    // no call but this test's own probes used the old token after the restart.
    expect(await counter(metricsUrl, wrong)).toBe(refusedBefore + ours);
    expect(await counter(metricsUrl, previous)).toBe(previousAfterRestart + oursPrevious);
  });
});
