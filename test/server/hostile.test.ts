/**
 * Hostile bodies through the whole app: nothing a request carries can reach a recursion limit
 * (a value nested past the bound is a 400 naming the field, not a 500).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/index.js';
import { SILENT_LOGGER } from '../../src/runtime/index.js';
import { exampleBody, post, type InMemoryApp } from './helpers.js';

const FLAVOR_KEY = 'ResourceFlavor.kueue.x-k8s.io/v1beta2';
const FLAVOR = 'gpustack-generic-linux-amd64-4c';

/** `[[[…[]…]]]`, `depth` arrays deep, as JSON text (JSON.stringify itself cannot write one thousands deep). */
function nestedArrayText(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

const PLACEHOLDER = 'nested-value-goes-here';

/**
 * The example chain request as text, with invalid settings (so its observed children are sent back
 * as they are) and one observed flavor whose `spec.extra` is `extraText`.
 */
function chainWithObservedSpec(extraText: string): string {
  const body = exampleBody('scheduling-chain.sync.json') as {
    parent: { spec: Record<string, unknown> };
    children: Record<string, Record<string, unknown>>;
  };
  body.parent.spec['generalKey'] = 'Bogus';
  body.children[FLAVOR_KEY] = {
    [FLAVOR]: {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: FLAVOR, labels: { 'resource.gpustack.ai/type': 'nodes' } },
      spec: { nodeLabels: { 'gpustack.ai/managed': 'true' }, extra: PLACEHOLDER },
    },
  };
  return JSON.stringify(body).replace(`"${PLACEHOLDER}"`, extraText);
}

describe('deeply nested values', () => {
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp();
  });

  it('an observed child spec nested 101 levels deep → 400 naming the spec, not a 500', async () => {
    // spec → 100 arrays in extra: 101 levels, within the request's own bound (128 from the body).
    const answer = await post(app, '/hooks/scheduling-chain/sync', chainWithObservedSpec(nestedArrayText(100)));

    expect(answer.status).toBe(400);
    const path = `children.${FLAVOR_KEY}.${FLAVOR}.spec`;
    expect(answer.json).toEqual({
      error: {
        code: 'BadHookRequest',
        message: `${path}: nests deeper than 100 levels`,
        issues: [{ path, code: 'custom', message: 'nests deeper than 100 levels' }],
      },
    });
  });

  it.each([2_000, 100_000])(
    'an observed child spec nested %i levels deep → 400 naming the spec, past the request bound',
    async (depth) => {
      const answer = await post(app, '/hooks/scheduling-chain/sync', chainWithObservedSpec(nestedArrayText(depth)));

      expect(answer.status).toBe(400);
      const path = `children.${FLAVOR_KEY}.${FLAVOR}.spec.extra${'[0]'.repeat(7)}…`;
      expect(answer.json).toEqual({
        error: {
          code: 'BadHookRequest',
          message: `${path}: request nests deeper than 128 levels`,
          issues: [{ path, code: 'too_deep', message: 'request nests deeper than 128 levels' }],
        },
      });
    },
  );

  it('an observed InstanceType whose spec carries a deep unknown field (101 levels) → 400 naming the spec', async () => {
    const key = 'InstanceType.worker.gpustack.ai/v1alpha1';
    const type = {
      apiVersion: 'worker.gpustack.ai/v1alpha1',
      kind: 'InstanceType',
      metadata: { name: 'gpustack-generic-linux-amd64' },
      spec: { acceleratable: false, generalGroup: 'generic', os: 'linux', arch: 'amd64', extra: PLACEHOLDER },
    };
    const body = JSON.parse(chainWithObservedSpec('1')) as { children: Record<string, unknown> };
    body.children[key] = { 'gpustack-generic-linux-amd64': type };

    const answer = await post(
      app,
      '/hooks/scheduling-chain/sync',
      JSON.stringify(body).replace(`"${PLACEHOLDER}"`, nestedArrayText(100)),
    );

    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({
      error: {
        code: 'BadHookRequest',
        message: `children.${key}.gpustack-generic-linux-amd64.spec: nests deeper than 100 levels`,
      },
    });
  });

  it('a spec right at the bound is kept and sent back whole', async () => {
    // spec → 99 arrays in extra: 100 levels.
    const answer = await post(app, '/hooks/scheduling-chain/sync', chainWithObservedSpec(nestedArrayText(99)));

    expect(answer.status).toBe(200);
    const { children } = answer.json as { children: { metadata: { name: string }; spec: { extra: unknown } }[] };
    expect(children.find((c) => c.metadata.name === FLAVOR)?.spec.extra).toEqual(JSON.parse(nestedArrayText(99)));
  });
});

describe('huge keys and messages', () => {
  const HUGE = `k${'x'.repeat(4 * 1024 * 1024)}`;
  let app: InMemoryApp;
  beforeEach(() => {
    app = createApp();
  });

  it('a 4 MB label key that fails its schema → a 400 of a few KB that still names the field', async () => {
    const body = exampleBody('node-profile.sync.json') as { parent: { metadata: { labels: Record<string, unknown> } } };
    body.parent.metadata.labels[HUGE] = 1;

    const answer = await post(app, '/hooks/node-profile/sync', body);

    expect(answer.status).toBe(400);
    expect(answer.text.length).toBeLessThan(16 * 1024);
    const { error } = answer.json as { error: { message: string; issues: { path: string }[] } };
    const path = `parent.metadata.labels.${HUGE.slice(0, 256)}… (${HUGE.length} characters)`;
    expect(error.message).toBe(`${path}: Invalid input: expected string, received number`);
    expect(error.issues).toEqual([
      { path, code: 'invalid_type', message: 'Invalid input: expected string, received number' },
    ]);
  });

  it('many failing fields → every one counted in the message, at most 20 listed', async () => {
    const labels = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`bad-${i}`, i]));

    const answer = await post(app, '/hooks/node-profile/sync', { parent: { metadata: { name: 'n', labels } } });

    expect(answer.status).toBe(400);
    const { error } = answer.json as { error: { message: string; issues: unknown[] } };
    expect(error.issues).toHaveLength(20);
    expect(error.message).toMatch(/; and 495 more$/);
  });

  it('a 4 MB unknown settings key → a 429 of a few KB', async () => {
    const body = exampleBody('node-profile.sync.json') as {
      related: Record<string, Record<string, { spec: Record<string, unknown> }>>;
    };
    const settings = body.related['ChainSettings.worker.gpustack.ai/v1alpha1']?.['default'];
    if (settings === undefined) throw new Error('example relates no ChainSettings default');
    settings.spec[HUGE] = true;

    const answer = await post(app, '/hooks/node-profile/sync', body);

    expect(answer.status).toBe(429);
    expect(answer.text.length).toBeLessThan(16 * 1024);
    const quoted = `Unrecognized key: "${HUGE}"`;
    expect((answer.json as { error: { message: string } }).error.message).toBe(
      `ChainSettings default: spec: ${quoted.slice(0, 256)}… (${quoted.length} characters)`,
    );
  });

  it('a 4 MB unknown settings key → a chain status condition of a few KB', async () => {
    const body = exampleBody('scheduling-chain.sync.json') as { parent: { spec: Record<string, unknown> } };
    body.parent.spec[HUGE] = true;

    const answer = await post(app, '/hooks/scheduling-chain/sync', body);

    expect(answer.status).toBe(200);
    expect(answer.text.length).toBeLessThan(16 * 1024);
    const { status } = answer.json as { status: { conditions: { reason: string; message: string }[] } };
    expect(status.conditions[0]).toMatchObject({
      reason: 'InvalidSettings',
      message: expect.stringMatching(/^spec: /),
    });
  });
});

describe('the log line', () => {
  it('names a 4 MB parent name by its first 253 characters and its length', async () => {
    const logged: Record<string, unknown>[] = [];
    const app = createApp({
      logger: { ...SILENT_LOGGER, info: (fields) => logged.push(fields as Record<string, unknown>) },
    });
    const name = 'n'.repeat(4 * 1024 * 1024);
    const body = exampleBody('node-devices-check.sync.json') as { parent: { metadata: { name: string } } };
    body.parent.metadata.name = name;

    const answer = await post(app, '/hooks/node-devices-check/sync', body);

    expect(answer.status).toBe(200);
    expect(logged[0]?.['parent']).toBe(`${name.slice(0, 253)}… (${name.length} characters)`);
  });
});

describe('__proto__ keys', () => {
  it('are sent back like any other key when observed children are kept (labels, annotations, spec)', async () => {
    const child =
      '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor",' +
      `"metadata":{"name":"${FLAVOR}","labels":{"__proto__":"label"},"annotations":{"__proto__":"annotation"}},` +
      '"spec":{"nodeLabels":{"__proto__":"node-label"},"__proto__":{"polluted":"yes"}}}';

    const answer = await post(
      createApp(),
      '/hooks/scheduling-chain/sync',
      chainWithObservedSpec('1').replace(
        /"ResourceFlavor\.kueue\.x-k8s\.io\/v1beta2":\{"[^"]+":\{.*?"extra":1\}\}\}/,
        `"${FLAVOR_KEY}":{"${FLAVOR}":${child}}`,
      ),
    );

    expect(answer.status).toBe(200);
    expect(answer.text).toContain(
      '"metadata":{"annotations":{"__proto__":"annotation"},"labels":{"__proto__":"label"},' +
        `"name":"${FLAVOR}"},"spec":{"__proto__":{"polluted":"yes"},"nodeLabels":{"__proto__":"node-label"}}`,
    );
    expect(answer.text).not.toContain('"polluted":"yes"}}}');
  });
});

describe('a __proto__ key in the settings', () => {
  it('is invalid settings (429 naming it), not a selector that silently lost its condition', async () => {
    const body = exampleBody('instance-type.sync.json') as {
      related: Record<string, Record<string, { spec: Record<string, unknown> }>>;
    };
    const settings = body.related['ChainSettings.worker.gpustack.ai/v1alpha1']?.['default'];
    if (settings === undefined) throw new Error('example relates no ChainSettings default');
    settings.spec['localQueueNamespaces'] = JSON.parse('{"matchLabels":{"__proto__":"queues"}}');

    const answer = await post(createApp(), '/hooks/instance-type/sync', body);

    expect(answer.status).toBe(429);
    expect(answer.json).toEqual({
      error: {
        code: 'InvalidSettings',
        message:
          'ChainSettings default: spec.localQueueNamespaces.matchLabels.__proto__: "__proto__" is not a valid key',
      },
    });
  });
});
