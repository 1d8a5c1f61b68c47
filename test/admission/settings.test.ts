/**
 * The settings the checker decides with, from the SchedulingChain store: no chain → every default
 * (as the other controllers read it); an invalid spec is never replaced by defaults — the last
 * valid settings are kept, or nothing is decided when there were none — and is warned about once
 * per change.
 */
import { describe, expect, it } from 'vitest';
import { SettingsTracker, type ReceivedSchedulingChain } from '../../src/admission/index.js';
import type { Settings } from '../../src/k8s/index.js';
import { resolveSettings, deviceResourceOf } from '../../src/contracts/index.js';
import { recordingLogger } from './support.js';

const RENAMED = 'nvidia.com/gpu-h100';

function chain(spec: unknown, name = 'default'): ReceivedSchedulingChain {
  return { apiVersion: 'worker.gpustack.ai/v1alpha1', kind: 'SchedulingChain', metadata: { name }, spec };
}
const store = (...chains: ReceivedSchedulingChain[]) => new Map(chains.map((c) => [c.metadata.name, c]));
const defaults = (): Settings => (resolveSettings(undefined) as { settings: Settings }).settings;
const renamed = { manufacturers: [{ name: 'nvidia', resourceName: RENAMED }] };
const invalid = { manufacturers: [{ name: 'nvidia', resourceName: '' }] };

describe('SettingsTracker', () => {
  it('no SchedulingChain, or only one not named default: every default, no log', () => {
    const logger = recordingLogger();
    const settings = new SettingsTracker(logger);
    expect(settings.resolve(store())).toEqual(defaults());
    expect(settings.resolve(store(chain(renamed, 'other')))).toEqual(defaults());
    expect(logger.entries).toEqual([]);
  });

  it('the override is what deviceResourceOf answers for the manufacturer; the others keep the table', () => {
    const resolved = new SettingsTracker(recordingLogger()).resolve(store(chain(renamed))) as Settings;
    expect(deviceResourceOf(resolved, 'nvidia')).toBe(RENAMED);
    expect(deviceResourceOf(resolved, 'amd')).toBe('amd.com/gpu');
  });

  it('invalid from the start: nothing to decide with, warned once per change; valid again is logged and used', () => {
    const logger = recordingLogger();
    const settings = new SettingsTracker(logger);
    expect(settings.resolve(store(chain(invalid)))).toBeUndefined();
    expect(settings.resolve(store(chain(invalid)))).toBeUndefined();
    expect(logger.entries.map((e) => [e.level, e.fields['keeping']])).toEqual([['warn', 'no verdicts']]);
    expect(logger.entries[0]?.fields['err']).toMatch(/^spec\.manufacturers\[0\]\.resourceName: /);
    expect(settings.resolve(store(chain({ mixedOnNode: 'yes' })))).toBeUndefined();
    expect(logger.entries.filter((e) => e.level === 'warn')).toHaveLength(2);
    expect(deviceResourceOf(settings.resolve(store(chain(renamed))) as Settings, 'nvidia')).toBe(RENAMED);
    expect(logger.entries.at(-1)?.level).toBe('info');
  });

  it('invalid after valid: the last valid settings, not the defaults; warned once', () => {
    const logger = recordingLogger();
    const settings = new SettingsTracker(logger);
    const good = settings.resolve(store(chain(renamed)));
    expect(settings.resolve(store(chain(invalid)))).toBe(good);
    expect(settings.resolve(store(chain(invalid)))).toBe(good);
    expect(logger.entries.map((e) => [e.level, e.fields['keeping']])).toEqual([['warn', 'last valid settings']]);
  });
});
