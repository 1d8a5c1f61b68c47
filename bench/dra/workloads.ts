/**
 * @module What `npm run bench:dra` puts on the control plane, as pure functions: the cards of a
 * bench Node, the ResourceSlices of each layout (ours from `desiredSlices`, the product's builder;
 * the baseline of one plain device per card), the workloads (how many Pods of which claim fill the
 * cards) and the ResourceClaim and Pod of each. No I/O: test/bench/dra-workloads.test.ts checks them.
 */
import {
  ATTRIBUTE,
  CORES_PER_CARD,
  MODE_SHARED,
  MODE_WHOLE,
  RESOURCE_API_VERSION,
  UNITS_PER_CARD,
  SHARES_PER_CARD,
  buildDeviceClasses,
  desiredSlices,
  driverName,
  sharedClassName,
  wholeClassName,
  type DeviceClass,
  type ResourceSlice,
  type SliceCard,
} from '../../src/dra/index.js';

export const CARDS_PER_NODE = 8;
/** The bench's card: an H100 80GB as NVML reports it (the e2e's DRA machines carry the same). */
export const CARD_MEMORY_MIB = 81559;
const MANUFACTURER = 'nvidia';
export const DRIVER = driverName(MANUFACTURER);
/** The memory a "20Gi share" asks; the card's other capacities take the shared device's defaults. */
export const SHARE_20GI_MIB = 20 * 1024;

/**
 * `ours`: the slices the agent publishes (a counter slice with one counter set per card, a device
 * slice with a whole and a shared device per card, both consuming the card's counters). `baseline`:
 * one slice of one plain device per card, our whole device without `consumesCounters` (same
 * attributes and capacities, so the same DeviceClass selects it), no counters, no shared device.
 * `no-counters`: ours without the counter slice and `consumesCounters` (whole and shared devices,
 * nothing tying them, so it over-allocates): what the counters alone cost the scheduler.
 * `shared-only`: one slice of our shared devices without counters, one multi-allocatable device per
 * card; a whole card is a claim on it for the card's whole capacity (memory, cores, units), which
 * no share then fits beside: the counter model's exclusion without counters.
 */
export const LAYOUTS = ['ours', 'baseline', 'no-counters', 'shared-only'] as const;
export type Layout = (typeof LAYOUTS)[number];

/**
 * `whole`: one whole card per Pod. `share`: one share per Pod at the shared device's defaults (a
 * tenth of units, memory and cores: 10 per card). `share-20gi`: a share of 20Gi memory (3 per 80 GB
 * card; units and cores at their defaults). `mixed`: one whole card to every ten default shares,
 * interleaved (4 whole cards and 4 cards of shares per Node when full).
 */
export const WORKLOADS = ['whole', 'share', 'share-20gi', 'mixed'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** The workloads a layout can serve: the baseline has no shared device, so whole cards only. */
export function workloadsOf(layout: Layout): readonly Workload[] {
  return layout === 'baseline' ? ['whole'] : WORKLOADS;
}

export type ClaimKind = 'whole' | 'share' | 'share-20gi';

/** Shares of one card a Pod of `kind` takes: memory bounds the 20Gi share, units the default one. */
export function perCard(kind: ClaimKind): number {
  if (kind === 'whole') return 1;
  if (kind === 'share') return SHARES_PER_CARD;
  return Math.min(SHARES_PER_CARD, Math.floor(CARD_MEMORY_MIB / SHARE_20GI_MIB));
}

/** The Pods that fill `nodes` Nodes of CARDS_PER_NODE cards exactly, in the order they are created. */
export function fillPlan(workload: Workload, nodes: number): ClaimKind[] {
  const cards = nodes * CARDS_PER_NODE;
  if (workload !== 'mixed') return Array.from({ length: cards * perCard(workload) }, () => workload);
  // Half the cards whole, half in default shares (CARDS_PER_NODE is even): 1 whole to every SHARES_PER_CARD shares.
  const out: ClaimKind[] = [];
  for (let i = 0; i < cards / 2; i++)
    out.push('whole', ...Array.from({ length: SHARES_PER_CARD }, () => 'share' as const));
  return out;
}

/**
 * The Pods of one run: the whole fill when it has at most `window` Pods, else its first `window`
 * (the workload's mix kept: a prefix of the interleaved plan).
 */
export function runPlan(workload: Workload, nodes: number, window: number): { kinds: ClaimKind[]; fill: boolean } {
  const plan = fillPlan(workload, nodes);
  return plan.length <= window ? { kinds: plan, fill: true } : { kinds: plan.slice(0, window), fill: false };
}

/** `bench-00042`: sorted names, as many digits as the largest size needs. */
export function nodeName(i: number): string {
  return `bench-${String(i).padStart(5, '0')}`;
}

/** The CARDS_PER_NODE cards of one bench Node. */
export function benchCards(node: string): SliceCard[] {
  return Array.from({ length: CARDS_PER_NODE }, (_, index) => ({
    manufacturer: MANUFACTURER,
    index,
    uuid: `GPU-${node}-${index}`,
    product: 'NVIDIA H100 80GB HBM3',
    memoryMiB: CARD_MEMORY_MIB,
    family: 'Hopper',
    computeCapability: '9.0',
    driverVersion: '570.124.06',
    pciBusId: `0000:${(0x18 + index * 0x10).toString(16).padStart(2, '0')}:00.0`,
    numaNode: index < CARDS_PER_NODE / 2 ? 0 : 1,
  }));
}

/** The slices the agent would publish for a bench Node (generation 1, as after its first publish). */
export function ourSlices(node: string): ResourceSlice[] {
  const { pools, problems } = desiredSlices({ name: node }, benchCards(node));
  if (problems.length > 0 || pools.length !== 1) throw new Error(`bench cards refused: ${problems.join('; ')}`);
  return (pools[0]?.slices ?? []).map((s) => ({ ...s, spec: { ...s.spec, pool: { ...s.spec.pool, generation: 1 } } }));
}

type Device = NonNullable<ResourceSlice['spec']['devices']>[number];

function stringAttribute(device: Device | undefined, name: string): string | undefined {
  const value = device?.attributes[name];
  return value !== undefined && 'string' in value ? value.string : undefined;
}

function withoutCounters(device: Device): Omit<Device, 'consumesCounters'> {
  const { consumesCounters: _counters, ...rest } = device;
  return rest;
}

/** A bench object: what the API server accepts, not our strict schema (the baseline has no counters). */
export interface SliceObject {
  readonly apiVersion: string;
  readonly kind: 'ResourceSlice';
  readonly metadata: { readonly name: string };
  readonly spec: Record<string, unknown>;
}

/** The slices of one Node in `layout`. */
export function layoutSlices(layout: Layout, node: string): SliceObject[] {
  const ours = ourSlices(node);
  if (layout === 'ours') return ours;
  const devices = ours.flatMap((s) => s.spec.devices ?? []);
  const kept =
    layout === 'baseline'
      ? devices.filter((d) => stringAttribute(d, ATTRIBUTE.mode) === MODE_WHOLE).map(withoutCounters)
      : layout === 'shared-only'
        ? devices.filter((d) => stringAttribute(d, ATTRIBUTE.mode) === MODE_SHARED).map(withoutCounters)
        : devices.map(withoutCounters);
  const deviceSlice = ours.find((s) => s.spec.devices !== undefined) as ResourceSlice;
  return [
    {
      apiVersion: RESOURCE_API_VERSION,
      kind: 'ResourceSlice',
      metadata: { name: deviceSlice.metadata.name },
      spec: { ...deviceSlice.spec, pool: { ...deviceSlice.spec.pool, resourceSliceCount: 1 }, devices: kept },
    },
  ];
}

/** The product key our builder gives the bench card (the model classes are named after it). */
export function benchProductKey(): string {
  const device = ourSlices(nodeName(0)).flatMap((s) => s.spec.devices ?? [])[0];
  const key = stringAttribute(device, ATTRIBUTE.productKey);
  if (key === undefined) throw new Error('the bench card has no productKey attribute');
  return key;
}

/** Every DeviceClass the chain emits for a cluster of bench Nodes. */
export function benchDeviceClasses(): DeviceClass[] {
  return buildDeviceClasses(new Set([MANUFACTURER]), [benchProductKey()]);
}

/** The class a claim of `kind` names: the manufacturer's whole or shared class (shared-only: always shared). */
export function classOf(kind: ClaimKind, layout: Layout = 'ours'): string {
  return kind === 'whole' && layout !== 'shared-only' ? wholeClassName(MANUFACTURER) : sharedClassName(MANUFACTURER);
}

/** What a claim of `kind` asks of its device's capacity; undefined: the device's defaults or none. */
function capacityOf(kind: ClaimKind, layout: Layout): Record<string, string> | undefined {
  if (kind === 'share-20gi') return { memory: `${SHARE_20GI_MIB}Mi` };
  if (kind === 'whole' && layout === 'shared-only')
    return { memory: `${CARD_MEMORY_MIB}Mi`, cores: String(CORES_PER_CARD), units: String(UNITS_PER_CARD) };
  return undefined;
}

export interface BenchObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly spec: Record<string, unknown>;
}

/**
 * One request for one device of the kind's class; the 20Gi share asks memory, a whole card in the
 * shared-only layout the card's whole capacity, the others nothing.
 */
export function claimObject(name: string, namespace: string, kind: ClaimKind, layout: Layout = 'ours'): BenchObject {
  const capacity = capacityOf(kind, layout);
  return {
    apiVersion: RESOURCE_API_VERSION,
    kind: 'ResourceClaim',
    metadata: { name, namespace },
    spec: {
      devices: {
        requests: [
          {
            name: 'card',
            exactly: {
              deviceClassName: classOf(kind, layout),
              allocationMode: 'ExactCount',
              count: 1,
              ...(capacity ? { capacity: { requests: capacity } } : {}),
            },
          },
        ],
      },
    },
  };
}

/** A pause Pod (never runs: no kubelet) that uses the claim `claim` and requests nothing else. */
export function podObject(name: string, namespace: string, claim: string): BenchObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      resourceClaims: [{ name: 'card', resourceClaimName: claim }],
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'card' }] } }],
    },
  };
}

/**
 * A Node as a kubelet registers it, Ready and with room for every share it can hold (the API
 * server keeps the status of a created Node; TaintNodesByCondition is off, so no not-ready taint).
 */
export function nodeObject(name: string, now: string): Record<string, unknown> {
  const capacity = { cpu: '128', memory: '1Ti', pods: String(CARDS_PER_NODE * SHARES_PER_CARD + 20) };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'kubernetes.io/hostname': name },
    },
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'bench stand-in for the kubelet',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}
