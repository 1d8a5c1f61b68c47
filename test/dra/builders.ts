/**
 * @module resource.k8s.io/v1 objects as docs/architecture.md#resourceslices models them, spelled out here (not built by
 * src/dra): per node one pool with a slice of counter sets and a slice of devices, two devices per
 * card (`card-<i>` whole, `card-<i>-shared` by capacity) consuming the card's counter set; claims
 * with allocation results; templates with `exactly` requests. Every object goes through the
 * receiving schema, as the checker's would.
 */
import {
  ReceivedResourceClaimSchema,
  ReceivedResourceClaimTemplateSchema,
  ReceivedResourceSliceSchema,
  type ReceivedResourceClaim,
  type ReceivedResourceClaimTemplate,
  type ReceivedResourceSlice,
} from '../../src/dra/index.js';

export const NVIDIA = 'nvidia.gpustack.ai';
export const H100_KEY = 'nvidia-h100-80gb-hbm3';
/** 80 GiB in MiB, as the agent publishes memory. */
export const CARD_MIB = 81920;

export interface PoolOptions {
  readonly driver?: string;
  readonly productKey?: string;
  readonly generation?: number;
  readonly memoryMiB?: number;
  /** `pool.resourceSliceCount` to claim; default: the two slices built. */
  readonly sliceCount?: number;
  /** Leave out the counter slice (an incomplete pool when `sliceCount` says 2). */
  readonly devicesOnly?: boolean;
}

function deviceCapacity(memoryMiB: number) {
  return {
    memory: {
      value: `${memoryMiB}Mi`,
      requestPolicy: { default: `${Math.floor(memoryMiB / 10)}Mi`, validRange: { min: '1Gi' } },
    },
    units: { value: '1600000', requestPolicy: { default: '160000', validRange: { min: '1' } } },
    cores: { value: '100', requestPolicy: { default: '10', validRange: { min: '1' } } },
  };
}

function wholeCapacity(memoryMiB: number) {
  return { memory: { value: `${memoryMiB}Mi` }, units: { value: '1600000' }, cores: { value: '100' } };
}

/** The slices of one node's pool with `cards` cards. */
export function nodePool(node: string, cards: number, options: PoolOptions = {}): ReceivedResourceSlice[] {
  const driver = options.driver ?? NVIDIA;
  const productKey = options.productKey ?? H100_KEY;
  const generation = options.generation ?? 1;
  const memoryMiB = options.memoryMiB ?? CARD_MIB;
  const pool = { name: node, generation, resourceSliceCount: options.sliceCount ?? 2 };
  const indexes = Array.from({ length: cards }, (_, i) => i);
  const counters = {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: `${node}-${driver}-counters-g${generation}` },
    spec: {
      driver,
      nodeName: node,
      pool,
      sharedCounters: indexes.map((i) => ({
        name: `card-${i}-counters`,
        counters: { memory: { value: `${memoryMiB}Mi` }, units: { value: '1600000' } },
      })),
    },
  };
  const consumes = (i: number) => [
    {
      counterSet: `card-${i}-counters`,
      counters: { memory: { value: `${memoryMiB}Mi` }, units: { value: '1600000' } },
    },
  ];
  const attributes = (i: number, mode: string) => ({
    productKey: { string: productKey },
    index: { int: i },
    mode: { string: mode },
  });
  const devices = {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceSlice',
    metadata: { name: `${node}-${driver}-devices-g${generation}` },
    spec: {
      driver,
      nodeName: node,
      pool,
      devices: indexes.flatMap((i) => [
        {
          name: `card-${i}`,
          attributes: attributes(i, 'whole'),
          // No request policy on the whole device: the API allows one only where allowMultipleAllocations is set.
          capacity: wholeCapacity(memoryMiB),
          consumesCounters: consumes(i),
        },
        {
          name: `card-${i}-shared`,
          attributes: attributes(i, 'shared'),
          capacity: deviceCapacity(memoryMiB),
          allowMultipleAllocations: true,
          consumesCounters: consumes(i),
        },
      ]),
    },
  };
  const slices = options.devicesOnly ? [devices] : [counters, devices];
  return slices.map((s) => ReceivedResourceSliceSchema.parse(s));
}

export interface Allocated {
  readonly node: string;
  readonly device: string;
  readonly driver?: string;
  readonly consumed?: Readonly<Record<string, string>>;
}

/** An allocated claim holding `devices` (reserved for a pod unless `reserved` is false). */
export function allocatedClaim(name: string, devices: readonly Allocated[], reserved = true): ReceivedResourceClaim {
  return ReceivedResourceClaimSchema.parse({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name, namespace: 'team-a' },
    spec: { devices: { requests: [] } },
    status: {
      allocation: {
        devices: {
          results: devices.map((d, i) => ({
            request: `r${i}`,
            driver: d.driver ?? NVIDIA,
            pool: d.node,
            device: d.device,
            ...(d.consumed ? { consumedCapacity: d.consumed } : {}),
          })),
        },
      },
      ...(reserved ? { reservedFor: [{ resource: 'pods', name: `${name}-pod`, uid: `uid-${name}` }] } : {}),
    },
  });
}

export interface TemplateRequest {
  readonly deviceClassName: string;
  readonly count?: number;
  readonly allocationMode?: string;
  readonly capacity?: Readonly<Record<string, string>>;
}

export function claimTemplate(name: string, requests: readonly TemplateRequest[]): ReceivedResourceClaimTemplate {
  return ReceivedResourceClaimTemplateSchema.parse({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaimTemplate',
    metadata: { name, namespace: 'team-a' },
    spec: {
      spec: {
        devices: {
          requests: requests.map((r, i) => ({
            name: `r${i}`,
            exactly: {
              deviceClassName: r.deviceClassName,
              ...(r.allocationMode ? { allocationMode: r.allocationMode } : { count: r.count ?? 1 }),
              ...(r.capacity ? { capacity: { requests: r.capacity } } : {}),
            },
          })),
        },
      },
    },
  });
}
