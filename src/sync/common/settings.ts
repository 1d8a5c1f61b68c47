/**
 * @module Settings as the controllers read them from Metacontroller's related objects: the
 * ChainSettings `default` the chain writes from its spec (node-profile, instance-type). The
 * resolution itself, and what the settings mean per manufacturer, is src/contracts' (the admission
 * checker resolves them the same way).
 */
import { SCHEDULING_CHAIN_NAME, type KubeObject } from '../../k8s/index.js';
import { resolveSettings, type SettingsResolution } from '../../contracts/index.js';
import { CHAIN_SETTINGS_KEY } from './related.js';

type ObjectMap = Readonly<Record<string, Readonly<Record<string, KubeObject>>>>;

/**
 * Settings from the related ChainSettings named `default` (the chain's resolved settings, written
 * only when they change); `undefined` while there is none: no SchedulingChain, or one whose first
 * sync has not written it yet. Each reader decides what that absence means for it.
 */
export function settingsFromChainSettings(related: ObjectMap): SettingsResolution | undefined {
  const object = Object.values(related[CHAIN_SETTINGS_KEY] ?? {}).find(
    (c) => c.metadata.name === SCHEDULING_CHAIN_NAME,
  );
  return object === undefined ? undefined : resolveSettings(object['spec']);
}

/**
 * Settings for node-profile, from the related ChainSettings named `default` (the chain's resolved
 * settings, written only when they change). Absent — no SchedulingChain, or one whose first sync
 * has not written it yet; node-profile cannot tell which — → every default but
 * `nodeManagement: Manual`: a default `managed=true` in that window would be permanent on a
 * Manual chain (an existing `gpustack.ai/managed` is never overwritten), while a Manual stand-in
 * only delays an Automatic chain until its first sync creates the object, which re-syncs every Node.
 * @example settingsForNodes({}) // { ok: true, settings: { nodeManagement: 'Manual', generalKey: 'Generic', … } }
 */
export function settingsForNodes(related: ObjectMap): SettingsResolution {
  const written = settingsFromChainSettings(related);
  if (written !== undefined) return written;
  const defaults = resolveSettings({});
  return defaults.ok ? { ok: true, settings: { ...defaults.settings, nodeManagement: 'Manual' } } : defaults;
}
