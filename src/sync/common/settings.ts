/**
 * @module Settings as the controllers read them: from the ChainSettings `default` the chain writes
 * from its spec (node-profile, instance-type), or (the admission checker) from the SchedulingChain
 * `default` itself.
 */
import {
  MANUFACTURER_NAMES,
  SCHEDULING_CHAIN_NAME,
  resolveSettings,
  type KubeObject,
  type ManufacturerName,
  type Settings,
  type SettingsResolution,
  type Toleration,
} from '../../k8s/index.js';
import { MANUFACTURERS } from '../../contracts/index.js';
import { CHAIN_SETTINGS_KEY, SCHEDULING_CHAIN_KEY } from './related.js';

type ObjectMap = Readonly<Record<string, Readonly<Record<string, KubeObject>>>>;

/** Settings from the related chain named `default`; absent → every default. */
export function settingsFromRelated(related: ObjectMap): SettingsResolution {
  const chain = Object.values(related[SCHEDULING_CHAIN_KEY] ?? {}).find(
    (c) => c.metadata.name === SCHEDULING_CHAIN_NAME,
  );
  return resolveSettings(chain?.['spec']);
}

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

/** The manufacturers whose devices take part in the chain. */
export function enabledManufacturers(settings: Settings): ReadonlySet<ManufacturerName> {
  return new Set(settings.manufacturers?.map((m) => m.name) ?? MANUFACTURER_NAMES);
}

/** The device resource of a manufacturer, honouring a per-manufacturer override. */
export function deviceResourceOf(settings: Settings, mfr: ManufacturerName): string {
  return settings.manufacturers?.find((m) => m.name === mfr)?.resourceName ?? MANUFACTURERS[mfr].deviceResource;
}

/** Tolerations of a flavor: by default a device flavor tolerates its manufacturer's device taint. */
export function flavorTolerations(settings: Settings, mfr: ManufacturerName | undefined): Toleration[] {
  if (mfr === undefined) return settings.flavorTolerations?.cpu ?? [];
  return settings.flavorTolerations?.device ?? [{ key: deviceResourceOf(settings, mfr), operator: 'Exists' }];
}
