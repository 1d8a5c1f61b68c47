/**
 * The hook table: each hook owns its schema and its runner, the runner typed by the schema's output
 * (a runner that expects something else does not compile), and the server reaches the runner only
 * through `prepare`, which parses first.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HOOKS, defineHook, hookRoutes, hookTable } from '../../src/server/index.js';

const CountSchema = z.object({ count: z.number().int(), unit: z.string().default('cards') });

describe('defineHook', () => {
  const hook = defineHook({
    schema: CountSchema,
    // `request` is inferred from the schema: a number and a defaulted string, no cast anywhere.
    run: (request) => ({ ok: true, response: { label: `${request.count} ${request.unit.toUpperCase()}` } }),
  });

  it('runs on what the schema outputs (defaults filled in)', () => {
    const prepared = hook.prepare({ count: 8 });

    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    expect(prepared.run({ now: '2026-01-01T00:00:00Z' })).toEqual({ ok: true, response: { label: '8 CARDS' } });
  });

  it('never reaches the runner with a body that fails the schema', () => {
    const prepared = hook.prepare({ count: 'eight' });

    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.error.issues.map((i) => i.path)).toEqual([['count']]);
  });

  it('rejects, at compile time, a runner that expects another request type', () => {
    const mismatched = () =>
      defineHook({
        schema: CountSchema,
        // @ts-expect-error the runner must take what CountSchema outputs, not a string count
        run: (request: { count: string }) => ({ ok: true, response: { label: request.count } }),
      });

    expect(mismatched).not.toThrow();
  });

  it('keeps null label values for decorator answers only', () => {
    expect(HOOKS['node-profile'].sync.keepNull).toBe(true);
    expect(hookTable().filter((h) => h.definition.keepNull)).toHaveLength(1);
  });
});

describe('the hook table', () => {
  it('lists every route once, in table order', () => {
    expect(hookRoutes()).toEqual([
      '/hooks/node-profile/customize',
      '/hooks/node-profile/sync',
      '/hooks/node-shard/customize',
      '/hooks/node-shard/sync',
      '/hooks/scheduling-chain/customize',
      '/hooks/scheduling-chain/sync',
      '/hooks/instance-type/customize',
      '/hooks/instance-type/sync',
      '/hooks/instance-type/finalize',
      '/hooks/node-devices-check/sync',
    ]);
  });
});
