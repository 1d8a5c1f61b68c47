/**
 * @module Observed Kueue objects and Namespaces, kueue-wrapper style:
 * `makeResourceFlavor().device('nvidia-tesla-t4', 4).nodes(2).obj()`,
 * `makeClusterQueue('gpustack-…').active().obj()`, `makeNamespace('team-a').terminating().obj()`.
 * They look like what the API server returns (uid, resourceVersion, status), not like our output.
 */
import type { KubeObject } from '../../src/k8s/index.js';

const KUEUE = 'kueue.x-k8s.io/v1beta2';
const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';
export const NODE_DEVICES_CONTROLLER = 'worker.gpustack.ai/node-devices';

/** An observed object: the loose shape every hook request schema accepts. */
export type Observed = KubeObject & { spec?: unknown; status?: Record<string, unknown> };

function condition(type: string, status: string, reason: string, message = ''): Record<string, string> {
  return { type, status, reason, message, lastTransitionTime: '2026-02-01T08:00:00Z' };
}

export class ResourceFlavorWrapper {
  private key = 'generic';
  private keyPrefix = G;
  private count = 16;
  private nodeCount = 1;
  private capacityText: string | undefined;
  private osName = 'linux';
  private archName = 'amd64';
  private acceleratable = false;
  private deletionTimestamp: string | undefined;
  private readonly extraLabels: Record<string, string> = {};

  constructor(private readonly fixedName: string | undefined) {}

  /** A device flavor: `<count>` cards per node of aKey `key`. */
  device(key: string, count: number): this {
    this.key = key;
    this.keyPrefix = A;
    this.count = count;
    this.acceleratable = true;
    return this;
  }
  /** A CPU flavor: `<cores>` per node of gKey `key`. */
  cpu(key: string, cores: number): this {
    this.key = key;
    this.keyPrefix = G;
    this.count = cores;
    this.acceleratable = false;
    return this;
  }
  /** How many nodes pool into the flavor (capacity = nodes × count). */
  nodes(n: number): this {
    this.nodeCount = n;
    return this;
  }
  /** Overrides the `.capacity` label text (garbage allowed). */
  capacity(text: string): this {
    this.capacityText = text;
    return this;
  }
  os(os: string): this {
    this.osName = os;
    return this;
  }
  arch(arch: string): this {
    this.archName = arch;
    return this;
  }
  label(key: string, value: string): this {
    this.extraLabels[key] = value;
    return this;
  }
  deleting(at = '2026-02-28T00:00:00Z'): this {
    this.deletionTimestamp = at;
    return this;
  }

  name(): string {
    const suffix = this.keyPrefix === A ? 'd' : 'c';
    return (
      this.fixedName ?? `gpustack-${this.key.replace(/_/g, '-')}-${this.osName}-${this.archName}-${this.count}${suffix}`
    );
  }

  obj(): Observed {
    const keyLabel = `${this.keyPrefix}${this.key}`;
    const name = this.name();
    return {
      apiVersion: KUEUE,
      kind: 'ResourceFlavor',
      metadata: {
        name,
        uid: `uid-${name}`,
        resourceVersion: '4242',
        labels: {
          'resource.gpustack.ai/type': 'nodes',
          'kubernetes.io/os': this.osName,
          'kubernetes.io/arch': this.archName,
          'feature.gpustack.ai/acceleratable': String(this.acceleratable),
          [keyLabel]: 'true',
          [`${keyLabel}.count`]: String(this.count),
          [`${keyLabel}.capacity`]: this.capacityText ?? String(this.count * this.nodeCount),
          ...this.extraLabels,
        },
        ...(this.deletionTimestamp !== undefined
          ? { deletionTimestamp: this.deletionTimestamp, finalizers: ['kueue.x-k8s.io/resource-in-use'] }
          : {}),
      },
      spec: {
        nodeLabels: { 'gpustack.ai/managed': 'true', [keyLabel]: 'true', [`${keyLabel}.count`]: String(this.count) },
      },
    };
  }
}

/** A ResourceFlavor as the chain emits it; named from its pool unless `name` is given. */
export function makeResourceFlavor(name?: string): ResourceFlavorWrapper {
  return new ResourceFlavorWrapper(name);
}

export class ClusterQueueWrapper {
  private conditions: Record<string, string>[] = [];
  constructor(private readonly name: string) {}
  /** Kueue reports the queue `Active=True` (it can admit). */
  active(): this {
    this.conditions = [condition('Active', 'True', 'Ready', 'Can admit new workloads')];
    return this;
  }
  inactive(reason = 'FlavorNotFound'): this {
    this.conditions = [condition('Active', 'False', reason)];
    return this;
  }
  obj(): Observed {
    return {
      apiVersion: KUEUE,
      kind: 'ClusterQueue',
      metadata: { name: this.name, uid: `uid-${this.name}`, finalizers: ['kueue.x-k8s.io/resource-in-use'] },
      spec: { namespaceSelector: {}, stopPolicy: 'None' },
      status: { conditions: this.conditions },
    };
  }
}

export function makeClusterQueue(name: string): ClusterQueueWrapper {
  return new ClusterQueueWrapper(name);
}

/** An observed LocalQueue of `clusterQueue` in `namespace`. */
export function makeLocalQueue(name: string, namespace: string, clusterQueue: string): Observed {
  return {
    apiVersion: KUEUE,
    kind: 'LocalQueue',
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      annotations: { 'schedule.gpustack.ai/cluster-queue': clusterQueue },
    },
    spec: { clusterQueue, stopPolicy: 'None' },
  };
}

export class AdmissionCheckWrapper {
  private controllerName = NODE_DEVICES_CONTROLLER;
  private conditions: Record<string, string>[] | undefined;
  private deletionTimestamp: string | undefined;
  constructor(private readonly name: string) {}
  controller(name: string): this {
    this.controllerName = name;
    return this;
  }
  /** node-devices-check has marked it `Active=True`. */
  active(): this {
    this.conditions = [
      condition('Active', 'True', 'Ready', 'the gpustack-node-devices checker answers for this check'),
    ];
    return this;
  }
  conditionsAs(conditions: Record<string, string>[]): this {
    this.conditions = conditions;
    return this;
  }
  deleting(at = '2026-02-28T00:00:00Z'): this {
    this.deletionTimestamp = at;
    return this;
  }
  obj(): Observed {
    return {
      apiVersion: KUEUE,
      kind: 'AdmissionCheck',
      metadata: {
        name: this.name,
        uid: `uid-${this.name}`,
        ...(this.deletionTimestamp !== undefined ? { deletionTimestamp: this.deletionTimestamp } : {}),
      },
      spec: { controllerName: this.controllerName },
      ...(this.conditions !== undefined ? { status: { conditions: this.conditions } } : {}),
    };
  }
}

/** Our per-card check by default (`gpustack-node-devices`, our controllerName). */
export function makeAdmissionCheck(name = 'gpustack-node-devices'): AdmissionCheckWrapper {
  return new AdmissionCheckWrapper(name);
}

export class NamespaceWrapper {
  private readonly labels: Record<string, string>;
  private phase = 'Active';
  private deletionTimestamp: string | undefined;
  constructor(private readonly name: string) {
    this.labels = { 'kubernetes.io/metadata.name': name };
  }
  label(key: string, value: string): this {
    this.labels[key] = value;
    return this;
  }
  /** Being deleted: `deletionTimestamp` set and phase `Terminating`. */
  terminating(at = '2026-02-28T00:00:00Z'): this {
    this.phase = 'Terminating';
    this.deletionTimestamp = at;
    return this;
  }
  obj(): Observed {
    return {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: this.name,
        uid: `uid-ns-${this.name}`,
        labels: { ...this.labels },
        ...(this.deletionTimestamp !== undefined ? { deletionTimestamp: this.deletionTimestamp } : {}),
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: this.phase },
    };
  }
}

export function makeNamespace(name: string): NamespaceWrapper {
  return new NamespaceWrapper(name);
}
