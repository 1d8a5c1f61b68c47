/**
 * Hostile bodies through the whole app: nothing a request carries can reach a recursion limit
 * (a value nested past the bound is a 400 naming the field, not a 500).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/server/index.js';
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

  it.each([2_000, 100_000])(
    'an observed child spec nested %i levels deep → 400 naming the spec, not a 500',
    async (depth) => {
      const answer = await post(app, '/hooks/scheduling-chain/sync', chainWithObservedSpec(nestedArrayText(depth)));

      expect(answer.status).toBe(400);
      const path = `children.${FLAVOR_KEY}.${FLAVOR}.spec`;
      expect(answer.json).toEqual({
        error: {
          code: 'BadHookRequest',
          message: `${path}: nests deeper than 100 levels`,
          issues: [{ path, code: 'custom', message: 'nests deeper than 100 levels' }],
        },
      });
    },
  );

  it('a spec right at the bound is kept and sent back whole', async () => {
    // spec → extra → 98 arrays: 100 levels.
    const answer = await post(app, '/hooks/scheduling-chain/sync', chainWithObservedSpec(nestedArrayText(98)));

    expect(answer.status).toBe(200);
    const { children } = answer.json as { children: { metadata: { name: string }; spec: { extra: unknown } }[] };
    expect(children.find((c) => c.metadata.name === FLAVOR)?.spec.extra).toEqual(JSON.parse(nestedArrayText(98)));
  });
});
