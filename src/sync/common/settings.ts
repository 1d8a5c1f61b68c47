/** @module Settings as every controller reads them: from the related SchedulingChain `default`. */
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
import { MANUFACTURERS } from '../../nodefeature/index.js';
import { SCHEDULING_CHAIN_KEY } from './related.js';

type ObjectMap = Readonly<Record<string, Readonly<Record<string, KubeObject>>>>;

/** Settings from the related chain named `default`; absent → every default. */
export function settingsFromRelated(related: ObjectMap): SettingsResolution {
  const chain = Object.values(related[SCHEDULING_CHAIN_KEY] ?? {}).find(
    (c) => c.metadata.name === SCHEDULING_CHAIN_NAME,
  );
  return resolveSettings(chain?.['spec']);
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
