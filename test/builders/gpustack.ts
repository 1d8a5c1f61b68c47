/**
 * @module Our CRDs as the API server returns them:
 * `makeSchedulingChain().spec({ mixedOnNode: false }).obj()`,
 * `makeInstanceType('gpustack-nvidia-tesla-t4-linux-amd64').device('nvidia-tesla-t4').inactive().obj()`.
 */
import type { Observed } from './kueue.js';

const GPUSTACK = 'worker.gpustack.ai/v1alpha1';

export interface ConditionLike {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
}

export class SchedulingChainWrapper {
  private specValue: Record<string, unknown> = {};
  private conditions: ConditionLike[] | undefined;
  constructor(private readonly name: string) {}
  /** The spec as written (unchecked: invalid settings are a scenario). */
  spec(spec: Record<string, unknown>): this {
    this.specValue = { ...spec };
    return this;
  }
  /** The previous status conditions (their `lastTransitionTime` must survive an unchanged sync). */
  previousConditions(conditions: ConditionLike[]): this {
    this.conditions = conditions;
    return this;
  }
  obj(): Observed {
    return {
      apiVersion: GPUSTACK,
      kind: 'SchedulingChain',
      metadata: { name: this.name, uid: `uid-chain-${this.name}`, generation: 1 },
      spec: { ...this.specValue },
      ...(this.conditions !== undefined ? { status: { conditions: this.conditions.map((c) => ({ ...c })) } } : {}),
    };
  }
}

/** The settings object; `default` is the only one the controllers read. */
export function makeSchedulingChain(name = 'default'): SchedulingChainWrapper {
  return new SchedulingChainWrapper(name);
}

export class InstanceTypeWrapper {
  private readonly specValue: Record<string, unknown> = {
    acceleratable: false,
    generalGroup: 'generic',
    os: 'linux',
    arch: 'amd64',
  };
  private conditions: ConditionLike[] | undefined;
  private deletionTimestamp: string | undefined;
  private readonly labels: Record<string, string> = { 'schedule.gpustack.ai/derived-from-node': 'true' };
  constructor(private readonly name: string) {}
  /** A device pool of aKey `key`. */
  device(key: string): this {
    Object.assign(this.specValue, { acceleratable: true, acceleratorGroup: key });
    return this;
  }
  /** A CPU pool of gKey `key`. */
  cpu(key = 'generic'): this {
    this.specValue['acceleratable'] = false;
    this.specValue['generalGroup'] = key;
    delete this.specValue['acceleratorGroup'];
    return this;
  }
  os(os: string): this {
    this.specValue['os'] = os;
    return this;
  }
  arch(arch: string): this {
    this.specValue['arch'] = arch;
    return this;
  }
  displayName(text: string): this {
    this.specValue['displayName'] = text;
    return this;
  }
  description(text: string): this {
    this.specValue['description'] = text;
    return this;
  }
  inactive(value = true): this {
    this.specValue['inactive'] = value;
    return this;
  }
  unitResources(cpu: string, ram: string): this {
    this.specValue['unitResources'] = { cpu, ram };
    return this;
  }
  localStorage(size: string): this {
    this.specValue['localStorage'] = size;
    return this;
  }
  label(key: string, value: string): this {
    this.labels[key] = value;
    return this;
  }
  previousConditions(conditions: ConditionLike[]): this {
    this.conditions = conditions;
    return this;
  }
  deleting(at = '2026-02-28T00:00:00Z'): this {
    this.deletionTimestamp = at;
    return this;
  }
  /** Written by an admin, not derived from a node: without `schedule.gpustack.ai/derived-from-node`. */
  byAdmin(): this {
    delete this.labels['schedule.gpustack.ai/derived-from-node'];
    return this;
  }
  /** What a user applies: name, labels and spec, none of the API server's own fields. */
  manifest(): {
    apiVersion: string;
    kind: string;
    metadata: { name: string; labels?: Record<string, string> };
    spec: Record<string, unknown>;
  } {
    return {
      apiVersion: GPUSTACK,
      kind: 'InstanceType',
      metadata: { name: this.name, ...(Object.keys(this.labels).length > 0 ? { labels: { ...this.labels } } : {}) },
      spec: structuredClone(this.specValue),
    };
  }
  obj(): Observed {
    return {
      apiVersion: GPUSTACK,
      kind: 'InstanceType',
      metadata: {
        name: this.name,
        uid: `uid-${this.name}`,
        generation: 1,
        labels: { ...this.labels },
        ...(this.deletionTimestamp !== undefined
          ? {
              deletionTimestamp: this.deletionTimestamp,
              finalizers: ['metacontroller.io/compositecontroller-gpustack-instance-type'],
            }
          : {}),
      },
      spec: structuredClone(this.specValue),
      ...(this.conditions !== undefined ? { status: { conditions: this.conditions.map((c) => ({ ...c })) } } : {}),
    };
  }
}

/** An InstanceType named like its ClusterQueue; a generic linux/amd64 CPU pool until told otherwise. */
export function makeInstanceType(name: string): InstanceTypeWrapper {
  return new InstanceTypeWrapper(name);
}
