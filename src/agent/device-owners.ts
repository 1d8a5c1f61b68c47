/**
 * @module Who owns this node's cards, per manufacturer (docs/architecture.md#device-owner): read every cycle from
 * the Node's `status.allocatable` (a device plugin advertises `<base>` there) and the ChainSettings
 * `default` (`spec.deviceOwners`, `spec.manufacturers[].resourceName`), decided by the pure rule
 * of src/dra. What still holds cards is asked only when a change of owner depends on it: the
 * ResourceClaims (cluster-wide: no field selector finds a claim by node) before DRA gives cards to
 * the device plugin, this node's Pods before DRA takes them from it.
 */
import { ApiError, withQuery, type KubeApi } from '../api-client/index.js';
import { deviceOwnerSettingOf, deviceResourceOf, resolveSettings } from '../contracts/index.js';
import {
  resourcePath,
  type SliceCard,
  claimsHoldingCards,
  decideOwnership,
  holdsDevicePluginCards,
  wantedOwner,
  type CardHolders,
  type DeviceOwner,
  type OwnerDecision,
} from '../dra/index.js';
import { GPUSTACK_API_VERSION, SCHEDULING_CHAIN_NAME, type ManufacturerName, type Settings } from '../k8s/index.js';

export type OwnerDecisions = ReadonlyMap<ManufacturerName, OwnerDecision>;

export interface OwnerDecider {
  /** The decision for each of `manufacturers` on this node now; rejects when the Node cannot be read. */
  decide(manufacturers: Iterable<ManufacturerName>): Promise<OwnerDecisions>;
}

const CHAIN_SETTINGS_PATH = `/apis/${GPUSTACK_API_VERSION}/chainsettings/${SCHEDULING_CHAIN_NAME}`;
const CLAIMS_PATH = resourcePath('resourceclaims');

interface NodeStatus {
  readonly status?: { readonly allocatable?: Record<string, unknown> };
}

/**
 * Reads the Node, the settings and (when needed) the holders through `api`. The owner last
 * decided per manufacturer is remembered, so the holders are asked only while a change is due;
 * after a restart nothing is remembered and they are asked once.
 */
export function apiOwnerDecider(
  api: KubeApi,
  node: string,
  onSettingsProblem: (message: string) => void = () => {},
): OwnerDecider {
  const last = new Map<ManufacturerName, DeviceOwner>();
  let settings: Settings | undefined;
  let reported: string | undefined;

  async function readSettings(): Promise<Settings> {
    let problem: string | undefined;
    try {
      const object = (await api.get(CHAIN_SETTINGS_PATH)) as { spec?: unknown } | undefined;
      const resolved = resolveSettings(object?.spec);
      if (resolved.ok) settings = resolved.settings;
      else problem = `ChainSettings default: ${resolved.message}; using the last good settings`;
    } catch (error) {
      // A missing RBAC rule (403) must not stop the slices: Auto for every manufacturer.
      if (!(error instanceof ApiError)) throw error;
      problem = `ChainSettings default not readable (${error.status}); deviceOwners taken as Auto`;
    }
    if (problem !== reported && problem !== undefined) onSettingsProblem(problem);
    reported = problem;
    const fallback = resolveSettings(undefined);
    return settings ?? (fallback.ok ? fallback.settings : ({} as Settings));
  }

  async function countClaims(mfr: ManufacturerName): Promise<number> {
    const claims: unknown[] = [];
    await api.listEach(CLAIMS_PATH, (item) => claims.push(item));
    return claimsHoldingCards(claims, mfr, node);
  }

  async function countPods(resource: string): Promise<number> {
    let pods = 0;
    await api.listEach(withQuery('/api/v1/pods', { fieldSelector: `spec.nodeName=${node}` }), (item) => {
      if (holdsDevicePluginCards(item, resource)) pods++;
    });
    return pods;
  }

  return {
    async decide(manufacturers) {
      const object = (await api.get(`/api/v1/nodes/${encodeURIComponent(node)}`)) as NodeStatus | undefined;
      if (object === undefined) throw new Error(`node ${node} not found: its device owners are read from its status`);
      const current = await readSettings();
      const out = new Map<ManufacturerName, OwnerDecision>();
      for (const mfr of [...new Set(manufacturers)].sort()) {
        const setting = deviceOwnerSettingOf(current, mfr);
        const resource = deviceResourceOf(current, mfr);
        const wish = wantedOwner(setting, resource, object.status?.allocatable);
        const holders: CardHolders = { claims: 0, devicePluginPods: 0 };
        // Asked only while a change is due (or after a restart, once): both are lists.
        if (last.get(mfr) !== wish.owner) {
          if (wish.owner === 'DevicePlugin') Object.assign(holders, { claims: await countClaims(mfr) });
          else Object.assign(holders, { devicePluginPods: await countPods(resource) });
        }
        const decision = decideOwnership(setting, resource, wish, holders);
        last.set(mfr, decision.owner);
        out.set(mfr, decision);
      }
      return out;
    },
  };
}

/**
 * The cards to publish given the owners: a manufacturer the device plugin owns is withheld (and
 * dropped from `keep`, so its pool is deleted even while its detection fails), one DRA is handing
 * over to the device plugin is published with `handover` (its devices tainted).
 */
export function draOwnedCards(
  cards: readonly SliceCard[],
  keep: ReadonlySet<string>,
  owners: OwnerDecisions,
): { cards: readonly SliceCard[]; keep: ReadonlySet<string> } {
  const owner = (mfr: string) => owners.get(mfr as ManufacturerName);
  return {
    cards: cards
      .filter((card) => owner(card.manufacturer)?.owner !== 'DevicePlugin')
      .map((card) => (owner(card.manufacturer)?.pending !== undefined ? { ...card, handover: true } : card)),
    keep: new Set([...keep].filter((mfr) => owner(mfr)?.owner !== 'DevicePlugin')),
  };
}
