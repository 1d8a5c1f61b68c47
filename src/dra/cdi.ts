/**
 * @module The CDI spec of one prepared ResourceClaim (Container Device Interface): what the
 * container runtime injects for the claim's cards — the vendor's device nodes and visibility
 * variables, and for shares and slices their limits as variables. Shares and slices are NOT
 * isolated by hardware: the limits are variables a cooperating runtime or framework may honour.
 *
 * One spec file per claim (a transient spec, `<vendor>-<class>_<claim uid>.json`), so preparing
 * and unpreparing a claim writes or removes one file and two claims never touch the same file;
 * CDI device names carry the claim uid because a name must be unique among all specs of a kind.
 * Pure: the caller says which device nodes exist on the host and writes the file.
 */
import type { ManufacturerName } from '../k8s/index.js';
import type { AllocatedDevice } from './claim-allocation.js';
import { driverName } from './constants.js';
import type { CardIdentity } from './device-health.js';

/**
 * The CDI spec version we write: the oldest that allows what we use (device names starting with a
 * digit, the claim uid, need 0.5.0), so containerd 1.7's CDI library reads it too.
 */
export const CDI_VERSION = '0.5.0';
export const CDI_CLASS = 'card';
/** Where runtimes look for transient (dynamic) specs. */
export const DEFAULT_CDI_DIR = '/var/run/cdi';

/** `nvidia.gpustack.ai/card`. */
export function cdiKind(mfr: ManufacturerName): string {
  return `${driverName(mfr)}/${CDI_CLASS}`;
}

/** `nvidia.gpustack.ai-card_<uid>.json`: the transient spec file of one claim. */
export function cdiSpecFileName(mfr: ManufacturerName, claimUid: string): string {
  return `${driverName(mfr)}-${CDI_CLASS}_${claimUid.replace(/\//g, '_')}.json`;
}

/** What the plugin knows about one card on this node: its identity, and what the host tells of it. */
export interface CardFacts extends CardIdentity {
  /** The card's DRM nodes (`/dev/dri/card1`, `/dev/dri/renderD129`), read from sysfs by PCI address. */
  readonly drmNodes?: readonly string[];
  /** The device node's minor number where the driver tells it (NVIDIA: `/dev/nvidia<minor>`), else the index is used. */
  readonly minor?: number;
}

/** How one manufacturer's cards reach a container. */
interface VendorRuntime {
  /** Device nodes every container with a card of this vendor needs (control, memory management). */
  readonly controlNodes: readonly string[];
  /** A card's own device nodes. */
  cardNodes(card: CardFacts): string[];
  /** Visibility variables for the cards (in container order) a claim gives the container. */
  visibility(cards: readonly CardFacts[]): Record<string, string>;
}

/** 0,1,…: the container sees only the injected cards, so in-container indices restart at 0. */
const localIndices = (cards: readonly CardFacts[]) => cards.map((_, i) => String(i)).join(',');
/** UUIDs where every card has one (accepted by the runtime), else the container's indices. */
const uuidsOrLocal = (cards: readonly CardFacts[]) =>
  cards.every((c) => c.uuid !== '') ? cards.map((c) => c.uuid).join(',') : localIndices(cards);
/** Host ids, for variables a vendor's container runtime hook reads on the host. */
const hostIds = (cards: readonly CardFacts[], useUuid: boolean) =>
  cards.map((c) => (useUuid && c.uuid !== '' ? c.uuid : String(c.index))).join(',');
const drm = (card: CardFacts) => [...(card.drmNodes ?? [])];

/**
 * Device nodes and variables per manufacturer (README "Node side: CDI"). Candidates: the plugin
 * drops nodes the host does not have, so a node name a driver generation does not create costs
 * nothing. Where a vendor documents no variable, only our own `GPUSTACK_<MFR>_VISIBLE_DEVICES` is set.
 */
export const VENDOR_RUNTIMES: Readonly<Record<ManufacturerName, VendorRuntime>> = {
  nvidia: {
    controlNodes: ['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools'],
    cardNodes: (card) => [`/dev/nvidia${card.minor ?? card.index}`],
    visibility: (cards) => ({
      NVIDIA_VISIBLE_DEVICES: hostIds(cards, true),
      CUDA_VISIBLE_DEVICES: uuidsOrLocal(cards),
    }),
  },
  amd: {
    controlNodes: ['/dev/kfd'],
    cardNodes: drm,
    visibility: (cards) => ({ HIP_VISIBLE_DEVICES: localIndices(cards), ROCR_VISIBLE_DEVICES: uuidsOrLocal(cards) }),
  },
  hygon: {
    controlNodes: ['/dev/kfd', '/dev/mkfd'],
    cardNodes: drm,
    visibility: (cards) => ({ HIP_VISIBLE_DEVICES: localIndices(cards) }),
  },
  ascend: {
    controlNodes: ['/dev/davinci_manager', '/dev/devmm_svm', '/dev/hisi_hdc'],
    cardNodes: (card) => [`/dev/davinci${card.index}`],
    // ASCEND_RUNTIME_OPTIONS is needed only for virtual NPUs (vNPU), which we do not publish.
    visibility: (cards) => ({
      ASCEND_VISIBLE_DEVICES: hostIds(cards, false),
      ASCEND_RT_VISIBLE_DEVICES: localIndices(cards),
    }),
  },
  cambricon: {
    controlNodes: ['/dev/cambricon_ctl'],
    cardNodes: (card) => [`/dev/cambricon_dev${card.index}`, `/dev/cambricon_ipcm${card.index}`],
    visibility: (cards) => ({ MLU_VISIBLE_DEVICES: localIndices(cards) }),
  },
  iluvatar: {
    controlNodes: [],
    cardNodes: (card) => [`/dev/iluvatar${card.index}`],
    visibility: (cards) => ({ IX_VISIBLE_DEVICES: hostIds(cards, false), CUDA_VISIBLE_DEVICES: localIndices(cards) }),
  },
  metax: {
    controlNodes: ['/dev/mxcd'],
    cardNodes: drm,
    visibility: () => ({}),
  },
  mthreads: {
    controlNodes: [],
    cardNodes: (card) => [`/dev/mtgpu.${card.index}`, ...drm(card)],
    visibility: (cards) => ({ MTHREADS_VISIBLE_DEVICES: hostIds(cards, false) }),
  },
  thead: {
    controlNodes: [],
    cardNodes: () => [],
    visibility: () => ({}),
  },
};

/** Our own variables, set for every manufacturer (so no CDI device is ever without edits). */
export function gpustackVariable(mfr: ManufacturerName, what: string): string {
  return `GPUSTACK_${mfr.toUpperCase()}_${what}`;
}

/** CDI spec (the subset we write; field names as the CDI JSON schema spells them). */
export interface CdiDeviceNode {
  readonly path: string;
  readonly permissions?: string;
}
export interface CdiContainerEdits {
  readonly env?: readonly string[];
  readonly deviceNodes?: readonly CdiDeviceNode[];
}
export interface CdiSpec {
  readonly cdiVersion: string;
  readonly kind: string;
  readonly containerEdits?: CdiContainerEdits;
  readonly devices: readonly { readonly name: string; readonly containerEdits: CdiContainerEdits }[];
}

/** One allocated device and the card it is on. */
export interface ClaimCard {
  readonly allocated: AllocatedDevice;
  readonly card: CardFacts;
}

export interface ClaimSpec {
  readonly spec: CdiSpec;
  /** Per allocated device (same order as the input): its fully qualified CDI device id. */
  readonly cdiDeviceIds: readonly string[];
}

/** `<claim uid>-card-0`, `<claim uid>-card-0-shared-<share id>`: unique among every spec of the kind. */
export function cdiDeviceName(claimUid: string, allocated: AllocatedDevice): string {
  const share = allocated.shareID ? `-${allocated.shareID}` : '';
  return `${claimUid}-${allocated.device}${share}`.replace(/[^A-Za-z0-9_.:-]/g, '-');
}

const MIB = 1024 * 1024;

/** The limits of the claim's shares and slices, per card position: summed when one card carries several. */
function limitVariables(mfr: ManufacturerName, cards: readonly CardFacts[], devices: readonly ClaimCard[]): string[] {
  const env: string[] = [];
  cards.forEach((card, position) => {
    const shares = devices.filter((d) => d.card.index === card.index && d.allocated.shared);
    if (shares.length === 0 || devices.some((d) => d.card.index === card.index && !d.allocated.shared)) return;
    const sum = (key: 'memory' | 'cores' | 'units') => {
      const values = shares.map((s) => s.allocated.consumed?.[key]);
      return values.every((v) => v !== undefined) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : undefined;
    };
    const memory = sum('memory');
    const cores = sum('cores');
    const units = sum('units');
    if (memory !== undefined)
      env.push(`${gpustackVariable(mfr, `MEMORY_LIMIT_MIB_${position}`)}=${Math.floor(memory / MIB)}`);
    if (cores !== undefined) env.push(`${gpustackVariable(mfr, `CORES_LIMIT_PERCENT_${position}`)}=${cores}`);
    if (units !== undefined) env.push(`${gpustackVariable(mfr, `UNITS_${position}`)}=${units}`);
  });
  return env;
}

/**
 * The spec of one claim's devices of one manufacturer. Every CDI device carries the claim's whole
 * set of variables (the same values on each), so injecting several of the claim's devices into one
 * container never lets one device's value hide another's; each device adds its card's nodes.
 * `nodeExists` tells which device nodes the host has (others are left out: a runtime refuses to
 * create a container whose device node is missing).
 */
export function buildClaimSpec(
  mfr: ManufacturerName,
  claimUid: string,
  devices: readonly ClaimCard[],
  nodeExists: (path: string) => boolean,
): ClaimSpec {
  const vendor = VENDOR_RUNTIMES[mfr];
  const byIndex = new Map<number, CardFacts>();
  for (const d of devices) byIndex.set(d.card.index, d.card);
  const cards = [...byIndex.values()].sort((a, b) => a.index - b.index);
  const visibility = vendor.visibility(cards);
  const env = [
    ...Object.entries(visibility).map(([k, v]) => `${k}=${v}`),
    `${gpustackVariable(mfr, 'VISIBLE_DEVICES')}=${hostIds(cards, true)}`,
    ...limitVariables(mfr, cards, devices),
  ];
  const kind = cdiKind(mfr);
  const nodes = (paths: readonly string[]): CdiDeviceNode[] =>
    [...new Set(paths)].filter(nodeExists).map((path) => ({ path, permissions: 'rwm' }));
  const control = nodes(vendor.controlNodes);
  const specDevices: { name: string; containerEdits: CdiContainerEdits }[] = [];
  const ids: string[] = [];
  for (const d of devices) {
    const name = cdiDeviceName(claimUid, d.allocated);
    ids.push(`${kind}=${name}`);
    // Two requests of the claim may share one card (two shares): one CDI device per allocated device still.
    if (specDevices.some((s) => s.name === name)) continue;
    const cardNodes = nodes(vendor.cardNodes(d.card));
    specDevices.push({ name, containerEdits: { env, ...(cardNodes.length > 0 ? { deviceNodes: cardNodes } : {}) } });
  }
  return {
    spec: {
      cdiVersion: CDI_VERSION,
      kind,
      ...(control.length > 0 ? { containerEdits: { deviceNodes: control } } : {}),
      devices: specDevices,
    },
    cdiDeviceIds: ids,
  };
}
