/**
 * The whole checker against a streaming HTTP API server on 127.0.0.1: it waits for every store,
 * writes our entry alone by server-side apply on the status subresource, is not woken into a
 * second write by its own echo, follows a Pod going away, retries failed writes, re-decides on
 * the periodic resync, skips malformed objects, counts cards by the SchedulingChain's resource
 * names (never by guessed settings) and reports its watches on /healthz.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createAdmissionMetrics,
  kubeCheckWriter,
  serveHealth,
  startChecker,
  type Checker,
  type CheckerOptions,
} from '../../src/admission/index.js';
import { ApiError, createKubeApi } from '../../src/api-client/index.js';
import { CHECK, H100_FLAVOR, boundPod, deviceFlavor, gpuNode, gpus, makeWorkload } from '../placement/builders.js';
import { allocatedClaim, claimTemplate, nodePool } from '../dra/builders.js';
import { buildCordonRules, buildDeviceLedger } from '../../src/dra/index.js';
import { eventually, kubeConfigFor, recordingLogger, startFakeKube, type FakeKube } from './support.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const STATUS_PATH =
  '/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/train/status?fieldManager=gpustack-node-devices&force=true';
const RETRY_MESSAGE = `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`;

type Json = Record<string, unknown>;
const json = (value: unknown): Json => structuredClone(value) as Json;

let api: FakeKube;
let checker: Checker | undefined;
let now = T0;
let passes = 0;

beforeEach(async () => {
  api = await startFakeKube();
  now = T0;
  passes = 0;
  checker = undefined;
});
afterEach(async () => {
  await checker?.stop();
  await api.close();
});

/** The 4 + 4 scene: two 8-card nodes with 4 cards busy on each, and a Workload asking 8 for one pod. */
function seedFragmentedPool(): void {
  api.upsert('resourceflavors', json(deviceFlavor()));
  api.upsert('nodes', json(gpuNode('gpu-a', 8)));
  api.upsert('nodes', json(gpuNode('gpu-b', 8)));
  api.upsert('pods', json(boundPod('busy-a', 'gpu-a', [gpus(4)])));
  api.upsert('pods', json(boundPod('busy-b', 'gpu-b', [gpus(4)])));
  api.upsert(
    'workloads',
    json(
      makeWorkload('train')
        .podSet('workers', 1, [gpus(8)])
        .listedChecks('other-check', CHECK)
        .obj(),
    ),
  );
}

function start(extra: Partial<CheckerOptions> = {}): { checker: Checker; logger: ReturnType<typeof recordingLogger> } {
  const logger = recordingLogger();
  checker = startChecker({
    api: createKubeApi(kubeConfigFor(api.url)),
    logger,
    debounceMs: 5,
    backoff: { initialMs: 5, maxMs: 20 },
    resyncMs: 3_600_000,
    clock: () => new Date(now),
    onPass: () => {
      passes++;
    },
    ...extra,
  });
  return { checker, logger };
}

function ourEntry(): Json | undefined {
  const workload = api.get('workloads', 'team-a/train') as { status?: { admissionChecks?: Json[] } } | undefined;
  return workload?.status?.admissionChecks?.find((c) => c['name'] === CHECK);
}

/** Waits for one more pass than now, after the caller's change. */
async function nextPass(what: string): Promise<void> {
  const seen = passes;
  await eventually(() => passes > seen, what);
}

describe('checker: the write', () => {
  it('server-side applies our entry alone on the status subresource; its own echo causes no second write; a freed node turns it Ready', async () => {
    seedFragmentedPool();
    const { logger } = start();
    await eventually(() => api.patches().length === 1, 'the Retry write');
    const [patch] = api.patches();
    expect(patch?.path).toBe(STATUS_PATH);
    expect(patch?.contentType).toBe('application/apply-patch+yaml');
    expect(patch?.body).toEqual({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: 'train', namespace: 'team-a' },
      status: {
        admissionChecks: [
          {
            name: CHECK,
            state: 'Retry',
            message: RETRY_MESSAGE,
            requeueAfterSeconds: 30,
            lastTransitionTime: '2026-03-01T12:00:00Z',
          },
        ],
      },
    });
    // Kueue's entry for the other check is untouched by the apply.
    const other = (
      api.get('workloads', 'team-a/train') as { status: { admissionChecks: Json[] } }
    ).status.admissionChecks.find((c) => c['name'] === 'other-check');
    expect(other?.['state']).toBe('Pending');

    // The echo arrives (a MODIFIED event); a later unrelated change makes another pass: no new write.
    await eventually(() => checker?.health().healthy === true, 'all watches live');
    api.upsert('nodes', json(gpuNode('gpu-c-cpu', 0)));
    await nextPass('a pass after the echo');
    expect(api.patches()).toHaveLength(1);

    now = T0 + 60_000;
    api.remove('pods', 'team-b/busy-a');
    await eventually(() => api.patches().length === 2, 'the Ready write');
    expect(ourEntry()).toEqual({
      name: CHECK,
      state: 'Ready',
      message: 'the assigned flavor pool has enough free cards to place every pod',
      lastTransitionTime: '2026-03-01T12:01:00Z',
    });
    const written = () =>
      logger.entries.filter((e) => e.message === 'admission check written').map((e) => e.fields['state']);
    await eventually(() => written().length === 2, 'two verdict lines');
    expect(written()).toEqual(['Retry', 'Ready']);
  });

  it('decides nothing until every collection has listed: a Workload seen before the Pods would look placeable', async () => {
    seedFragmentedPool();
    api.failLists('pods', 3);
    start();
    await eventually(() => api.lists('pods') >= 3, 'pods lists failing');
    expect(api.patches()).toEqual([]);
    expect(checker?.health()).toMatchObject({ healthy: false, down: ['pods'] });
    await eventually(() => api.patches().length === 1, 'the write once pods listed');
    expect(ourEntry()?.['state']).toBe('Retry');
  });
});

describe('checker: retries and resync', () => {
  it('a write that fails with 500 is retried after a backoff, without any new event', async () => {
    seedFragmentedPool();
    api.failPatches(500, 2);
    const { logger } = start();
    await eventually(() => ourEntry()?.['state'] === 'Retry', 'written on the third try');
    expect(api.patches()).toHaveLength(3);
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.message)).toEqual([
      'admission check write failed; will retry',
      'admission check write failed; will retry',
    ]);
  });

  it("a write answered 429 is retried no sooner than the server's Retry-After, not after the 5 ms backoff", async () => {
    seedFragmentedPool();
    const tries: number[] = [];
    const writer = kubeCheckWriter(createKubeApi(kubeConfigFor(api.url)), CHECK);
    start({
      backoff: { initialMs: 5, maxMs: 1000 },
      writer: {
        write: (ref, entry) => {
          tries.push(performance.now());
          return tries.length === 1
            ? Promise.reject(new ApiError(429, 'PATCH', '/apis/kueue.x-k8s.io/…', 'TooManyRequests', 300))
            : writer.write(ref, entry);
        },
      },
    });
    await eventually(() => ourEntry()?.['state'] === 'Retry', 'written on the second try');
    expect(tries).toHaveLength(2);
    // A timer never fires early: the retry came after the 300 ms asked for (a 5 ms backoff otherwise).
    expect((tries[1] ?? 0) - (tries[0] ?? 0)).toBeGreaterThanOrEqual(295);
  });

  it('a 409 is not retried by backoff, but the periodic resync decides again', async () => {
    seedFragmentedPool();
    api.failPatches(409, 1);
    const { logger } = start({ resyncMs: 50 });
    await eventually(() => ourEntry()?.['state'] === 'Retry', 'written after a resync');
    expect(api.patches()).toHaveLength(2);
    expect(logger.entries.find((e) => e.level === 'warn')?.fields['status']).toBe(409);
  });
});

describe('checker: malformed objects', () => {
  it('a Workload or Pod that fails its schema is logged and skipped; the valid Workload still gets its verdict', async () => {
    seedFragmentedPool();
    api.upsert('workloads', { metadata: { name: 'broken', namespace: 'team-a' }, spec: { podSets: 'not a list' } });
    api.upsert('pods', {
      metadata: { name: 'broken', namespace: 'team-b' },
      spec: { containers: [{ resources: { requests: { 'nvidia.com/gpu': { n: 8 } } } }] },
    });
    const { logger } = start();
    await eventually(() => api.patches().length === 1, 'the write for the valid Workload');
    expect(api.patches()[0]?.path).toBe(STATUS_PATH);
    expect(
      logger.entries
        .filter((e) => e.level === 'warn')
        .map((e) => `${String(e.fields['resource'])} ${String(e.fields['object'])}`)
        .sort(),
    ).toEqual(['pods team-b/broken', 'workloads team-a/broken']);
  });
});

describe('checker: the SchedulingChain', () => {
  const RENAMED = 'nvidia.com/gpu-h100';
  const chain = (spec: unknown) => ({
    apiVersion: 'worker.gpustack.ai/v1alpha1',
    kind: 'SchedulingChain',
    metadata: { name: 'default' },
    spec,
  });
  const renamed = chain({ manufacturers: [{ name: 'nvidia', resourceName: RENAMED }] });
  const NO_DEMAND = 'no pod set asks for whole accelerator cards; nothing to place';
  const FITS = 'the assigned flavor pool has enough free cards to place every pod';

  /** The 4 + 4 scene in the renamed resource. */
  function seedRenamedPool(): void {
    api.upsert('resourceflavors', json(deviceFlavor()));
    api.upsert('nodes', json(gpuNode('gpu-a', 8)));
    api.upsert('nodes', json(gpuNode('gpu-b', 8)));
    api.upsert('pods', json(boundPod('busy-a', 'gpu-a', [gpus(4, 'requests', RENAMED)])));
    api.upsert('pods', json(boundPod('busy-b', 'gpu-b', [gpus(4, 'requests', RENAMED)])));
    api.upsert(
      'workloads',
      json(
        makeWorkload('train')
          .podSet('workers', 1, [gpus(8, 'requests', RENAMED)])
          .obj(),
      ),
    );
  }

  it('counts the resource the chain renames: Retry; without the override the same pod set is no demand, Ready', async () => {
    seedRenamedPool();
    api.upsert('schedulingchains', json(renamed));
    start();
    await eventually(() => api.patches().length === 1, 'the Retry write');
    expect(ourEntry()).toMatchObject({ state: 'Retry', message: RETRY_MESSAGE });

    // The chain drops the override: a watch event, and the table's `nvidia.com/gpu` sees no cards asked.
    now = T0 + 60_000;
    api.upsert('schedulingchains', json(chain({})));
    await eventually(() => api.patches().length === 2, 'the write with default settings');
    expect(ourEntry()).toMatchObject({ state: 'Ready', message: NO_DEMAND });
  });

  it('an invalid spec decides nothing (one warning) until corrected; invalid again keeps the last valid names, not the defaults', async () => {
    seedRenamedPool();
    api.upsert('schedulingchains', json(chain({ manufacturers: [{ name: 'nvidia', resourceName: '' }] })));
    const { logger } = start();
    const warnings = () =>
      logger.entries.filter(
        (e) => e.level === 'warn' && String(e.message).startsWith('SchedulingChain spec is invalid'),
      );
    await eventually(() => warnings().length === 1, 'the invalid-spec warning');
    expect(warnings()[0]?.fields['keeping']).toBe('no verdicts');
    // Another change makes another pass: still nothing written, still one warning.
    api.upsert('nodes', json(gpuNode('gpu-c-cpu', 0)));
    await eventually(() => checker?.health().healthy === true, 'all five watches live');
    expect(api.patches()).toEqual([]);

    api.upsert('schedulingchains', json(renamed));
    await eventually(() => api.patches().length === 1, 'the Retry write once the spec is valid');
    expect(ourEntry()).toMatchObject({ state: 'Retry', message: RETRY_MESSAGE });

    api.upsert('schedulingchains', json(chain({ mixedOnNode: 'yes' })));
    await eventually(() => warnings().length === 2, 'the second warning');
    expect(warnings()[1]?.fields['keeping']).toBe('last valid settings');
    // A renamed card frees: decided with the kept names (fits), not the defaults (no demand).
    now = T0 + 60_000;
    api.remove('pods', 'team-b/busy-a');
    await eventually(() => api.patches().length === 2, 'the Ready write');
    expect(ourEntry()).toMatchObject({ state: 'Ready', message: FITS });
    expect(warnings()).toHaveLength(2);
  });
});

describe('checker: /healthz', () => {
  let health: Server | undefined;
  afterEach(async () => {
    health?.closeAllConnections();
    await new Promise((resolve) => health?.close(resolve) ?? resolve(undefined));
  });

  it('200 while every watch is live; 503 naming the watch that cannot relist; 200 again once it can', async () => {
    seedFragmentedPool();
    const running = start({ graceMs: 0 }).checker;
    health = await serveHealth({ report: () => running.health(), port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(health.address() as AddressInfo).port}/healthz`;
    await eventually(async () => (await fetch(url)).status === 200, 'healthy');

    api.failLists('pods', 1_000_000);
    api.dropWatches();
    await eventually(async () => {
      const res = await fetch(url);
      const body = (await res.json()) as { down: string[] };
      return res.status === 503 && body.down.join() === 'pods';
    }, '503 naming pods');

    api.failLists('pods', 0);
    await eventually(async () => (await fetch(url)).status === 200, 'healthy again');
    expect((await fetch(url.replace('/healthz', '/other'))).status).toBe(404);
  });

  it('/metrics: pass times, verdicts written by state, write results and watch restarts by resource', async () => {
    seedFragmentedPool();
    const metrics = createAdmissionMetrics();
    const running = start({ recorder: metrics }).checker;
    health = await serveHealth({
      report: () => running.health(),
      port: 0,
      host: '127.0.0.1',
      metrics: metrics.registry,
    });
    const url = `http://127.0.0.1:${(health.address() as AddressInfo).port}/metrics`;
    await eventually(() => ourEntry()?.['state'] === 'Retry', 'the Retry verdict');
    api.dropWatches();
    await eventually(
      async () =>
        /gpustack_admission_watch_restarts_total\{resource="pods"\} [1-9]/.test(await (await fetch(url)).text()),
      'a restart counted',
    );
    const text = await (await fetch(url)).text();
    expect(text).toMatch(/^gpustack_admission_verdicts_total\{state="Retry"\} 1$/m);
    expect(text).toMatch(/^gpustack_admission_writes_total\{result="written"\} 1$/m);
    expect(text).toMatch(/^gpustack_admission_pass_duration_seconds_count [1-9]\d*$/m);
    expect(text).not.toMatch(/state="Ready"/);
  });

  it('stop() ends every watch', async () => {
    seedFragmentedPool();
    const running = start().checker;
    await eventually(() => running.health().healthy, 'healthy');
    await running.stop();
    checker = undefined;
    await eventually(
      () =>
        (
          [
            'workloads',
            'resourceflavors',
            'nodes',
            'pods',
            'schedulingchains',
            'resourceslices',
            'resourceclaims',
            'resourceclaimtemplates',
            'instancetypes',
          ] as const
        ).every((c) => api.openWatches(c) === 0),
      'watches closed',
    );
    expect(running.health().watches.map((w) => [w.resource, w.streaming])).toEqual([
      ['workloads', false],
      ['resourceflavors', false],
      ['nodes', false],
      ['pods', false],
      ['schedulingchains', false],
    ]);
  });
});

describe('checker: claims read the card ledger', () => {
  /** Two 8-card nodes publishing their pools, 4 cards of each held by claims, a Workload whose pod claims 8. */
  function seedClaims(): void {
    api.upsert('resourceflavors', json(deviceFlavor()));
    for (const node of ['gpu-a', 'gpu-b']) {
      api.upsert('nodes', json(gpuNode(node, 8)));
      for (const slice of nodePool(node, 8)) api.upsert('resourceslices', json(slice));
      for (let i = 0; i < 4; i++)
        api.upsert('resourceclaims', json(allocatedClaim(`${node}-held-${i}`, [{ node, device: `card-${i}` }])));
    }
    api.upsert(
      'resourceclaimtemplates',
      json(claimTemplate('eight', [{ deviceClassName: 'gpustack-nvidia', count: 8 }])),
    );
    api.upsert(
      'workloads',
      json(
        makeWorkload('train')
          .podSet('workers', 1, [{ name: 'main', resources: { requests: { cpu: '1' } } }], {
            claimTemplates: { gpus: 'eight' },
          })
          .obj(),
      ),
    );
  }

  it('answers Retry for 8 claimed cards over 4 + 4 free, and Ready once the claims on one node go', async () => {
    seedClaims();
    start();
    await eventually(() => api.patches().length === 1, 'the Retry write');
    // The first pass waited for the ledger: its first write is the ledger's verdict.
    expect(ourEntry()).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining(
        '1 pod × 8 cards by resource claims do not fit in flavor gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d; ' +
          'the largest free block is 4 cards (node gpu-a, from ResourceSlices and ResourceClaims)',
      ),
    });
    for (let i = 0; i < 4; i++) api.remove('resourceclaims', `team-a/gpu-b-held-${i}`);
    await eventually(() => ourEntry()?.['state'] === 'Ready', 'the Ready write');
  });

  it("annotates a device InstanceType with its pool's ledger count, once per change", async () => {
    seedClaims();
    api.upsert(
      'instancetypes',
      json({
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'InstanceType',
        metadata: { name: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64' },
        spec: { acceleratable: true, acceleratorGroup: 'nvidia-h100-80gb-hbm3', os: 'linux', arch: 'amd64' },
      }),
    );
    api.upsert(
      'instancetypes',
      json({
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'InstanceType',
        metadata: { name: 'gpustack-generic-linux-amd64' },
        spec: { acceleratable: false, os: 'linux', arch: 'amd64' },
      }),
    );
    // A device pool without slices (no DRA there): never annotated.
    api.upsert(
      'instancetypes',
      json({
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'InstanceType',
        metadata: { name: 'gpustack-nvidia-a10g-linux-amd64' },
        spec: { acceleratable: true, acceleratorGroup: 'nvidia-a10g', os: 'linux', arch: 'amd64' },
      }),
    );
    start();
    const annotation = () =>
      (api.get('instancetypes', 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64')?.['metadata'] as Json)['annotations'];
    const typePatches = () => api.patches().filter((p) => p.path.includes('/instancetypes/'));
    await eventually(() => typePatches().length === 1, 'the annotation');
    expect(typePatches().map((p) => p.path.split('?')[0]?.split('/').pop())).toEqual([
      'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
    ]);
    expect(typePatches()[0]?.path).toBe(
      '/apis/worker.gpustack.ai/v1alpha1/instancetypes/gpustack-nvidia-h100-80gb-hbm3-linux-amd64' +
        '?fieldManager=gpustack-node-devices&force=true',
    );
    expect(annotation()).toEqual({
      'worker.gpustack.ai/devices': '{"published":16,"allocated":8,"shared":0,"free":8,"cordoned":0,"unhealthy":0}',
    });
    // The echo and an unrelated change: no second write of the same count.
    api.upsert('nodes', json(gpuNode('gpu-c-cpu', 0)));
    await nextPass('a pass after the echo');
    expect(typePatches()).toHaveLength(1);
    for (let i = 0; i < 4; i++) api.remove('resourceclaims', `team-a/gpu-b-held-${i}`);
    await eventually(() => typePatches().length === 2, 'the new count');
    expect(annotation()).toEqual({
      'worker.gpustack.ai/devices': '{"published":16,"allocated":4,"shared":0,"free":12,"cordoned":0,"unhealthy":0}',
    });
    // A cordon of one free card of gpu-a (its two rules): one card less free, counted cordoned in its flavor.
    const [card] = buildDeviceLedger(nodePool('gpu-a', 8), []).cards('gpu-a').slice(5, 6);
    for (const rule of buildCordonRules(card!, 'firmware', 'NoSchedule', 'resource.k8s.io/v1'))
      api.upsert('devicetaintrules', json(rule));
    await eventually(() => typePatches().length === 3, 'the cordoned count');
    expect(JSON.parse((annotation() as Record<string, string>)['worker.gpustack.ai/devices']!)).toEqual({
      published: 16,
      allocated: 4,
      shared: 0,
      free: 11,
      cordoned: 1,
      unhealthy: 0,
      cordonedByFlavor: { 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d': 1 },
    });
  });

  it("counts the pool's cards its vendor's device plugin owns (the Node advertises nvidia.com/gpu) under devicePlugin", async () => {
    seedClaims();
    // A third node of the pool whose device plugin serves nvidia.com/gpu: its agent publishes no slices.
    const plugin = gpuNode('gpu-d', 8);
    api.upsert('nodes', json({ ...plugin, status: { allocatable: { 'nvidia.com/gpu': '8', cpu: '224' } } }));
    // A node advertising 0 (its device plugin gone) is DRA's again: it counts nothing here.
    const gone = gpuNode('gpu-e', 8);
    api.upsert('nodes', json({ ...gone, status: { allocatable: { 'nvidia.com/gpu': '0' } } }));
    api.upsert(
      'instancetypes',
      json({
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'InstanceType',
        metadata: { name: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64' },
        spec: { acceleratable: true, acceleratorGroup: 'nvidia-h100-80gb-hbm3', os: 'linux', arch: 'amd64' },
      }),
    );
    start();
    const typePatches = () => api.patches().filter((p) => p.path.includes('/instancetypes/'));
    await eventually(() => typePatches().length === 1, 'the annotation');
    const annotations = (api.get('instancetypes', 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64')?.['metadata'] as Json)[
      'annotations'
    ];
    expect(annotations).toEqual({
      'worker.gpustack.ai/devices':
        '{"published":16,"allocated":8,"shared":0,"free":8,"cordoned":0,"unhealthy":0,"devicePlugin":8}',
    });
  });

  it('decides device-plugin Workloads while the DRA collections fail to list, and keeps /healthz out of it', async () => {
    seedFragmentedPool();
    api.failLists('resourceslices', 1000);
    start();
    await eventually(() => api.patches().length === 1, 'the Retry write without the ledger');
    expect(ourEntry()?.['message']).toBe(RETRY_MESSAGE);
    await eventually(() => checker?.health().healthy === true, 'healthy without resourceslices');
  });
});
