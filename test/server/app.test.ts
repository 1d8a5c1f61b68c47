/**
 * The hook server around the sync functions (docs/architecture.md#hook-server): health and metrics routes, the wire form
 * of answers (sorted keys, byte-identical for the same request, `null` only where a decorator
 * removes a label) and the request time handed to sync as `now`.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp, createMetrics, type HookMetrics } from '../../src/server/index.js';
import { SILENT_LOGGER, type Logger } from '../../src/runtime/index.js';
import {
  EXAMPLE_ROUTES,
  exampleBody,
  exampleText,
  nullPaths,
  post,
  read,
  unsortedKeyPaths,
  type InMemoryApp,
} from './helpers.js';

describe('hook server', () => {
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp();
  });

  describe('GET health', () => {
    it.each([
      ['/healthz', { status: 'ok' }],
      ['/readyz', { status: 'ready' }],
    ])('%s → 200', async (path, body) => {
      const answer = await read(await app.request(path));

      expect(answer.status).toBe(200);
      expect(answer.json).toEqual(body);
    });
  });

  describe('GET /metrics', () => {
    let metrics: HookMetrics;
    beforeEach(() => {
      metrics = createMetrics();
      app = createApp({ metrics });
    });

    it('counts calls by code, times them and counts children by kind', async () => {
      expect((await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'))).status).toBe(
        200,
      );
      expect((await post(app, '/hooks/scheduling-chain/sync', '{')).status).toBe(400);

      const answer = await read(await app.request('/metrics'));

      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('text/plain');
      const lines = answer.text.split('\n');
      expect(lines).toContain('# TYPE gpustack_hook_duration_seconds histogram');
      expect(lines).toContain('gpustack_hook_duration_seconds_count{controller="scheduling-chain",hook="sync"} 2');
      expect(lines).toContain('gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="200"} 1');
      expect(lines).toContain('gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="400"} 1');
      expect(lines).toContain('gpustack_hook_children_total{controller="scheduling-chain",kind="ResourceFlavor"} 6');
      expect(lines).toContain('gpustack_hook_children_total{controller="scheduling-chain",kind="InstanceType"} 3');
      expect(lines).toContain('gpustack_hook_children_total{controller="scheduling-chain",kind="AdmissionCheck"} 1');
    });

    it('counts refusals and oversized bodies by their code', async () => {
      app = createApp({ metrics, maxBodyBytes: 1024 });
      await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'));
      await post(app, '/hooks/scheduling-chain/sync', { parent: { metadata: { name: 'default' } } });

      const text = (await read(await app.request('/metrics'))).text;

      expect(text).toContain('gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="413"} 1');
      expect(text).toContain('gpustack_hook_requests_total{controller="scheduling-chain",hook="sync",code="429"} 1');
      expect(text).not.toContain('gpustack_hook_children_total{');
    });

    it('is 404 when the app has no metrics', async () => {
      const answer = await read(await createApp().request('/metrics'));

      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({ error: { code: 'NotFound', message: 'metrics are not enabled' } });
    });
  });

  describe('POST answers on the wire', () => {
    it('keeps null label values in decorator answers: that is how a stale label is removed', async () => {
      const answer = await post(app, '/hooks/node-profile/sync', exampleText('node-profile.sync.json'));

      expect(answer.status).toBe(200);
      expect(answer.text).toContain('"general.feature.gpustack.ai/intel":null');
      expect(nullPaths(answer.json)).toEqual([
        '$.labels.general.feature.gpustack.ai/intel',
        '$.labels.general.feature.gpustack.ai/intel-xeon-platinum-8259cl',
        '$.labels.general.feature.gpustack.ai/intel-xeon-platinum-8259cl.count',
      ]);
    });

    it.each(EXAMPLE_ROUTES.filter((e) => e.kind === 'composite'))(
      'never puts null in a composite answer ($route)',
      async ({ route, file }) => {
        const answer = await post(app, route, exampleText(file));

        expect(answer.status).toBe(200);
        expect(nullPaths(answer.json)).toEqual([]);
        expect(answer.text).not.toContain('null');
      },
    );

    it.each(EXAMPLE_ROUTES)(
      'sorts every object key and answers byte-identically twice ($route)',
      async ({ route, file }) => {
        app = createApp({ clock: () => new Date('2026-01-01T00:00:00Z') });

        const first = await post(app, route, exampleText(file));
        const second = await post(app, route, exampleText(file));

        expect(first.status).toBe(200);
        expect(unsortedKeyPaths(first.json)).toEqual([]);
        expect(second.text).toBe(first.text);
      },
    );

    it('answers the same bytes whatever order the related objects arrive in', async () => {
      app = createApp({ clock: () => new Date('2026-01-01T00:00:00Z') });
      const body = exampleBody('scheduling-chain.sync.json') as { related: Record<string, Record<string, unknown>> };
      const nodes = body.related['Node.v1'] ?? {};
      body.related['Node.v1'] = Object.fromEntries(Object.entries(nodes).reverse());

      const shuffled = await post(app, '/hooks/scheduling-chain/sync', body);
      const original = await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'));

      expect(shuffled.status).toBe(200);
      expect(shuffled.text).toBe(original.text);
    });
  });

  describe('the clock option', () => {
    it('is the `now` sync stamps on a new condition, at whole seconds', async () => {
      app = createApp({ clock: () => new Date('2026-03-04T05:06:07.890Z') });

      const answer = await post(app, '/hooks/node-devices-check/sync', exampleText('node-devices-check.sync.json'));

      expect(answer.status).toBe(200);
      expect(answer.json).toMatchObject({
        status: { conditions: [{ type: 'Active', status: 'True', lastTransitionTime: '2026-03-04T05:06:07Z' }] },
      });
    });

    it('stamps every condition of a composite status', async () => {
      app = createApp({ clock: () => new Date('2026-03-04T05:06:07Z') });

      const answer = await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'));

      const conditions = (answer.json as { status: { conditions: { lastTransitionTime: string }[] } }).status
        .conditions;
      expect(conditions.length).toBeGreaterThan(0);
      expect(conditions.map((c) => c.lastTransitionTime)).toEqual(conditions.map(() => '2026-03-04T05:06:07Z'));
    });

    it('leaves an unchanged condition at its old time', async () => {
      app = createApp({ clock: () => new Date('2026-03-04T05:06:07Z') });
      const body = exampleBody('node-devices-check.sync.json') as { parent: Record<string, unknown> };
      body.parent['status'] = {
        conditions: [
          {
            type: 'Active',
            status: 'True',
            reason: 'Ready',
            message: 'the gpustack-node-devices checker answers for this check',
            lastTransitionTime: '2025-06-12T08:45:02Z',
          },
        ],
      };

      const answer = await post(app, '/hooks/node-devices-check/sync', body);

      expect(answer.json).toMatchObject({
        status: { conditions: [{ type: 'Active', lastTransitionTime: '2025-06-12T08:45:02Z' }] },
      });
    });
  });

  describe('the logger option', () => {
    it('logs one line per hook call with the parent name, status and children', async () => {
      const logged: { fields: Record<string, unknown>; message: string }[] = [];
      const logger: Logger = {
        ...SILENT_LOGGER,
        info: (fields, message) => logged.push({ fields: fields as Record<string, unknown>, message }),
      };
      app = createApp({ logger });

      await post(app, '/hooks/scheduling-chain/sync', exampleText('scheduling-chain.sync.json'));

      expect(logged).toEqual([
        {
          message: 'hook',
          fields: {
            controller: 'scheduling-chain',
            hook: 'sync',
            parent: 'default',
            // 6 flavors, 3 instance types, the check, the settings, 22 DeviceClasses (9 makers + 2 models, × 2)
            // and the 32 NodeShards of the default nodeShards.
            children: 65,
            status: 200,
            durationMs: expect.any(Number),
          },
        },
      ]);
    });

    it('logs a 400 with its code and reason', async () => {
      const logged: Record<string, unknown>[] = [];
      app = createApp({
        logger: { ...SILENT_LOGGER, info: (fields) => logged.push(fields as Record<string, unknown>) },
      });

      const res = await post(app, '/hooks/node-profile/sync', '{"parent": {"metadata": {"name": 7}}}');

      expect(res.status).toBe(400);
      expect(logged).toEqual([
        expect.objectContaining({
          status: 400,
          error: { code: 'BadHookRequest', message: expect.stringContaining('parent.metadata.name') },
        }),
      ]);
    });
  });
});
