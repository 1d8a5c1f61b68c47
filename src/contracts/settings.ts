/**
 * @module The settings, resolved one way for every reader: the SchedulingChain `default`'s spec
 * with every default filled in (`resolveSettings`), and what they mean for a manufacturer — is it
 * enabled, which device resource do its flavors, queues and the admission checker's counts use,
 * which taint do its flavors tolerate. The controllers read the settings from Metacontroller's
 * related objects (src/sync's adapters), the admission checker from its informer's store; both
 * end here, so the checker counts the very resource the chain built its queues for.
 */
import {
  MANUFACTURER_NAMES,
  SCHEDULING_CHAIN_NAME,
  SchedulingChainSpecSchema,
  summarizeIssues,
  type DeviceOwnerSetting,
  type KubeObject,
  type ManufacturerName,
  type Settings,
  type Toleration,
} from '../k8s/index.js';
import { MANUFACTURERS } from './manufacturers.js';

export type SettingsResolution =
  { readonly ok: true; readonly settings: Settings } | { readonly ok: false; readonly message: string };

/** A member met by {@link protoKeyPath}: a link to its parent, not a copy of its path. */
interface Member {
  readonly value: unknown;
  readonly parent: Member | undefined;
  readonly key: PropertyKey;
}

/**
 * The path of the first own `__proto__` key in a JSON value, walked without recursion. zod leaves
 * such a key out of what it parses, so `matchLabels: {__proto__: x}` would silently select more.
 * Linear: a path is built only for the key found, not copied at every member (quadratic in the depth).
 */
function protoKeyPath(value: unknown): PropertyKey[] | undefined {
  const pending: Member[] = [{ value, parent: undefined, key: '' }];
  for (let member = pending.pop(); member !== undefined; member = pending.pop()) {
    const current = member.value;
    if (current === null || typeof current !== 'object') continue;
    if (Object.hasOwn(current, '__proto__')) {
      const path: PropertyKey[] = ['__proto__'];
      for (let at: Member = member; at.parent !== undefined; at = at.parent) path.push(at.key);
      return path.reverse();
    }
    const parent = member;
    if (Array.isArray(current)) current.forEach((item: unknown, key) => pending.push({ value: item, parent, key }));
    else for (const [key, item] of Object.entries(current)) pending.push({ value: item, parent, key });
  }
  return undefined;
}

/**
 * Resolves the settings of a SchedulingChain spec (absent chain or spec → all defaults).
 * An invalid spec yields a bounded message naming the fields, never a throw.
 */
export function resolveSettings(spec: unknown): SettingsResolution {
  const proto = protoKeyPath(spec);
  if (proto !== undefined)
    return {
      ok: false,
      message: summarizeIssues([{ path: proto, message: '"__proto__" is not a valid key' }], ['spec']),
    };
  const parsed = SchedulingChainSpecSchema.safeParse(spec ?? {});
  if (parsed.success) return { ok: true, settings: parsed.data };
  return { ok: false, message: summarizeIssues(parsed.error.issues, ['spec']) };
}

/** Settings from the chain named `default` among `chains`; none → every default. */
export function settingsFromChains(chains: Iterable<KubeObject>): SettingsResolution {
  for (const chain of chains) if (chain.metadata.name === SCHEDULING_CHAIN_NAME) return resolveSettings(chain['spec']);
  return resolveSettings(undefined);
}

/** The manufacturers whose devices take part in the chain. */
export function enabledManufacturers(settings: Settings): ReadonlySet<ManufacturerName> {
  return new Set(settings.manufacturers?.map((m) => m.name) ?? MANUFACTURER_NAMES);
}

/** The device resource of a manufacturer, honouring a per-manufacturer override. */
export function deviceResourceOf(settings: Settings, mfr: ManufacturerName): string {
  return settings.manufacturers?.find((m) => m.name === mfr)?.resourceName ?? MANUFACTURERS[mfr].deviceResource;
}

/** Who owns a manufacturer's cards per the settings (docs/architecture.md#device-owner); `Auto` unless set. */
export function deviceOwnerSettingOf(settings: Settings, mfr: ManufacturerName): DeviceOwnerSetting {
  return settings.deviceOwners?.[mfr] ?? 'Auto';
}

/** Tolerations of a flavor: by default a device flavor tolerates its manufacturer's device taint. */
export function flavorTolerations(settings: Settings, mfr: ManufacturerName | undefined): Toleration[] {
  if (mfr === undefined) return settings.flavorTolerations?.cpu ?? [];
  return settings.flavorTolerations?.device ?? [{ key: deviceResourceOf(settings, mfr), operator: 'Exists' }];
}
