/**
 * The checker's DeviceTaintRule watch: the version comes from discovery (resource.k8s.io/v1 before
 * v1beta2); a cluster that serves neither is said once in the log and counts as listed with no
 * rules, so the ledger runs on the slices' own taints; discovery that fails is retried.
 */
import { describe, expect, it } from 'vitest';
import { TaintRuleWatch } from '../../src/admission/index.js';
import type { KubeApi } from '../../src/api-client/index.js';
import { DEVICE_TAINT_RULES_NOT_SERVED } from '../../src/dra/index.js';
import { eventually, recordingLogger } from './support.js';

/** A KubeApi whose discovery answers `served` (group version → resources), the rest unused. */
function discoveryOnly(answer: (path: string) => unknown): KubeApi & { gets: string[] } {
  const gets: string[] = [];
  const unused = () => Promise.reject(new Error('not expected'));
  return {
    gets,
    get: (path) => {
      gets.push(path);
      return Promise.resolve().then(() => answer(path));
    },
    patch: unused,
    create: unused,
    replace: unused,
    remove: unused,
    listEach: (path, onItem) => {
      gets.push(`list ${path}`);
      void onItem;
      return Promise.resolve('1');
    },
    watch: (_path, options) =>
      new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true })),
  };
}

describe('TaintRuleWatch', () => {
  it('without DeviceTaintRule served: one warning naming what serves it, listed with no rules', async () => {
    const api = discoveryOnly(() => undefined);
    const logger = recordingLogger();
    let changes = 0;
    const watch = new TaintRuleWatch(api, { logger, onChange: () => changes++ });
    const stop = new AbortController();
    const running = watch.run(stop.signal);
    await eventually(() => watch.status.synced, 'listed with none');
    expect(api.gets).toEqual(['/apis/resource.k8s.io/v1', '/apis/resource.k8s.io/v1beta2']);
    expect(logger.entries).toHaveLength(1);
    expect(logger.entries[0]).toMatchObject({ level: 'warn' });
    expect(logger.entries[0]?.message).toContain(DEVICE_TAINT_RULES_NOT_SERVED);
    expect(watch.store.size).toBe(0);
    expect(changes).toBe(1);
    stop.abort();
    await running;
  });

  it('watches v1beta2 where only v1beta2 serves it (Kubernetes 1.36 with the gate), after a failed discovery', async () => {
    let calls = 0;
    const api = discoveryOnly((path) => {
      if (calls++ === 0) throw new Error('connection refused');
      return path.endsWith('/v1beta2') ? { resources: [{ name: 'devicetaintrules' }] } : { resources: [] };
    });
    const logger = recordingLogger();
    const watch = new TaintRuleWatch(api, { logger, onChange: () => undefined, backoff: { initialMs: 5, maxMs: 5 } });
    const stop = new AbortController();
    const running = watch.run(stop.signal);
    await eventually(() => watch.status.synced, 'listed');
    expect(api.gets).toContain('list /apis/resource.k8s.io/v1beta2/devicetaintrules');
    expect(logger.entries.map((e) => e.message)).toEqual([
      'discovery of DeviceTaintRule failed; will try again after a backoff',
      'watching DeviceTaintRules',
    ]);
    stop.abort();
    await running;
  });
});
