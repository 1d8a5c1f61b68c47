// Join pacing in the hook server (src/server/join-pacing.ts), on a fake clock: the hold is what the
// request says (src/sync: shardPace, chainPace), bounded by the hook timeout less a margin counted
// from when the request came, held on one timer; a held sync answers what an unheld one would.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createApp,
  HOLD_MARGIN_SECONDS,
  JoinPacing,
  PACED_HOOK_TIMEOUT_SECONDS,
  pacingProblem,
} from '../../src/server/index.js';
import { MIN_ARRIVAL_NODES } from '../../src/sync/index.js';
import { exampleBody, post } from './helpers.js';

describe('JoinPacing', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const clock = (): number => Date.now();
  const pace = (holdSeconds: number) => ({ arrivalSeconds: 2 * holdSeconds, holdSeconds });

  it('refuses a longest hold that cannot end before the hook timeout less the margin', () => {
    const room = PACED_HOOK_TIMEOUT_SECONDS - HOLD_MARGIN_SECONDS;
    expect(pacingProblem(room, PACED_HOOK_TIMEOUT_SECONDS)).toBeUndefined();
    expect(pacingProblem(room + 1, PACED_HOOK_TIMEOUT_SECONDS)).toMatch(
      `--join-pacing ${room + 1} s does not fit the paced hooks' timeout of ${PACED_HOOK_TIMEOUT_SECONDS} s`,
    );
    expect(() => new JoinPacing({ maxHoldSeconds: 300 })).toThrow(RangeError);
    expect(() => new JoinPacing({ maxHoldSeconds: 300, hookTimeoutSeconds: 320 })).not.toThrow();
  });

  it('never holds past the hook timeout less the margin, counted from when the request came', () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, hookTimeoutSeconds: 70, clock });
    const received = clock();
    expect(pacing.holdMs(pace(60), received)).toBe(60_000);
    vi.advanceTimersByTime(5_000); // parsed, or queued behind a big body
    expect(pacing.holdMs(pace(60), received)).toBe((70 - HOLD_MARGIN_SECONDS - 5) * 1000);
    expect(pacing.holdMs(pace(10), received)).toBe(10_000);
    vi.advanceTimersByTime(60_000);
    expect(pacing.holdMs(pace(60), received)).toBe(0);
  });

  it('holds nothing without a pace, or with pacing off', () => {
    expect(new JoinPacing({ clock }).holdMs(undefined, clock())).toBe(0);
    expect(new JoinPacing({ maxHoldSeconds: 0, clock }).holdMs(pace(10), clock())).toBe(0);
  });

  it('holds on one timer, whatever its length', async () => {
    const pacing = new JoinPacing({ clock });
    const held = pacing.hold(30_000);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await held).toBe(30_000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends every hold at stop, and holds nothing after it', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, clock });
    const held = pacing.hold(50_000);
    await vi.advanceTimersByTimeAsync(1000);
    pacing.stop();

    expect(await held).toBe(1000);
    expect(await pacing.hold(50_000)).toBe(0);
    expect(pacing.holdMs(pace(10), clock())).toBe(0);
  });
});

describe('the hook server with pacing', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  /** A call's answer, and whether it has come yet. */
  function track<T>(call: Promise<T>): { readonly answered: () => boolean; readonly answer: Promise<T> } {
    let done = false;
    const answer = call.then((value) => {
      done = true;
      return value;
    });
    return { answered: () => done, answer };
  }
  /**
   * The example shard request, its profile created `ageSeconds` before the server's clock, and a
   * copy of it created `arrivalSeconds` earlier: the shard's profiles have been arriving that long.
   */
  function shardRequest(ageSeconds: number, arrivalSeconds: number): Record<string, unknown> {
    const body = exampleBody('node-shard.sync.json');
    const related = body['related'] as Record<string, Record<string, { metadata: Record<string, unknown> }>>;
    const at = (age: number) => new Date(Date.parse('2026-06-01T00:00:00Z') - age * 1000).toISOString();
    for (const profiles of Object.values(related))
      for (const [name, profile] of Object.entries(profiles)) {
        profile.metadata['creationTimestamp'] = at(ageSeconds);
        const earlier = structuredClone(profile);
        earlier.metadata['name'] = `${name}-earlier`;
        earlier.metadata['creationTimestamp'] = at(ageSeconds + arrivalSeconds);
        profiles[`${name}-earlier`] = earlier;
      }
    return body;
  }
  const clock = () => new Date('2026-06-01T00:00:00Z');

  it('holds the sync of a shard whose profiles are arriving, then answers the same summary as without pacing', async () => {
    const paced = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    const plain = createApp({ clock });
    const pending = track(post(paced, '/hooks/node-shard/sync', shardRequest(1, 2)));
    await vi.advanceTimersByTimeAsync(800);
    expect(pending.answered()).toBe(false);

    await vi.advanceTimersByTimeAsync(400);
    const held = await pending.answer;
    const direct = await post(plain, '/hooks/node-shard/sync', shardRequest(1, 2));
    expect(held.status).toBe(200);
    expect(held.json).toEqual(direct.json);
  });

  /** The example chain request with one NodeShard child whose status says its profiles arrived `since` → `newest` seconds before the clock. */
  function chainRequest(sinceAge: number, newestAge: number): Record<string, unknown> {
    const body = exampleBody('scheduling-chain.sync.json');
    const at = (age: number) => new Date(Date.parse('2026-06-01T00:00:00Z') - age * 1000).toISOString();
    (body['children'] as Record<string, unknown>)['NodeShard.worker.gpustack.ai/v1alpha1'] = {
      'default-0': {
        apiVersion: 'worker.gpustack.ai/v1alpha1',
        kind: 'NodeShard',
        metadata: { name: 'default-0' },
        spec: { index: 0 },
        status: { profiles: 0, groups: [], arrival: { since: at(sinceAge), newest: at(newestAge) } },
      },
    };
    return body;
  }

  it('two replicas hold the same chain request alike: the hold is read from its shards, not from what a server saw', async () => {
    // Replica a answered the node-profile calls of the joining Nodes; replica b saw none.
    const a = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    const b = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    await post(a, '/hooks/node-profile/sync', exampleBody('node-profile.sync.json'));
    const request = chainRequest(21, 1); // shards filling for 20 s: held 10 s
    const onA = track(post(a, '/hooks/scheduling-chain/sync', request));
    const onB = track(post(b, '/hooks/scheduling-chain/sync', request));
    await vi.advanceTimersByTimeAsync(9_900);
    expect([onA.answered(), onB.answered()]).toEqual([false, false]);

    await vi.advanceTimersByTimeAsync(200);
    expect([(await onA.answer).status, (await onB.answer).status]).toEqual([200, 200]);
  });

  /** The example chain request relating `count` managed Nodes without a profile yet, created `ageSeconds` before the clock. */
  function chainWithJoiningNodes(count: number, ageSeconds: number): Record<string, unknown> {
    const body = exampleBody('scheduling-chain.sync.json');
    const node = exampleBody('node-profile.sync.json')['parent'] as { metadata: Record<string, unknown> };
    const created = new Date(Date.parse('2026-06-01T00:00:00Z') - ageSeconds * 1000).toISOString();
    const nodes = Array.from({ length: count }, (_, i) => {
      const joining = structuredClone(node);
      joining.metadata['name'] = `pool-${i}`;
      joining.metadata['creationTimestamp'] = created;
      return [`pool-${i}`, joining];
    });
    (body['related'] as Record<string, unknown>)['Node.v1'] = Object.fromEntries(nodes);
    return body;
  }

  it('holds the chain for a node pool joining before any shard counts it: the Nodes without a profile in its request', async () => {
    const a = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    const b = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    const request = chainWithJoiningNodes(MIN_ARRIVAL_NODES, 0);
    const onA = track(post(a, '/hooks/scheduling-chain/sync', request));
    const onB = track(post(b, '/hooks/scheduling-chain/sync', request));
    await vi.advanceTimersByTimeAsync(900);
    expect([onA.answered(), onB.answered()]).toEqual([false, false]);

    await vi.advanceTimersByTimeAsync(200);
    expect([(await onA.answer).status, (await onB.answer).status]).toEqual([200, 200]);
  });

  it('answers at once a few Nodes joining, and Nodes that joined long ago without a profile (an upgrade)', async () => {
    const app = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });

    const few = await post(app, '/hooks/scheduling-chain/sync', chainWithJoiningNodes(MIN_ARRIVAL_NODES - 1, 0));
    const old = await post(app, '/hooks/scheduling-chain/sync', chainWithJoiningNodes(100, 3600));

    expect([few.status, old.status]).toEqual([200, 200]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers a chain whose shards have settled at once, on every replica', async () => {
    const app = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });
    await post(app, '/hooks/node-profile/sync', exampleBody('node-profile.sync.json'));

    const chain = await post(app, '/hooks/scheduling-chain/sync', chainRequest(3600, 3500));

    expect(chain.status).toBe(200);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers at once one Node joining a settled cluster: no hold under an arrival of 2 s', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60 });
    const app = createApp({ clock, pacing });
    await post(app, '/hooks/node-profile/sync', exampleBody('node-profile.sync.json'));

    const shard = await post(app, '/hooks/node-shard/sync', shardRequest(1, 0));
    const chain = await post(app, '/hooks/scheduling-chain/sync', exampleBody('scheduling-chain.sync.json'));

    expect([shard.status, chain.status]).toEqual([200, 200]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers at once when the shard is settled: no timer has to run', async () => {
    const paced = createApp({ clock, pacing: new JoinPacing({ maxHoldSeconds: 60 }) });

    const answer = await post(paced, '/hooks/node-shard/sync', shardRequest(3600, 2));

    expect(answer.status).toBe(200);
    expect(vi.getTimerCount()).toBe(0);
  });
});
