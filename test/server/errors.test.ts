/**
 * Every non-200 answer of the hook server (docs/architecture.md#hook-server): one envelope `{"error":{"code","message","issues"?}}`,
 * 400 for malformed JSON and schema failures (naming the failing field), 413 over the body limit,
 * 429 + Retry-After for a sync refusal, 404 for unknown routes and 500 without internals.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HOOKS, createApp } from '../../src/server/index.js';
import { SILENT_LOGGER, type Logger } from '../../src/runtime/index.js';
import { exampleBody, exampleText, post, read, type InMemoryApp } from './helpers.js';

const CHAIN_SETTINGS_KEY = 'ChainSettings.worker.gpustack.ai/v1alpha1';

/** A 400 BadHookRequest whose message and issue list name `path`. */
function badRequestNaming(path: string) {
  return {
    error: {
      code: 'BadHookRequest',
      message: expect.stringContaining(`${path}: `),
      issues: expect.arrayContaining([expect.objectContaining({ path })]),
    },
  };
}

describe('hook server errors', () => {
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp();
  });

  describe('POST with a body that is not JSON → 400 MalformedJson', () => {
    it.each([
      ['a truncated object', '{"parent":'],
      ['an empty body', ''],
      ['YAML', 'parent:\n  metadata:\n    name: default\n'],
    ])('%s', async (_name, body) => {
      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        error: { code: 'MalformedJson', message: expect.stringMatching(/^request body is not JSON: /) },
      });
    });
  });

  describe('POST with a body that fails its schema → 400 BadHookRequest naming the field', () => {
    it('a composite sync body without parent', async () => {
      const { parent: _parent, ...body } = exampleBody('scheduling-chain.sync.json');

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('parent'));
    });

    it('a customize body without parent', async () => {
      const answer = await post(app, '/hooks/instance-type/customize', {
        controller: { metadata: { name: 'gpustack-instance-type' } },
      });

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('parent'));
    });

    it('a decorator sync body without its target (v2 parent)', async () => {
      const { parent: _parent, ...body } = exampleBody('node-devices-check.sync.json');

      const answer = await post(app, '/hooks/node-devices-check/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('parent'));
    });

    it('a decorator sync body in the hook v1 form without object, naming the target parent', async () => {
      const { parent: _parent, children, ...rest } = exampleBody('node-devices-check.sync.json');

      const answer = await post(app, '/hooks/node-devices-check/sync', { ...rest, attachments: children });

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('parent'));
    });

    it('a label value that is not a string', async () => {
      const target = 'parent';
      const { parent, children, ...rest } = exampleBody('node-profile.sync.json') as {
        parent: { metadata: { labels: Record<string, unknown> } };
        children: unknown;
      };
      parent.metadata.labels['foo'] = 1;
      const body = { ...rest, parent, children };

      const answer = await post(app, '/hooks/node-profile/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        error: {
          code: 'BadHookRequest',
          message: `${target}.metadata.labels.foo: Invalid input: expected string, received number`,
          issues: [
            {
              path: `${target}.metadata.labels.foo`,
              code: 'invalid_type',
              message: 'Invalid input: expected string, received number',
            },
          ],
        },
      });
    });

    it('a related NodeProfile without metadata.name', async () => {
      const body = exampleBody('scheduling-chain.sync.json') as {
        related: Record<string, Record<string, { metadata: Record<string, unknown> }>>;
      };
      delete body.related['NodeProfile.worker.gpustack.ai/v1alpha1']?.['node-cpu']?.metadata['name'];

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(
        badRequestNaming('related.NodeProfile.worker.gpustack.ai/v1alpha1.node-cpu.metadata.name'),
      );
    });

    it('a related NodeProfile whose spec.labels is not a label map', async () => {
      const body = exampleBody('scheduling-chain.sync.json') as {
        related: Record<string, Record<string, { spec: Record<string, unknown> }>>;
      };
      const profile = body.related['NodeProfile.worker.gpustack.ai/v1alpha1']?.['node-cpu'];
      if (profile) profile.spec['labels'] = ['gpustack.ai/managed'];

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(400);
      expect(JSON.stringify(answer.json)).toContain(
        'related.NodeProfile.worker.gpustack.ai/v1alpha1.node-cpu.spec.labels',
      );
    });

    it('a related Node without metadata.name', async () => {
      const body = exampleBody('scheduling-chain.sync.json') as {
        related: Record<string, Record<string, unknown>>;
      };
      body.related['Node.v1'] = { 'node-x': { apiVersion: 'v1', kind: 'Node', metadata: {} } };

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('related.Node.v1.node-x.metadata.name'));
    });

    it('JSON null', async () => {
      const answer = await post(app, '/hooks/node-profile/customize', 'null');

      expect(answer.status).toBe(400);
      expect(answer.json).toEqual(badRequestNaming('(body)'));
    });

    it('lists every failing field but names at most five in the message', async () => {
      const labels = Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`bad-${i}`, i]));

      const answer = await post(app, '/hooks/node-profile/sync', { parent: { metadata: { name: 'n', labels } } });

      expect(answer.status).toBe(400);
      const { error } = answer.json as { error: { message: string; issues: unknown[] } };
      expect(error.issues).toHaveLength(7);
      expect(error.message).toMatch(/^parent\.metadata\.labels\.bad-0: .*; and 2 more$/);
    });
  });

  describe('POST that is not plain JSON by its headers → 415, the body unread', () => {
    // Bytes, not a string: for a string the Request constructor would add `text/plain` itself.
    const body = new TextEncoder().encode(exampleText('node-devices-check.sync.json'));
    const send = async (headers: Record<string, string>) =>
      read(await app.request('/hooks/node-devices-check/sync', { method: 'POST', headers, body }));

    it.each<{ name: string; headers: Record<string, string>; message: string }>([
      {
        name: 'text/plain',
        headers: { 'content-type': 'text/plain' },
        message: 'content-type "text/plain" is not application/json',
      },
      {
        name: 'a form (curl -d without -H)',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        message: 'content-type "application/x-www-form-urlencoded" is not application/json',
      },
      { name: 'no content-type', headers: {}, message: 'content-type is missing: send application/json' },
      {
        name: 'JSON in another charset',
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
        message: 'content-type "application/json; charset=iso-8859-1" is not application/json',
      },
      {
        name: 'gzip-encoded JSON',
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        message: 'content-encoding "gzip" is not supported: send the body unencoded',
      },
    ])('$name', async ({ headers, message }) => {
      const answer = await send(headers);

      expect(answer.status).toBe(415);
      expect(answer.json).toEqual({ error: { code: 'UnsupportedMediaType', message } });
    });

    it.each(['application/json', 'application/json; charset=utf-8', 'Application/JSON; Charset="UTF-8"'])(
      'accepts %s',
      async (type) => {
        const answer = await send({ 'content-type': type, 'content-encoding': 'identity' });

        expect(answer.status).toBe(200);
      },
    );
  });

  describe('POST with a body over the limit → 413', () => {
    beforeEach(() => {
      app = createApp({ maxBodyBytes: 1024 });
    });

    it('refuses a body longer than maxBodyBytes', async () => {
      const body = exampleText('scheduling-chain.sync.json');
      expect(body.length).toBeGreaterThan(1024);

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({
        error: { code: 'PayloadTooLarge', message: 'request body exceeds 1024 bytes (--max-body)' },
      });
    });

    it('refuses by the declared Content-Length too', async () => {
      const body = exampleText('scheduling-chain.sync.json');

      const answer = await post(app, '/hooks/scheduling-chain/sync', body, {
        'content-length': String(Buffer.byteLength(body)),
      });

      expect(answer.status).toBe(413);
      expect(answer.json).toEqual({
        error: { code: 'PayloadTooLarge', message: 'request body exceeds 1024 bytes (--max-body)' },
      });
    });

    it('still answers a body under the limit', async () => {
      const answer = await post(app, '/hooks/node-devices-check/sync', {
        parent: { metadata: { name: 'someone-elses-check' } },
      });

      expect(answer.status).toBe(200);
      expect(answer.text).toBe('{}');
    });
  });

  describe('POST that sync refuses → 429 with Retry-After: 30', () => {
    it('scheduling-chain sync before the customize hook related the nodes', async () => {
      const body = exampleBody('scheduling-chain.sync.json');
      body['related'] = {};

      const answer = await post(app, '/hooks/scheduling-chain/sync', body);

      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('30');
      expect(answer.json).toEqual({
        error: {
          code: 'MissingRelated',
          message:
            'related NodeProfile.worker.gpustack.ai/v1alpha1 and Node.v1 are missing: the customize hook has not been applied yet',
        },
      });
    });

    it('instance-type sync with an invalid related ChainSettings', async () => {
      const body = exampleBody('instance-type.sync.json') as {
        related: Record<string, Record<string, { spec: Record<string, unknown> }>>;
      };
      const settings = body.related[CHAIN_SETTINGS_KEY]?.['default'];
      if (settings === undefined) throw new Error('example relates no ChainSettings default');
      settings.spec['generalKey'] = 'Bogus';

      const answer = await post(app, '/hooks/instance-type/sync', body);

      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('30');
      expect(answer.json).toEqual({
        error: {
          code: 'InvalidSettings',
          message: expect.stringMatching(/^ChainSettings default: spec\.generalKey: /),
        },
      });
    });

    it('node-profile sync with an invalid related ChainSettings', async () => {
      const body = exampleBody('node-profile.sync.json') as {
        related: Record<string, Record<string, { spec: Record<string, unknown> }>>;
      };
      const chain = body.related[CHAIN_SETTINGS_KEY]?.['default'];
      if (chain === undefined) throw new Error('example relates no ChainSettings default');
      chain.spec['mixedOnNode'] = 'yes';

      const answer = await post(app, '/hooks/node-profile/sync', body);

      expect(answer.status).toBe(429);
      expect(answer.headers.get('retry-after')).toBe('30');
      expect(answer.json).toEqual({
        error: {
          code: 'InvalidSettings',
          message: expect.stringMatching(/^ChainSettings default: spec\.mixedOnNode: /),
        },
      });
    });
  });

  describe('unknown routes → 404', () => {
    it.each([
      ['POST', '/hooks/nope/sync'],
      ['POST', '/hooks/node-devices-check/customize'],
      ['POST', '/hooks/node-profile/finalize'],
      ['GET', '/hooks/scheduling-chain/sync'],
      ['GET', '/'],
    ])('%s %s', async (method, path) => {
      const answer = await read(
        await app.request(
          path,
          method === 'POST' ? { method, headers: { 'content-type': 'application/json' }, body: '{}' } : { method },
        ),
      );

      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({ error: { code: 'NotFound', message: `no route for ${method} ${path}` } });
    });
  });

  describe('a sync function that throws → 500 without internals', () => {
    const definition = HOOKS['node-devices-check'].sync;
    if (definition === undefined) throw new Error('node-devices-check has no sync hook');
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('logs the error and answers a generic message', async () => {
      vi.spyOn(definition, 'run').mockImplementation(() => {
        throw new TypeError("Cannot read properties of undefined (reading 'secret') at /srv/app/src/sync/check.ts:42");
      });
      const logged: { fields: object; message: string }[] = [];
      const logger: Logger = { ...SILENT_LOGGER, error: (fields, message) => logged.push({ fields, message }) };
      app = createApp({ logger });

      const answer = await post(app, '/hooks/node-devices-check/sync', exampleText('node-devices-check.sync.json'));

      expect(answer.status).toBe(500);
      expect(answer.json).toEqual({ error: { code: 'Internal', message: 'internal error; see the server log' } });
      expect(answer.text).not.toMatch(/secret|\.ts|TypeError|stack/);
      expect(logged).toEqual([
        {
          message: 'unexpected error',
          fields: {
            path: '/hooks/node-devices-check/sync',
            err: expect.objectContaining({ message: expect.stringContaining('secret') }),
          },
        },
      ]);
    });
  });
});
