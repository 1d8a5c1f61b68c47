/**
 * Leader election on a Lease: the pure step (create, renew, take over, follow), candidates against
 * a fake API server that keeps Leases with resourceVersion preconditions, and two whole checkers of
 * which only the leader writes and the other takes over when the leader goes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LeaderElector,
  leaseRetryDelayMs,
  microTime,
  nextLeaseStep,
  startChecker,
  type Checker,
  type CheckWriter,
  type LeaderElectionOptions,
} from '../../src/admission/index.js';
import { ApiError, createKubeApi, type KubeApi } from '../../src/api-client/index.js';
import { CHECK, deviceFlavor, gpuNode, gpus, makeWorkload, boundPod } from '../placement/builders.js';
import { eventually, kubeConfigFor, recordingLogger, startFakeKube, type FakeKube } from './support.js';

const T0 = new Date('2026-03-01T12:00:00Z');
const NS = 'gpustack-system';

describe('nextLeaseStep', () => {
  const base = { namespace: NS, name: CHECK, identity: 'b', durationSeconds: 15, now: T0, expired: false };
  const held = (holder: string, extra: object = {}) => ({
    metadata: { name: CHECK, namespace: NS, resourceVersion: '7' },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: 15,
      acquireTime: '2026-03-01T11:00:00.000000Z',
      leaseTransitions: 2,
      ...extra,
    },
  });

  it('creates a missing Lease with this candidate as holder', () => {
    expect(nextLeaseStep({ ...base, lease: undefined })).toEqual({
      kind: 'create',
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: CHECK, namespace: NS },
        spec: {
          holderIdentity: 'b',
          leaseDurationSeconds: 15,
          acquireTime: '2026-03-01T12:00:00.000000Z',
          renewTime: '2026-03-01T12:00:00.000000Z',
          leaseTransitions: 0,
        },
      },
    });
  });

  it('follows a live holder, takes over an expired or released one and renews its own', () => {
    expect(nextLeaseStep({ ...base, lease: held('a') })).toEqual({ kind: 'follow', holder: 'a' });

    const takeover = nextLeaseStep({ ...base, lease: held('a'), expired: true });
    expect(takeover).toMatchObject({
      kind: 'replace',
      body: {
        metadata: { resourceVersion: '7' },
        spec: { holderIdentity: 'b', acquireTime: '2026-03-01T12:00:00.000000Z', leaseTransitions: 3 },
      },
    });
    expect(nextLeaseStep({ ...base, lease: held('') })).toMatchObject({
      kind: 'replace',
      body: { spec: { holderIdentity: 'b', leaseTransitions: 3 } },
    });

    const renewal = nextLeaseStep({ ...base, lease: held('b') });
    expect(renewal).toMatchObject({
      kind: 'replace',
      body: {
        metadata: { resourceVersion: '7' },
        spec: {
          holderIdentity: 'b',
          acquireTime: '2026-03-01T11:00:00.000000Z',
          renewTime: '2026-03-01T12:00:00.000000Z',
          leaseTransitions: 2,
        },
      },
    });
  });

  it('writes MicroTime with the six fractional digits the API server parses', () => {
    expect(microTime(new Date('2026-03-01T12:00:01.250Z'))).toBe('2026-03-01T12:00:01.250000Z');
  });
});

let api: FakeKube;
let now = T0.getTime();
const electors: LeaderElector[] = [];
const checkers: Checker[] = [];

beforeEach(async () => {
  api = await startFakeKube();
  now = T0.getTime();
});
afterEach(async () => {
  await Promise.all(checkers.splice(0).map((c) => c.stop()));
  await Promise.all(electors.splice(0).map((e) => e.stop()));
  await api.close();
});

function candidate(identity: string, extra: Partial<LeaderElectionOptions> = {}): LeaderElector {
  const elector = new LeaderElector({
    api: createKubeApi(kubeConfigFor(api.url)),
    logger: recordingLogger(),
    namespace: NS,
    name: CHECK,
    identity,
    clock: () => new Date(now),
    // The tests move time by `now`: wall and monotonic alike, unless a test steps one of them.
    monotonic: () => now,
    ...extra,
  });
  electors.push(elector);
  return elector;
}

const api0 = (): string => api.url;
const holder = () => (api.lease(`${NS}/${CHECK}`)?.['spec'] as { holderIdentity?: string } | undefined)?.holderIdentity;

describe('LeaderElector', () => {
  it('of two candidates one leads; the other takes over only after seeing the Lease unchanged for its duration', async () => {
    const a = candidate('a');
    const b = candidate('b');
    await a.tryOnce();
    await b.tryOnce();
    expect([a.leading(), b.leading(), holder()]).toEqual([true, false, 'a']);

    // a stops renewing (killed). b first saw this version at T0: 14 s later it still follows.
    now += 14_000;
    await b.tryOnce();
    expect(b.leading()).toBe(false);
    // a's own view: no renewal for 10 s (the renew deadline) and it no longer counts itself leader.
    expect(a.leading()).toBe(false);
    now += 1_000;
    await b.tryOnce();
    expect([b.leading(), holder()]).toEqual([true, 'b']);
    expect(api.lease(`${NS}/${CHECK}`)?.['spec']).toMatchObject({ leaseTransitions: 1 });

    // a comes back: the Lease is b's and alive, so a follows.
    await a.tryOnce();
    expect([a.leading(), b.leading()]).toEqual([false, true]);
  });

  it('a renewal keeps the Lease from expiring for the others', async () => {
    const a = candidate('a');
    const b = candidate('b');
    await a.tryOnce();
    for (let i = 0; i < 10; i++) {
      now += 2_000;
      await a.tryOnce();
      await b.tryOnce();
    }
    expect([a.leading(), b.leading(), holder()]).toEqual([true, false, 'a']);
  });

  it('two candidates racing for a free Lease: one wins, the other gets 409 and follows', async () => {
    const a = candidate('a');
    const b = candidate('b');
    await Promise.all([a.tryOnce(), b.tryOnce()]);
    expect([a.leading(), b.leading()].filter(Boolean)).toHaveLength(1);
    expect(holder()).toBe(a.leading() ? 'a' : 'b');
  });

  it('without RBAC for the Lease it never leads and says once, as an error, what the account lacks', async () => {
    api.forbidLeases();
    const logger = recordingLogger();
    const a = candidate('a', { logger });
    for (let i = 0; i < 3; i++) await a.tryOnce();
    expect(a.leading()).toBe(false);
    const errors = logger.entries.filter((e) => e.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(
      /may create leases and get and update the lease gpustack-node-devices in namespace gpustack-system.*--leader-elect false/,
    );
  });

  it('hands the Lease back on stop, so the next candidate leads at once', async () => {
    const a = candidate('a');
    const b = candidate('b');
    await a.tryOnce();
    await b.tryOnce();
    await a.stop();
    expect(holder()).toBe('');
    await b.tryOnce();
    expect([b.leading(), holder()]).toEqual([true, 'b']);
  });
});

/** The API of `base`, or, while `down` holds an error, that error for every request (an outage). */
function flaky(base: KubeApi): KubeApi & { down: Error | undefined } {
  const api = {
    down: undefined as Error | undefined,
    get: (path: string) => (api.down ? Promise.reject(api.down) : base.get(path)),
    create: (path: string, body: unknown) => (api.down ? Promise.reject(api.down) : base.create(path, body)),
    replace: (path: string, body: unknown) => (api.down ? Promise.reject(api.down) : base.replace(path, body)),
  };
  return api as unknown as KubeApi & { down: Error | undefined };
}

describe('LeaderElector and clocks', () => {
  it("a follower's wall clock stepping forward an hour does not expire a live Lease (one leader, not two)", async () => {
    const a = candidate('a');
    let bWall = now;
    let bMono = 0;
    const b = candidate('b', { clock: () => new Date(bWall), monotonic: () => bMono });
    await a.tryOnce();
    await b.tryOnce();
    // NTP (or a resumed VM) steps b's wall clock; 2 s pass on its monotonic clock. a has not renewed yet.
    bWall += 3_600_000;
    bMono += 2_000;
    await b.tryOnce();
    expect([a.leading(), b.leading(), holder()]).toEqual([true, false, 'a']);
  });

  it("a holder's wall clock stepping back does not stretch its renew deadline while renewals fail", async () => {
    let aWall = now;
    let aMono = 0;
    const api = flaky(createKubeApi(kubeConfigFor(api0())));
    const changes: boolean[] = [];
    const a = candidate('a', {
      api,
      clock: () => new Date(aWall),
      monotonic: () => aMono,
      onChange: (leading) => changes.push(leading),
    });
    await a.tryOnce();
    expect(a.leading()).toBe(true);
    api.down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    aWall -= 3_600_000;
    for (let i = 0; i < 4; i++) {
      aMono += 2_000;
      await a.tryOnce();
      expect(a.leading()).toBe(true);
    }
    aMono += 2_000;
    await a.tryOnce();
    expect(a.leading()).toBe(false);
    expect(changes).toEqual([true, false]);
  });

  it('a renewal that keeps failing: the holder stops leading before the follower may take over, never both', async () => {
    const aApi = flaky(createKubeApi(kubeConfigFor(api0())));
    const a = candidate('a', { api: aApi });
    const b = candidate('b');
    await a.tryOnce();
    await b.tryOnce();
    // a's requests fail (its node lost the network); b still reaches the API server.
    aApi.down = new ApiError(503, 'PUT', '/apis/coordination.k8s.io/v1/…', 'unavailable', 1000);
    const seen: string[] = [];
    for (let t = 0; t < 20; t++) {
      now += 1_000;
      await a.tryOnce();
      await b.tryOnce();
      expect(a.leading() && b.leading()).toBe(false);
      seen.push(a.leading() ? 'a' : b.leading() ? 'b' : '-');
    }
    // a leads until its 10 s renew deadline, nobody for 5 s, b from the 15 s lease duration.
    expect(seen.join('')).toBe('aaaaaaaaa-----bbbbbb');
  });
});

describe('leaseRetryDelayMs', () => {
  const base = { failures: 0, leading: false, retryPeriodMs: 2000, leaseDurationMs: 15_000 };
  const MID = (): number => 0.5;

  it('a leader renews every retry period, failing or not: it must renew within the deadline', () => {
    expect([0, 1, 5].map((failures) => leaseRetryDelayMs({ ...base, leading: true, failures }, () => 0))).toEqual([
      2000, 2000, 2000,
    ]);
  });

  it("a follower's reads are jittered, and back off while they fail, up to the lease duration", () => {
    expect([0, 0.5, 0.999_999].map((r) => leaseRetryDelayMs(base, () => r))).toEqual([1600, 2000, 2400]);
    expect([1, 2, 3, 4, 10].map((failures) => leaseRetryDelayMs({ ...base, failures }, MID))).toEqual([
      2000, 4000, 8000, 15_000, 15_000,
    ]);
  });

  it("waits the server's Retry-After when that is longer; a leader no longer than its retry period (it must renew)", () => {
    const error = new ApiError(429, 'GET', '/apis/coordination.k8s.io/v1/…', 'TooManyRequests', 5000);
    expect(leaseRetryDelayMs({ ...base, failures: 1, error }, MID)).toBe(5000);
    expect(leaseRetryDelayMs({ ...base, failures: 4, error }, MID)).toBe(15_000);
    expect(leaseRetryDelayMs({ ...base, leading: true, failures: 1, error }, MID)).toBe(2000);
    const short = new ApiError(429, 'GET', '/apis/coordination.k8s.io/v1/…', 'TooManyRequests', 1000);
    expect(leaseRetryDelayMs({ ...base, leading: true, failures: 1, error: short }, () => 0)).toBe(2000);
  });

  it('an elector that cannot reach the API server backs off instead of reading every 2 s', async () => {
    const down = flaky(createKubeApi(kubeConfigFor(api0())));
    down.down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const a = candidate('a', { api: down });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      await a.tryOnce();
      delays.push(a.nextDelayMs(MID));
    }
    expect(delays).toEqual([2000, 4000, 8000, 15_000, 15_000]);
  });
});

describe('two checkers on one Lease', () => {
  /** A writer that records what this checker would write (the API's log cannot tell the two apart). */
  function recordingWriter(): CheckWriter & { states: string[] } {
    const states: string[] = [];
    return {
      states,
      async write(_workload, entry) {
        states.push(entry.state);
      },
    };
  }

  function checker(identity: string, writer: CheckWriter): Checker {
    const running = startChecker({
      api: createKubeApi(kubeConfigFor(api.url)),
      logger: recordingLogger(),
      writer,
      debounceMs: 5,
      resyncMs: 3_600_000,
      clock: () => new Date(now),
      leaderElection: { namespace: NS, name: CHECK, identity, retryPeriodMs: 10 },
    });
    checkers.push(running);
    return running;
  }

  it('only the leader decides; the follower, its stores listed, takes over when the leader stops', async () => {
    api.upsert('resourceflavors', structuredClone(deviceFlavor()) as Record<string, unknown>);
    api.upsert('nodes', structuredClone(gpuNode('gpu-a', 8)) as Record<string, unknown>);
    api.upsert('pods', structuredClone(boundPod('busy-a', 'gpu-a', [gpus(4)])) as Record<string, unknown>);
    const workload = makeWorkload('train')
      .podSet('workers', 1, [gpus(8)])
      .listedChecks(CHECK);
    api.upsert('workloads', structuredClone(workload.obj()) as Record<string, unknown>);

    const first = recordingWriter();
    const second = recordingWriter();
    const a = checker('a', first);
    await eventually(() => first.states.length === 1, 'the leader decides');
    const b = checker('b', second);
    await eventually(() => b.health().healthy, 'the follower lists every store');
    expect([a.health().leading, b.health().leading]).toEqual([true, false]);

    // A change both see: only the leader writes.
    api.remove('pods', 'team-b/busy-a');
    await eventually(() => first.states.length === 2, "the leader's second verdict");
    expect(first.states).toEqual(['Retry', 'Ready']);
    expect(second.states).toEqual([]);

    // The leader stops (a rolling update): its Lease goes back and the follower decides at once.
    await a.stop();
    checkers.splice(checkers.indexOf(a), 1);
    await eventually(() => b.health().leading, 'the follower leads');
    await eventually(() => second.states.length === 1, "the new leader's verdict");
    expect(second.states).toEqual(['Ready']);
  });
});
