/**
 * @module Card health: which cards published before are missing, replaced or undetectable now
 * (`cardProblems`, the kubelet plugin's health stream), and the device taint (resource.k8s.io/v1
 * `Device.taints`, on by default in 1.36) the slices carry for a card whose manufacturer's
 * detection failed: `NoSchedule`, so no new claim lands on it while claims already allocated keep
 * their card (nothing is evicted). A card back healthy loses it.
 */
import type { Card } from '../contracts/index.js';
import { SYSTEM_DOMAIN } from '../nodefeature/index.js';

export const UNHEALTHY_TAINT_KEY = `${SYSTEM_DOMAIN}/unhealthy`;

/** Why a card is unhealthy; the taint's value. */
export type CardProblem = 'missing' | 'replaced' | 'detection-failed';

/** resource.k8s.io/v1 DeviceTaint (strict: we send it). */
export interface DeviceTaint {
  readonly key: string;
  readonly value: string;
  readonly effect: 'NoSchedule';
}

/** A card as published or detected: its index (the device name) and UUID (`''` when unknown). */
export interface CardIdentity extends Pick<Card, 'index'> {
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

/** The taint both devices of an unhealthy card are published with. */
export function unhealthyTaint(problem: CardProblem): DeviceTaint {
  return { key: UNHEALTHY_TAINT_KEY, value: problem, effect: 'NoSchedule' };
}
