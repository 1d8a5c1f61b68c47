/** @module InstanceType status: from the observed ClusterQueue and the related flavors, never from the desired list. */
import {
  buildCondition,
  type Condition,
  type ConditionInput,
  type InstanceTypeStatus,
  type OutputCondition,
} from '../../k8s/index.js';
import type { FlavorSelection } from './flavors.js';
import type { ReceivedObject } from './schema.js';

export type ReadyProblem = 'InvalidSpec' | 'UnknownManufacturer' | 'NoFlavors';

export interface StatusInput {
  readonly entrance: string;
  readonly inactive: boolean;
  readonly terminating: boolean;
  readonly acceleratable: boolean;
  readonly selection: FlavorSelection;
  readonly problem?: { readonly reason: ReadyProblem; readonly message: string };
  /** `TopologyReady` (`topology-status.ts`); absent while the type is being deleted. */
  readonly topology?: ConditionInput;
  readonly observedQueue: ReceivedObject | undefined;
}

function phaseOf(input: StatusInput): InstanceTypeStatus['phase'] {
  if (input.terminating) return 'Terminating';
  if (input.inactive) return 'Inactive';
  const active = input.observedQueue?.status?.conditions?.find((c) => c.type === 'Active');
  return active?.status === 'True' ? 'Active' : 'Pending';
}

function readyCondition(
  input: StatusInput,
  capacity: number,
  previous: readonly Condition[] | undefined,
  now: string,
): OutputCondition {
  if (input.terminating) {
    return buildCondition(
      {
        type: 'Ready',
        status: 'False',
        reason: 'Terminating',
        message: 'the ClusterQueue and LocalQueues are being removed',
      },
      previous,
      now,
    );
  }
  if (input.problem) return buildCondition({ type: 'Ready', status: 'False', ...input.problem }, previous, now);
  const unit = input.acceleratable ? 'cards' : 'cores';
  const message = `${input.selection.flavors.length} flavors, capacity ${capacity} ${unit}`;
  return buildCondition({ type: 'Ready', status: 'True', reason: 'Synced', message }, previous, now);
}

function degradedCondition(
  input: StatusInput,
  previous: readonly Condition[] | undefined,
  now: string,
): OutputCondition {
  const { selection } = input;
  if (input.terminating) {
    return buildCondition(
      { type: 'Degraded', status: 'False', reason: 'Terminating', message: 'the instance type is being deleted' },
      previous,
      now,
    );
  }
  const [first] = selection.dropped;
  if (first === undefined) {
    return buildCondition(
      { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'every matching flavor is in the queue' },
      previous,
      now,
    );
  }
  const names = selection.dropped.map((d) => d.name);
  const message =
    first.reason === 'TooManyFlavors' || selection.dropped.some((d) => d.reason === 'TooManyFlavors')
      ? `kept the 64 largest flavors by capacity; left out ${names.length}: ${names.slice(0, 10).join(', ')}`
      : `flavors with unreadable count/capacity labels left out: ${names.slice(0, 10).join(', ')}`;
  const reason = selection.dropped.some((d) => d.reason === 'TooManyFlavors')
    ? 'TooManyFlavors'
    : 'InvalidFlavorLabels';
  return buildCondition({ type: 'Degraded', status: 'True', reason, message }, previous, now);
}

/** Status of an InstanceType: phase, entrance LocalQueue, flavors, capacity (cards or cores), conditions. */
export function computeInstanceTypeStatus(
  input: StatusInput,
  previous: readonly Condition[] | undefined,
  now: string,
): InstanceTypeStatus {
  const flavors = input.terminating ? [] : input.selection.flavors;
  const capacity = flavors.reduce((sum, f) => sum + f.capacity, 0);
  return {
    phase: phaseOf(input),
    entrance: input.entrance,
    flavors: flavors.map((f) => f.name),
    capacity: String(capacity),
    conditions: [
      readyCondition(input, capacity, previous, now),
      degradedCondition(input, previous, now),
      ...(input.topology !== undefined && !input.terminating ? [buildCondition(input.topology, previous, now)] : []),
    ],
  };
}
