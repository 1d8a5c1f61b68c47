/**
 * Every request in `examples/hooks/` is valid for its route: POSTed through the whole app it gets a
 * 200 whose body passes the strict response schema. The examples also stay in step with `render`
 * of `examples/clusters/reference-4-node.yaml`, so what the README promises is what the server says.
 */
import { DEFAULT_PORT } from '../../src/cli/serve.js';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  AdmissionCheckSchema,
  ChainSettingsOutputSchema,
  NodeShardOutputSchema,
  NodeShardStatusSchema,
  ClusterQueueSchema,
  CompositeSyncResponseSchema,
  CustomizeResponseSchema,
  DecoratorSyncResponseSchema,
  InstanceTypeOutputSchema,
  LocalQueueSchema,
  NodeSchema,
  ResourceFlavorSchema,
  TopologySchema,
  type CompositeSyncResponse,
  type CustomizeResponse,
  type DecoratorSyncResponse,
} from '../../src/k8s/index.js';
import { DeviceClassSchema } from '../../src/dra/index.js';
import { createApp, hookRoutes } from '../../src/server/index.js';
import { renderChain } from '../../src/render/index.js';
import { extractChainView } from '../../src/nodefeature/index.js';
import {
  EXAMPLES_DIR,
  EXAMPLE_ROUTES,
  exampleBody,
  exampleText,
  nullPaths,
  post,
  type ExampleFile,
  type InMemoryApp,
} from './helpers.js';

const NOW = new Date('2025-06-12T09:00:00.250Z');
const NOW_TEXT = '2025-06-12T09:00:00Z';

const SIX_FLAVORS = [
  'gpustack-generic-linux-amd64-16c',
  'gpustack-generic-linux-amd64-48c',
  'gpustack-generic-linux-amd64-4c',
  'gpustack-nvidia-a10g-linux-amd64-1d',
  'gpustack-nvidia-tesla-t4-linux-amd64-1d',
  'gpustack-nvidia-tesla-t4-linux-amd64-4d',
];
const T4 = 'gpustack-nvidia-tesla-t4-linux-amd64';
const T4_ENTRANCE = 'gpustack-fnv64-199cb01104a7efc8';

const CHILD_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  AdmissionCheck: AdmissionCheckSchema,
  ChainSettings: ChainSettingsOutputSchema,
  ClusterQueue: ClusterQueueSchema,
  DeviceClass: DeviceClassSchema,
  InstanceType: InstanceTypeOutputSchema,
  LocalQueue: LocalQueueSchema,
  NodeShard: NodeShardOutputSchema,
  ResourceFlavor: ResourceFlavorSchema,
  Topology: TopologySchema,
};

function parseComposite(json: unknown): CompositeSyncResponse {
  const response = CompositeSyncResponseSchema.parse(json);
  for (const child of response.children) {
    const schema = CHILD_SCHEMAS[child.kind];
    if (schema === undefined) throw new Error(`unexpected child kind ${child.kind}`);
    schema.parse(child);
  }
  return response;
}

function names(response: CompositeSyncResponse, kind: string): string[] {
  return response.children
    .filter((c) => c.kind === kind)
    .map((c) => (c.metadata.namespace ? `${c.metadata.namespace}/${c.metadata.name}` : c.metadata.name));
}

function referenceNodes() {
  const list = parse(
    readFileSync(new URL('../../examples/clusters/reference-4-node.yaml', import.meta.url), 'utf8'),
  ) as { items: unknown[] };
  return list.items.map((item) => NodeSchema.parse(item));
}

/**
 * apiVersion, kind, name, labels, annotations and spec: what we emit, without what the API server
 * adds and without the `controller-uid` label Metacontroller adds (`generateSelector: true`).
 */
function ownedPart(object: {
  apiVersion?: unknown;
  kind?: unknown;
  metadata: Record<string, unknown>;
  spec?: unknown;
}) {
  const { name, namespace, annotations } = object.metadata;
  const { 'controller-uid': _uid, ...labels } = (object.metadata['labels'] ?? {}) as Record<string, string>;
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name, namespace, labels, annotations },
    spec: object.spec,
  };
}

describe('examples/hooks', () => {
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp({ clock: () => NOW });
  });

  it('has exactly one example request per hook route', () => {
    expect(EXAMPLE_ROUTES.map((e) => e.route).sort()).toEqual(hookRoutes().sort());
    expect(
      readdirSync(EXAMPLES_DIR)
        .filter((f) => f.endsWith('.json'))
        .sort(),
    ).toEqual(EXAMPLE_ROUTES.map((e) => e.file).sort());
    for (const { route, file } of EXAMPLE_ROUTES) {
      const [, , controller, hook] = route.split('/');
      expect(file).toBe(`${controller}.${hook}.json`);
    }
  });

  it.each(EXAMPLE_ROUTES)(
    '$file is sent by the controller whose manifest names $route, in the v2 form',
    ({ route, file, kind }) => {
      const body = exampleBody(file);
      const name = (body['controller'] as { metadata: { name: string } }).metadata.name;
      const [, , controller, hook] = route.split('/');
      const manifest = parse(
        readFileSync(new URL(`../../manifests/compositecontrollers/${controller}.yaml`, import.meta.url), 'utf8'),
      ) as {
        metadata: { name: string };
        spec: { hooks: Record<string, { version?: string; webhook: { url: string } }> };
      };

      expect(name).toBe(manifest.metadata.name);
      expect(manifest.spec.hooks[hook ?? '']).toMatchObject({
        version: 'v2',
        webhook: { url: expect.stringMatching(new RegExp(`${route}$`)) },
      });
      expect(Object.keys(body).sort()).toEqual(
        kind === 'customize' ? ['controller', 'parent'] : ['children', 'controller', 'finalizing', 'parent', 'related'],
      );
    },
  );

  it('lists a curl line for every example in the README, on the port serve listens on by default', () => {
    const readme = readFileSync(`${EXAMPLES_DIR}README.md`, 'utf8');
    const port = DEFAULT_PORT;
    for (const { route, file } of EXAMPLE_ROUTES) {
      expect(readme).toContain(
        `curl -s -H 'content-type: application/json' -d @examples/hooks/${file} localhost:${port}${route}`,
      );
    }
    expect(readme.match(/localhost:\d+/g)?.filter((address) => address !== `localhost:${port}`)).toEqual([]);
  });

  it.each(EXAMPLE_ROUTES)('$file → 200 on $route with a strict $kind response', async ({ route, file, kind }) => {
    const answer = await post(app, route, exampleText(file));

    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    const schema = {
      customize: CustomizeResponseSchema,
      decorator: DecoratorSyncResponseSchema,
      composite: CompositeSyncResponseSchema,
    }[kind];
    expect(schema.safeParse(answer.json).success, answer.text).toBe(true);
    if (kind === 'composite') parseComposite(answer.json);
    if (kind !== 'decorator') expect(nullPaths(answer.json)).toEqual([]);
  });

  describe('happy path of each route', () => {
    async function answerOf<T>(route: string, file: ExampleFile, schema: z.ZodType<T>): Promise<T> {
      const answer = await post(app, route, exampleText(file));
      expect(answer.status, answer.text).toBe(200);
      return schema.parse(answer.json);
    }

    it('node-profile customize relates the ChainSettings default', async () => {
      const response: CustomizeResponse = await answerOf(
        '/hooks/node-profile/customize',
        'node-profile.customize.json',
        CustomizeResponseSchema,
      );

      expect(response).toEqual({
        relatedResources: [
          { apiVersion: 'worker.gpustack.ai/v1alpha1', resource: 'chainsettings', names: ['default'] },
        ],
      });
    });

    it('node-shard customize relates the NodeProfiles of its shard only', async () => {
      const response = await answerOf(
        '/hooks/node-shard/customize',
        'node-shard.customize.json',
        CustomizeResponseSchema,
      );

      expect(response).toEqual({
        relatedResources: [
          {
            apiVersion: 'worker.gpustack.ai/v1alpha1',
            resource: 'nodeprofiles',
            labelSelector: {
              matchLabels: { 'app.kubernetes.io/part-of': 'gpustack-operator', 'gpustack.ai/node-shard': '31' },
            },
          },
        ],
      });
    });

    it('node-shard sync summarises the shard as groups with counts, and has no children', async () => {
      const response = await answerOf('/hooks/node-shard/sync', 'node-shard.sync.json', CompositeSyncResponseSchema);

      expect(response.children).toEqual([]);
      const status = NodeShardStatusSchema.parse(response.status);
      expect(status.profiles).toBe(1);
      expect(status.groups).toHaveLength(1);
      expect(status.groups[0]).toMatchObject({
        nodes: 1,
        first: 'node-a10g',
        labels: { 'acceleratable.feature.gpustack.ai/nvidia-a10g.count': '1', 'gpustack.ai/managed': 'true' },
      });
    });

    it('node-profile sync labels node-t4-b generic and removes the stale CPU-model labels with null', async () => {
      const response: DecoratorSyncResponse = await answerOf(
        '/hooks/node-profile/sync',
        'node-profile.sync.json',
        DecoratorSyncResponseSchema,
      );

      expect(response.attachments?.map((a) => `${a.kind}/${a.metadata.name}`)).toEqual(['NodeProfile/node-t4-b']);
      expect(response).toEqual({
        attachments: response.attachments,
        labels: {
          'acceleratable.feature.gpustack.ai/nvidia-tesla-t4.sliced.cores-percentage': '12800',
          'acceleratable.feature.gpustack.ai/nvidia-tesla-t4.sliced.memory-mib': '15360',
          'acceleratable.feature.gpustack.ai/nvidia-tesla-t4.sliced.memory-percentage': '100',
          'acceleratable.feature.gpustack.ai/nvidia-tesla-t4.sliced.units': '1600000',
          'general.feature.gpustack.ai/generic': 'true',
          'general.feature.gpustack.ai/generic.count': '48',
          'general.feature.gpustack.ai/intel': null,
          'general.feature.gpustack.ai/intel-xeon-platinum-8259cl': null,
          'general.feature.gpustack.ai/intel-xeon-platinum-8259cl.count': null,
        },
      });
    });

    it('scheduling-chain customize relates the NodeProfiles in no shard and the managed Nodes without one', async () => {
      const response = await answerOf(
        '/hooks/scheduling-chain/customize',
        'scheduling-chain.customize.json',
        CustomizeResponseSchema,
      );

      expect(response).toEqual({
        relatedResources: [
          {
            apiVersion: 'worker.gpustack.ai/v1alpha1',
            resource: 'nodeprofiles',
            labelSelector: {
              matchLabels: { 'app.kubernetes.io/part-of': 'gpustack-operator' },
              matchExpressions: [{ key: 'gpustack.ai/node-shard', operator: 'DoesNotExist' }],
            },
          },
          {
            apiVersion: 'v1',
            resource: 'nodes',
            labelSelector: {
              matchLabels: { 'gpustack.ai/managed': 'true' },
              matchExpressions: [{ key: 'gpustack.ai/profiled', operator: 'DoesNotExist' }],
            },
          },
        ],
      });
    });

    it('scheduling-chain sync derives six flavors, three instance types and the admission check from the four nodes', async () => {
      const response = parseComposite(
        await answerOf('/hooks/scheduling-chain/sync', 'scheduling-chain.sync.json', CompositeSyncResponseSchema),
      );

      expect(names(response, 'ResourceFlavor')).toEqual(SIX_FLAVORS);
      expect(names(response, 'InstanceType')).toEqual([
        'gpustack-generic-linux-amd64',
        'gpustack-nvidia-a10g-linux-amd64',
        T4,
      ]);
      expect(names(response, 'AdmissionCheck')).toEqual(['gpustack-node-devices']);
      expect(response.status).toMatchObject({
        managedNodes: 4,
        pools: [
          { name: 'gpustack-generic-linux-amd64', nodes: 4 },
          { name: 'gpustack-nvidia-a10g-linux-amd64', nodes: 1 },
          {
            name: T4,
            nodes: 2,
            flavors: ['gpustack-nvidia-tesla-t4-linux-amd64-1d', 'gpustack-nvidia-tesla-t4-linux-amd64-4d'],
          },
        ],
        conditions: expect.arrayContaining([
          expect.objectContaining({ type: 'Ready', status: 'True', lastTransitionTime: NOW_TEXT }),
        ]),
      });
    });

    it('instance-type customize relates the ChainSettings, node flavors, namespaces, the admission check and the Topologies', async () => {
      const response = await answerOf(
        '/hooks/instance-type/customize',
        'instance-type.customize.json',
        CustomizeResponseSchema,
      );

      expect(response.relatedResources.map((r) => r.resource)).toEqual([
        'chainsettings',
        'resourceflavors',
        'namespaces',
        'admissionchecks',
        'topologies',
      ]);
    });

    it('instance-type sync gives the T4 ClusterQueue both T4 flavors and a LocalQueue in default and team-a only', async () => {
      const response = parseComposite(
        await answerOf('/hooks/instance-type/sync', 'instance-type.sync.json', CompositeSyncResponseSchema),
      );

      expect(names(response, 'ClusterQueue')).toEqual([T4]);
      expect(names(response, 'LocalQueue')).toEqual([`default/${T4_ENTRANCE}`, `team-a/${T4_ENTRANCE}`]);
      const queue = ClusterQueueSchema.parse(response.children[0]);
      expect(queue.spec.resourceGroups?.[0]?.flavors.map((f) => [f.name, f.resources[0]?.nominalQuota])).toEqual([
        ['gpustack-nvidia-tesla-t4-linux-amd64-1d', '1600k'],
        ['gpustack-nvidia-tesla-t4-linux-amd64-4d', '6400k'],
      ]);
      expect(queue.spec.admissionChecksStrategy?.admissionChecks.map((c) => c.name)).toEqual(['gpustack-node-devices']);
      expect(response.status).toMatchObject({ entrance: T4_ENTRANCE, capacity: '5' });
    });

    it('instance-type finalize removes every child and holds the parent until they are gone', async () => {
      const response = await answerOf(
        '/hooks/instance-type/finalize',
        'instance-type.finalize.json',
        CompositeSyncResponseSchema,
      );

      expect(response).toMatchObject({
        children: [],
        finalized: false,
        resyncAfterSeconds: 5,
        status: { phase: 'Terminating' },
      });
    });

    it('node-devices-check sync marks our admission check Active at the request time', async () => {
      const response = await answerOf(
        '/hooks/node-devices-check/sync',
        'node-devices-check.sync.json',
        DecoratorSyncResponseSchema,
      );

      expect(response).toEqual({
        status: {
          conditions: [
            {
              type: 'Active',
              status: 'True',
              reason: 'Ready',
              lastTransitionTime: NOW_TEXT,
              message: 'the gpustack-node-devices checker answers for this check',
            },
          ],
        },
      });
    });
  });

  describe('in step with render of examples/clusters/reference-4-node.yaml', () => {
    const rendered = renderChain({ nodes: referenceNodes(), namespaces: ['default', 'team-a'] }, { now: NOW_TEXT });
    if (!rendered.ok) throw new Error(`render refused: ${rendered.error.message}`);

    it('relates each reference node to scheduling-chain sync as the NodeProfile of the labels node-profile gives it', () => {
      const related = (
        exampleBody('scheduling-chain.sync.json')['related'] as Record<
          string,
          Record<string, { spec: { labels: Record<string, string> } }>
        >
      )['NodeProfile.worker.gpustack.ai/v1alpha1'];
      if (related === undefined) throw new Error('no related NodeProfiles');
      const expected = Object.fromEntries(
        referenceNodes().map((node) => {
          const labels: Record<string, string> = { ...node.metadata.labels };
          for (const [key, value] of Object.entries(
            rendered.nodes.find((n) => n.name === node.metadata.name)?.labels ?? {},
          )) {
            if (value === null) delete labels[key];
            else labels[key] = value;
          }
          return [node.metadata.name, extractChainView({ name: node.metadata.name, labels }).labels];
        }),
      );

      expect(Object.fromEntries(Object.entries(related).map(([key, profile]) => [key, profile.spec.labels]))).toEqual(
        expected,
      );
      for (const labels of Object.values(related).map((n) => n.spec.labels)) {
        expect(labels).toMatchObject({ 'gpustack.ai/managed': 'true', 'general.feature.gpustack.ai/generic': 'true' });
        expect(labels['general.feature.gpustack.ai/generic.count']).toMatch(/^\d+$/);
      }
    });

    it('relates to instance-type sync the flavors scheduling-chain sync emits, and the InstanceType it derives', async () => {
      const chain = parseComposite(
        (await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'))).json,
      );
      const request = exampleBody('instance-type.sync.json') as {
        parent: { metadata: Record<string, unknown>; spec: unknown };
        related: Record<string, Record<string, { metadata: Record<string, unknown> }>>;
      };
      const emittedFlavors = chain.children.filter((c) => c.kind === 'ResourceFlavor');
      const relatedFlavors = Object.values(request.related['ResourceFlavor.kueue.x-k8s.io/v1beta2'] ?? {});

      expect(relatedFlavors.map(ownedPart)).toEqual(emittedFlavors.map(ownedPart));
      expect(ownedPart(request.parent)).toEqual(
        ownedPart(chain.children.find((c) => c.kind === 'InstanceType' && c.metadata.name === T4) as never),
      );
      expect(Object.keys(request.related['Namespace.v1'] ?? {}).sort()).toEqual([
        'default',
        'gpustack-system',
        'kube-system',
        'team-a',
      ]);
    });

    it('answers instance-type sync with the ClusterQueue and LocalQueues render prints for the T4 pool', async () => {
      const answer = parseComposite(
        (await post(app, '/hooks/instance-type/sync', exampleText('instance-type.sync.json'))).json,
      );
      const fromRender = rendered.objects.filter(
        (o) =>
          (o.kind === 'ClusterQueue' && o.metadata.name === T4) ||
          (o.kind === 'LocalQueue' && (o['spec'] as { clusterQueue?: string }).clusterQueue === T4),
      );

      expect(answer.children).toEqual(fromRender);
    });
  });
});
