/**
 * @module Objects the `gpustack-node-devices` checker lists, kueue-wrapper style:
 * `makeWorkload('train').podSet('workers', 2, [gpus(8)]).obj()`, `gpuNode('gpu-a', 8)`,
 * `boundPod('p', 'gpu-a', [gpus(4)])`. Labels are spelled out here, not computed by
 * src/nodefeature, and every object goes through the receiving schema, as the checker's would.
 */
import type { Node, ReceivedToleration, Taint } from '../../src/k8s/index.js';
import {
  ReceivedResourceFlavorSchema,
  PodSchema,
  WorkloadSchema,
  type Container,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from '../../src/placement/index.js';

export const A = 'acceleratable.feature.gpustack.ai/';
export const H100 = 'nvidia-h100-80gb-hbm3';
export const H100_FLAVOR = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d';
export const CHECK = 'gpustack-node-devices';
export const NVIDIA_CREDITS = 'credits.gpustack.ai/nvidia';

export type Quantity = string | number;

/** A container asking for `n` cards of `resource`, as a request (default) or a limit only. */
export function gpus(n: Quantity, where: 'requests' | 'limits' = 'requests', resource = 'nvidia.com/gpu'): Container {
  return { name: 'main', resources: { [where]: { [resource]: n, cpu: '1' } } };
}

/** A container asking for no cards. */
export function cpuOnly(): Container {
  return { name: 'main', resources: { requests: { cpu: '2', memory: '4Gi' } } };
}

export interface PodSetOptions {
  readonly initContainers?: readonly Container[];
  /** Resource → flavor, as Kueue assigns; default: the nvidia credits on the 8-card H100 flavor. */
  readonly flavors?: Readonly<Record<string, string>>;
  /** `podSetAssignments[].count` (partial admission); default: absent. */
  readonly admittedCount?: number;
  /** Leave the PodSet out of `podSetAssignments`. */
  readonly unassigned?: boolean;
  /** The pod template's `spec.tolerations`. */
  readonly tolerations?: readonly ReceivedToleration[];
  /** The pod template's `spec.resourceClaims` (DRA): claim name → ResourceClaimTemplate name. */
  readonly claimTemplates?: Readonly<Record<string, string>>;
  /** `podSetAssignments[].topologyAssignment` (Kueue's TAS); default: absent. */
  readonly topologyAssignment?: unknown;
}

interface PodSetEntry {
  readonly name: string;
  readonly count: number;
  readonly containers: readonly Container[];
  readonly options: PodSetOptions;
}

export class WorkloadWrapper {
  private readonly podSets: PodSetEntry[] = [];
  private readonly conditions: Record<string, string>[] = [
    {
      type: 'QuotaReserved',
      status: 'True',
      reason: 'QuotaReserved',
      message: 'Quota reserved in ClusterQueue',
      lastTransitionTime: '2026-02-01T08:00:00Z',
    },
  ];
  private checks: string[] = [CHECK];
  private active: boolean | undefined;
  private withAdmission = true;

  constructor(private readonly name: string) {}

  podSet(name: string, count: number, containers: readonly Container[], options: PodSetOptions = {}): this {
    this.podSets.push({ name, count, containers, options });
    return this;
  }

  /** Sets (or replaces) a condition. */
  condition(type: string, status: string): this {
    const at = this.conditions.findIndex((c) => c.type === type);
    const entry = { type, status, reason: type, message: '', lastTransitionTime: '2026-02-01T08:00:00Z' };
    if (at >= 0) this.conditions[at] = entry;
    else this.conditions.push(entry);
    return this;
  }

  /** The names in `status.admissionChecks` (Kueue adds each check of the queue as `Pending`). */
  listedChecks(...names: string[]): this {
    this.checks = names;
    return this;
  }
  deactivated(): this {
    this.active = false;
    return this;
  }
  withoutAdmission(): this {
    this.withAdmission = false;
    return this;
  }

  private assignments(): Record<string, unknown>[] {
    return this.podSets
      .filter((p) => !p.options.unassigned)
      .map((p) => ({
        name: p.name,
        flavors: p.options.flavors ?? { [NVIDIA_CREDITS]: H100_FLAVOR },
        resourceUsage: {},
        ...(p.options.admittedCount !== undefined ? { count: p.options.admittedCount } : {}),
        ...(p.options.topologyAssignment !== undefined ? { topologyAssignment: p.options.topologyAssignment } : {}),
      }));
  }

  obj(): Workload {
    return WorkloadSchema.parse({
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'Workload',
      metadata: { name: this.name, namespace: 'team-a', uid: `uid-${this.name}` },
      spec: {
        queueName: 'gpustack-fnv64-0123456789abcdef',
        ...(this.active !== undefined ? { active: this.active } : {}),
        podSets: this.podSets.map((p) => ({
          name: p.name,
          count: p.count,
          template: {
            spec: {
              containers: p.containers,
              ...(p.options.initContainers ? { initContainers: p.options.initContainers } : {}),
              ...(p.options.tolerations ? { tolerations: p.options.tolerations } : {}),
              ...(p.options.claimTemplates
                ? {
                    resourceClaims: Object.entries(p.options.claimTemplates).map(([name, template]) => ({
                      name,
                      resourceClaimTemplateName: template,
                    })),
                  }
                : {}),
              restartPolicy: 'Never',
            },
          },
        })),
      },
      status: {
        conditions: this.conditions,
        ...(this.withAdmission
          ? {
              admission: {
                clusterQueue: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
                podSetAssignments: this.assignments(),
              },
            }
          : {}),
        admissionChecks: this.checks.map((name) => ({
          name,
          state: 'Pending',
          message: '',
          lastTransitionTime: '2026-02-01T08:00:00Z',
        })),
      },
    });
  }
}

export function makeWorkload(name = 'train'): WorkloadWrapper {
  return new WorkloadWrapper(name);
}

/** A device flavor as the chain emits it: its node labels pin managed, os, arch, the aKey and its count. */
export function deviceFlavor(
  aKey = H100,
  count = 8,
  name = `gpustack-${aKey}-linux-amd64-${count}d`,
): ReceivedResourceFlavor {
  return flavorWithNodeLabels(name, {
    'gpustack.ai/managed': 'true',
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    [`${A}${aKey}`]: 'true',
    [`${A}${aKey}.count`]: String(count),
  });
}

export function flavorWithNodeLabels(name: string, nodeLabels: Record<string, string>): ReceivedResourceFlavor {
  return ReceivedResourceFlavorSchema.parse({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name, uid: `uid-${name}` },
    spec: { nodeLabels },
  });
}

/** The flavor with `spec.tolerations` set, as Kueue will add them to the pods it admits there. */
export function withTolerations(
  flavor: ReceivedResourceFlavor,
  tolerations: readonly ReceivedToleration[],
): ReceivedResourceFlavor {
  return ReceivedResourceFlavorSchema.parse({ ...flavor, spec: { ...flavor.spec, tolerations } });
}

/** Flavors by name, as the checker's cache hands them over. */
export function flavorMap(...flavors: ReceivedResourceFlavor[]): Record<string, ReceivedResourceFlavor> {
  return Object.fromEntries(flavors.map((f) => [f.metadata.name, f]));
}

/** A managed linux/amd64 node with `count` cards of `aKey`. */
export function gpuNode(name: string, count: number, aKey = H100): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'gpustack.ai/managed': 'true',
        'feature.gpustack.ai/acceleratable': 'true',
        [`${A}${aKey}`]: 'true',
        [`${A}${aKey}.count`]: String(count),
      },
    },
    status: { capacity: { 'nvidia.com/gpu': String(count), cpu: '224' } },
  };
}

/** The node cordoned (`spec.unschedulable: true`), or uncordoned with `false`. */
export function cordoned(node: Node, unschedulable = true): Node {
  return { ...node, spec: { ...node.spec, unschedulable } };
}

/** The node with `taints` added to `spec.taints`. */
export function tainted(node: Node, ...taints: Taint[]): Node {
  return { ...node, spec: { ...node.spec, taints: [...(node.spec?.taints ?? []), ...taints] } };
}

/** A managed CPU-only node. */
export function cpuNode(name: string): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'gpustack.ai/managed': 'true',
        'feature.gpustack.ai/acceleratable': 'false',
      },
    },
  };
}

/** A Pod bound to `node` (`undefined`: not yet scheduled), in `phase`. */
export function boundPod(
  name: string,
  node: string | undefined,
  containers: readonly Container[],
  phase = 'Running',
  initContainers?: readonly Container[],
): Pod {
  return PodSchema.parse({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'team-b', uid: `uid-${name}` },
    spec: {
      ...(node !== undefined ? { nodeName: node } : {}),
      containers,
      ...(initContainers ? { initContainers } : {}),
    },
    status: { phase },
  });
}
