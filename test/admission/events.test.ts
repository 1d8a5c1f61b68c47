/**
 * The checker's Warning Events for an over-committed card (issue 46, docs/operations.md#faults):
 * one per claim holding the card, once per card and reason, only while leading; the Event as the
 * API takes it.
 */
import { describe, expect, it } from 'vitest';
import {
  Reconciler,
  warningEvent,
  type ClaimWarning,
  type CheckWriter,
  type Snapshot,
} from '../../src/admission/index.js';
import { resolveSettings } from '../../src/contracts/index.js';
import type { ReceivedResourceClaim } from '../../src/dra/index.js';
import { allocatedClaim, nodePool } from '../dra/builders.js';
import { recordingLogger } from './support.js';

const noWrites: CheckWriter = { write: () => Promise.resolve() };

function snapshot(claims: ReceivedResourceClaim[]): Snapshot {
  const resolution = resolveSettings(undefined);
  if (!resolution.ok) throw new Error(resolution.message);
  const slices = nodePool('gpu-a', 2);
  return {
    workloads: [],
    flavors: {},
    nodes: [],
    pods: [],
    settings: resolution.settings,
    dra: {
      slices: new Map(slices.map((s) => [s.metadata.name, s])),
      claims: new Map(claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c])),
      templates: new Map(),
    },
  };
}

const whole = allocatedClaim('whole', [{ node: 'gpu-a', device: 'card-1' }]);
const share = allocatedClaim('share', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '1Gi' } }]);
const other = allocatedClaim('other', [{ node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '2Gi' } }]);

function reconciler(leading: () => boolean = () => true, fail = false) {
  const warnings: ClaimWarning[] = [];
  const logger = recordingLogger();
  const r = new Reconciler({
    writer: noWrites,
    checkName: 'gpustack-node-devices',
    logger,
    mayWrite: leading,
    events: {
      warn: async (w) => {
        if (fail) throw new Error('503');
        warnings.push(w);
      },
    },
  });
  return { r, warnings, logger };
}

describe('Warning Events for an over-committed card', () => {
  it('tells each claim holding the card once, names the card, the counters and the claims; again only when it changes', async () => {
    const { r, warnings, logger } = reconciler();
    await r.pass(snapshot([share]));
    expect(warnings).toEqual([]);
    await r.pass(snapshot([whole, share]));
    expect(warnings.map((w) => `${w.namespace}/${w.claim} ${w.reason}`)).toEqual([
      'team-a/whole CardOvercommitted',
      'team-a/share CardOvercommitted',
    ]);
    expect(warnings[0]?.note).toMatch(
      /^card-1 on gpu-a \(nvidia\.gpustack\.ai\) is over-committed: it is held whole and shared at once; .*memory 82944Mi held of 81920Mi.*; held by team-a\/whole \(whole\), team-a\/share \(memory 1024Mi\)$/,
    );
    expect(logger.entries.filter((e) => e.message === 'card over-committed')).toHaveLength(1);
    await r.pass(snapshot([whole, share]));
    expect(warnings).toHaveLength(2);
    // Another claim joins: the card is told again, to every holder.
    await r.pass(snapshot([whole, share, other]));
    expect(warnings).toHaveLength(5);
    // Back within its counters, then over again: told again.
    await r.pass(snapshot([share]));
    await r.pass(snapshot([whole, share]));
    expect(warnings).toHaveLength(7);
  });

  it('records nothing while another checker leads, and tries again after a failed recording', async () => {
    let leading = false;
    const follower = reconciler(() => leading);
    await follower.r.pass(snapshot([whole, share]));
    expect(follower.warnings).toEqual([]);
    leading = true;
    await follower.r.pass(snapshot([whole, share]));
    expect(follower.warnings).toHaveLength(2);

    const failing = reconciler(() => true, true);
    await failing.r.pass(snapshot([whole, share]));
    await failing.r.pass(snapshot([whole, share]));
    expect(failing.logger.entries.filter((e) => e.message === 'card over-committed')).toHaveLength(2);
  });

  it('writes an events.k8s.io/v1 Warning regarding the claim, its note cut at the API limit', () => {
    const event = warningEvent(
      { namespace: 'team-a', claim: 'share', reason: 'CardOvercommitted', note: 'x'.repeat(2000) },
      'checker-0',
      new Date('2026-12-05T08:00:00.123Z'),
    ) as Record<string, unknown> & { note: string };
    expect(event).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `share.${(BigInt(Date.parse('2026-12-05T08:00:00.123Z')) * 1_000_000n).toString(16)}`,
        namespace: 'team-a',
      },
      eventTime: '2026-12-05T08:00:00.123000Z',
      reportingController: 'gpustack.ai/admission-checker',
      reportingInstance: 'checker-0',
      reason: 'CardOvercommitted',
      type: 'Warning',
      regarding: { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', namespace: 'team-a', name: 'share' },
    });
    expect(event.note).toHaveLength(1024);
  });
});
