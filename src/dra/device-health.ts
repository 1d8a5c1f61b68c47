/**
 * @module Device taints for cards that disappeared or failed detection (resource.k8s.io/v1
 * `Device.taints`, beta in 1.36): the slice publisher keeps publishing a card it published before
 * and taints both of its devices `NoSchedule`, so no new claim lands on it while claims already
 * allocated keep their card (the scheduler honours the taint; nothing is evicted). A card that
 * comes back healthy, with the same UUID, loses the taint. Pure: the publisher calls it per slice build.
 */
import { SYSTEM_DOMAIN } from '../nodefeature/index.js';
import { sharedDeviceName, wholeDeviceName } from './constants.js';

export const UNHEALTHY_TAINT_KEY = `${SYSTEM_DOMAIN}/unhealthy`;

/** Why a card is unhealthy; the taint's value. */
export type CardProblem = 'missing' | 'replaced' | 'detection-failed';

/** resource.k8s.io/v1 DeviceTaint (strict: we send it). */
export interface DeviceTaint {
  readonly key: string;
  readonly value: string;
  readonly effect: 'NoSchedule';
}

/** A card as published or detected: its index (the device name) and UUID. */
export interface CardIdentity {
  readonly index: number;
  readonly uuid: string;
}

/**
 * The problem of each card published before (`previous`) that the current detection does not
 * report healthy: detection of the manufacturer failed as a whole (`detectionFailed`: every
 * previous card), the index is gone (`missing`), or another card sits at the index (`replaced`,
 * UUIDs differ; a card whose UUID was unknown before or now is taken as the same card).
 */
export function cardProblems(
  previous: readonly CardIdentity[],
  current: readonly CardIdentity[],
  detectionFailed: boolean,
): Map<number, CardProblem> {
  const problems = new Map<number, CardProblem>();
  const now = new Map(current.map((c) => [c.index, c]));
  for (const card of previous) {
    const seen = now.get(card.index);
    if (detectionFailed) problems.set(card.index, 'detection-failed');
    else if (!seen) problems.set(card.index, 'missing');
    else if (card.uuid !== '' && seen.uuid !== '' && card.uuid !== seen.uuid) problems.set(card.index, 'replaced');
  }
  return problems;
}

/** The taints of both devices of every problem card, by device name (`card-<i>`, `card-<i>-shared`). */
export function deviceTaints(problems: ReadonlyMap<number, CardProblem>): Map<string, DeviceTaint[]> {
  const taints = new Map<string, DeviceTaint[]>();
  for (const [index, problem] of problems) {
    const taint: DeviceTaint = { key: UNHEALTHY_TAINT_KEY, value: problem, effect: 'NoSchedule' };
    taints.set(wholeDeviceName(index), [taint]);
    taints.set(sharedDeviceName(index), [taint]);
  }
  return taints;
}
