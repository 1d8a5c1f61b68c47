/**
 * The list + watch loop against a real HTTP server on 127.0.0.1 that streams watch events: it
 * follows events, relists on 410 Gone, backs off and relists after a dropped connection or a
 * failing list, skips objects that fail their schema, and its status says when it is live.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ESTABLISHED_STREAM_MS,
  Informer,
  NODES,
  healthReport,
  isLive,
  type InformerStatus,
} from '../../src/admission/index.js';
import type { Node } from '../../src/k8s/index.js';
import { ApiError, createKubeApi, type KubeApi } from '../../src/api-client/index.js';
import { eventually, kubeConfigFor, recordingLogger, startFakeKube, type FakeKube } from './support.js';

function node(name: string, labels: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels } };
}

let api: FakeKube;
let stop: AbortController;
let running: Promise<void> | undefined;

beforeEach(async () => {
  api = await startFakeKube();
  stop = new AbortController();
  running = undefined;
});
afterEach(async () => {
  stop.abort();
  await running;
  await api.close();
});

function start(backoff = { initialMs: 5, maxMs: 20 }): {
  informer: Informer<Node>;
  logger: ReturnType<typeof recordingLogger>;
  changes: () => number;
} {
  const logger = recordingLogger();
  let changes = 0;
  const informer = new Informer(createKubeApi(kubeConfigFor(api.url)), NODES, {
    logger,
    onChange: () => {
      changes++;
    },
    backoff,
  });
  running = informer.run(stop.signal);
  return { informer, logger, changes: () => changes };
}

const names = (informer: Informer<Node>) => [...informer.store.keys()].sort();
const streaming = (informer: Informer<Node>) => () => informer.status.streaming && api.openWatches('nodes') === 1;

describe('Informer: list, then watch', () => {
  it('lists, then follows ADDED, MODIFIED and DELETED events, and is live while streaming', async () => {
    api.upsert('nodes', node('gpu-a', { zone: 'a' }));
    const { informer, changes } = start();
    await eventually(streaming(informer), 'watching nodes');
    expect(names(informer)).toEqual(['gpu-a']);
    expect(informer.status).toMatchObject({ synced: true, streaming: true, failures: 0, lists: 1 });
    expect(isLive(informer.status, Date.now(), 0)).toBe(true);

    api.upsert('nodes', node('gpu-b'));
    api.upsert('nodes', node('gpu-a', { zone: 'b' }));
    await eventually(() => informer.store.get('gpu-a')?.metadata.labels?.['zone'] === 'b', 'gpu-a modified');
    expect(names(informer)).toEqual(['gpu-a', 'gpu-b']);
    api.remove('nodes', 'gpu-b');
    await eventually(() => !informer.store.has('gpu-b'), 'gpu-b deleted');
    expect(changes()).toBeGreaterThanOrEqual(4);
    expect(api.lists('nodes')).toBe(1);
  });

  it('watches from the resourceVersion of the list, with bookmarks', async () => {
    const { informer } = start();
    await eventually(streaming(informer), 'watching nodes');
    const watchRequest = api.requests.find((r) => r.path.includes('watch=1'));
    expect(watchRequest?.path).toMatch(/resourceVersion=100(&|$)/);
    expect(watchRequest?.path).toContain('allowWatchBookmarks=true');
  });

  it('follows `continue` tokens: a collection larger than one page arrives whole', async () => {
    for (let i = 0; i < 1201; i++) api.upsertSilently('nodes', node(`n-${String(i).padStart(4, '0')}`));
    const { informer } = start();
    await eventually(() => informer.status.synced, 'listed');
    expect(informer.store.size).toBe(1201);
    expect(
      api.requests
        .filter((r) => r.method === 'GET' && !r.path.includes('watch=1'))
        .map((r) => new URL(r.path, 'http://x').searchParams.get('continue')),
    ).toEqual([null, '500', '1000']);
  });
});

describe('Informer: 410 Gone relists', () => {
  it('an ERROR event with code 410 ends the stream and relists at once, picking up changes the events missed; no failure counted', async () => {
    api.upsert('nodes', node('gpu-a'));
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    api.upsertSilently('nodes', node('gpu-missed'));
    api.sendRaw('nodes', JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } }));
    await eventually(() => api.lists('nodes') === 2 && informer.status.streaming, 'relisted and watching again');
    expect(names(informer)).toEqual(['gpu-a', 'gpu-missed']);
    expect(informer.status.failures).toBe(0);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it.each([
    { name: 'an ERROR event', gone: (fake: FakeKube) => fake.goneOnce('nodes') },
    { name: 'HTTP 410', gone: (fake: FakeKube) => fake.goneStatusOnce('nodes') },
  ])(
    'a watch answered with 410 right away ($name) relists before watching again, without a failure',
    async ({ gone }) => {
      gone(api);
      const { informer, logger } = start();
      await eventually(streaming(informer), 'watching nodes');
      expect(api.lists('nodes')).toBe(2);
      expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
    },
  );
});

describe('Informer: 410 Gone over and over', () => {
  it('a second 410 right after a fresh list is a failure with a backoff, not a hot loop', async () => {
    api.goneStatusOnce('nodes');
    api.goneOnce('nodes');
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    expect(api.lists('nodes')).toBe(3);
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.fields['err'])).toEqual([
      'watch of nodes: 410 Gone again right after a fresh list',
    ]);
  });
});

describe('Informer: failures back off and relist', () => {
  it('a dropped connection is a failure: logged, backed off, relisted, then live again', async () => {
    api.upsert('nodes', node('gpu-a'));
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    api.upsertSilently('nodes', node('gpu-b'));
    api.dropWatches();
    await eventually(() => api.lists('nodes') === 2 && streaming(informer)(), 'relisted and watching again');
    expect(names(informer)).toEqual(['gpu-a', 'gpu-b']);
    const errors = logger.entries.filter((e) => e.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.fields).toMatchObject({ resource: 'nodes', failures: 1, retryInMs: 5 });
    expect(informer.status.lastError).toMatch(/closed mid-stream|aborted|socket hang up|ECONNRESET/);
  });

  it('failing lists back off exponentially up to the cap, the watch reads as down, and it recovers when the API does', async () => {
    api.failLists('nodes', 4);
    const { informer, logger } = start({ initialMs: 5, maxMs: 20 });
    await eventually(() => api.lists('nodes') >= 3, 'a few failed lists');
    expect(informer.status.synced).toBe(false);
    expect(healthReport([informer.status], Date.now(), 60_000)).toMatchObject({ healthy: false, down: ['nodes'] });
    await eventually(streaming(informer), 'recovered');
    const delays = logger.entries.filter((e) => e.level === 'error').map((e) => e.fields['retryInMs']);
    expect(delays).toEqual([5, 10, 20, 20]);
    expect(informer.status.failures).toBe(4);
    expect(healthReport([informer.status], Date.now(), 60_000)).toMatchObject({ healthy: true, down: [] });
  });

  it("a list answered 429 waits the server's Retry-After where that is longer than the backoff", async () => {
    const base = createKubeApi(kubeConfigFor(api.url));
    let busy = 2;
    // API Priority and Fairness refusing the first two lists, asking for 40 ms.
    const throttled: KubeApi = {
      get: base.get.bind(base),
      patch: base.patch.bind(base),
      create: base.create.bind(base),
      replace: base.replace.bind(base),
      remove: base.remove.bind(base),
      watch: base.watch.bind(base),
      listEach: (path: string, onItem: (item: unknown) => void) =>
        busy-- > 0
          ? Promise.reject(new ApiError(429, 'GET', path, 'TooManyRequests', 40))
          : base.listEach(path, onItem),
    };
    const logger = recordingLogger();
    const informer = new Informer(throttled, NODES, {
      logger,
      onChange: () => {},
      backoff: { initialMs: 5, maxMs: 80 },
    });
    running = informer.run(stop.signal);
    await eventually(streaming(informer), 'listed after two 429s');
    const retries = logger.entries.filter((e) => e.level === 'error').map((e) => e.fields['retryInMs']);
    expect(retries).toEqual([40, 40]);
  });

  it('a watch re-established after failures clears them when it ends, events or not: a quiet resource relists after the initial backoff', async () => {
    api.failLists('nodes', 3);
    const logger = recordingLogger();
    let now = 1_000_000;
    const informer = new Informer(createKubeApi(kubeConfigFor(api.url)), NODES, {
      logger,
      onChange: () => {},
      backoff: { initialMs: 5, maxMs: 20 },
      clock: () => now,
    });
    running = informer.run(stop.signal);
    await eventually(streaming(informer), 'watching after three failed lists');
    expect(informer.status.failures).toBe(3);
    // Quiet: no event arrives, and the stream holds past ESTABLISHED_STREAM_MS.
    now += ESTABLISHED_STREAM_MS;
    api.dropWatches();
    await eventually(() => api.lists('nodes') === 5 && streaming(informer)(), 'relisted and watching again');
    const retries = logger.entries.filter((e) => e.level === 'error').map((e) => e.fields['retryInMs']);
    // The drop of an established watch starts again at 5 ms, not at the 20 ms cap of the old count.
    expect(retries).toEqual([5, 10, 20, 5]);
    expect(informer.status.failures).toBe(1);
  });

  it('a watch that drops before it is established keeps the count: a server that drops every watch at once is still backed off', async () => {
    api.failLists('nodes', 2);
    const logger = recordingLogger();
    const informer = new Informer(createKubeApi(kubeConfigFor(api.url)), NODES, {
      logger,
      onChange: () => {},
      backoff: { initialMs: 5, maxMs: 40 },
      clock: () => 1_000_000,
    });
    running = informer.run(stop.signal);
    await eventually(streaming(informer), 'watching after two failed lists');
    api.dropWatches();
    await eventually(() => api.lists('nodes') === 4 && streaming(informer)(), 'relisted and watching again');
    const retries = logger.entries.filter((e) => e.level === 'error').map((e) => e.fields['retryInMs']);
    expect(retries).toEqual([5, 10, 20]);
  });

  it('a line that is not JSON is a failure of that stream, then relists', async () => {
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    api.sendRaw('nodes', '{"type": "ADDED", "object": ');
    api.sendRaw('nodes', 'garbage');
    await eventually(() => api.lists('nodes') === 2 && streaming(informer)(), 'relisted');
    expect(logger.entries.find((e) => e.level === 'error')?.fields['err']).toMatch(/not JSON/);
  });

  it('an event split across chunks is read whole', async () => {
    const { informer } = start();
    await eventually(streaming(informer), 'watching nodes');
    const line = JSON.stringify({
      type: 'ADDED',
      object: { ...node('gpu-split'), metadata: { name: 'gpu-split', resourceVersion: '999' } },
    });
    api.sendRaw('nodes', line.slice(0, 20), false);
    api.sendRaw('nodes', line.slice(20));
    await eventually(() => informer.store.has('gpu-split'), 'split event applied');
    expect(informer.status.failures).toBe(0);
  });

  it('stops when aborted: the run resolves and the watch connection closes', async () => {
    const { informer } = start();
    await eventually(streaming(informer), 'watching nodes');
    stop.abort();
    await running;
    expect(informer.status.streaming).toBe(false);
    await eventually(() => api.openWatches('nodes') === 0, 'watch closed');
  });
});

describe('Informer: objects that fail their schema', () => {
  it('are logged and skipped in a list, and the rest is kept', async () => {
    api.upsert('nodes', node('gpu-a'));
    api.upsert('nodes', node('gpu-bad', { count: 8 }));
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    expect(names(informer)).toEqual(['gpu-a']);
    const warning = logger.entries.find((e) => e.level === 'warn');
    expect(warning?.fields).toMatchObject({ resource: 'nodes', object: 'gpu-bad' });
    expect(String((warning?.fields['issues'] as string[])[0])).toContain('metadata.labels.count');
  });

  it('an object that turns malformed in an event is dropped from the store; one without a name is ignored', async () => {
    api.upsert('nodes', node('gpu-a'));
    api.upsert('nodes', node('gpu-b'));
    const { informer, logger } = start();
    await eventually(streaming(informer), 'watching nodes');
    api.upsert('nodes', node('gpu-a', { count: 8 }));
    api.sendRaw('nodes', JSON.stringify({ type: 'ADDED', object: { metadata: {} } }));
    await eventually(
      () => !informer.store.has('gpu-a') && logger.entries.filter((e) => e.level === 'warn').length === 2,
      'malformed events handled',
    );
    expect(names(informer)).toEqual(['gpu-b']);
    expect(informer.status.streaming).toBe(true);
  });
});

describe('liveness and backoff arithmetic', () => {
  const status = (over: Partial<InformerStatus>): InformerStatus => ({
    resource: 'pods',
    synced: true,
    streaming: false,
    failures: 0,
    lists: 1,
    ...over,
  });

  it.each([
    { name: 'never listed', s: status({ synced: false, streaming: true }), live: false },
    { name: 'listed and streaming', s: status({ streaming: true }), live: true },
    { name: 'listed, between the list and the first stream', s: status({}), live: true },
    { name: 'stream lost 10 s ago, within the grace', s: status({ downSince: 90_000 }), live: true },
    { name: 'stream lost 60 s ago, at the grace', s: status({ downSince: 40_000 }), live: false },
  ])('$name → live $live', ({ s, live }) => {
    expect(isLive(s, 100_000, 60_000)).toBe(live);
  });

  it('names every watch that is down', () => {
    const report = healthReport(
      [
        status({ resource: 'workloads', streaming: true }),
        status({ resource: 'pods', synced: false, lastError: 'HTTP 403' }),
      ],
      0,
      60_000,
    );
    expect(report).toMatchObject({ healthy: false, down: ['pods'] });
    expect(report.watches[1]).toEqual({
      resource: 'pods',
      live: false,
      synced: false,
      streaming: false,
      lastError: 'HTTP 403',
    });
  });
});

describe('Informer: stopped while listing', () => {
  it('ends without opening a watch that nothing would close (stop arrives between the list and the watch)', async () => {
    api.upsert('nodes', node('gpu-a'));
    const informer = new Informer(createKubeApi(kubeConfigFor(api.url)), NODES, {
      logger: recordingLogger(),
      // Called by the list as it swaps the store in: the stop lands before the watch starts.
      onChange: () => stop.abort(),
    });
    running = informer.run(stop.signal);
    await running;
    expect(informer.status).toMatchObject({ synced: true, streaming: false });
    await eventually(() => api.openWatches('nodes') === 0, 'no watch left open');
  });
});
