// Shard syncs held while Nodes join in numbers (src/server/pacing.ts), on a fake clock: how long a
// hold lasts, when it ends early, and that the server answers a held sync with the request's summary.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp, JoinPacing } from '../../src/server/index.js';
import { exampleBody, post } from './helpers.js';

describe('JoinPacing', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const clock = (): number => Date.now();

  it('holds half of the arrival so far, at least 1 s and at most the maximum, from an arrival of 2 s', () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, clock });

    expect(pacing.holdMs(0)).toBe(0); // one Node joining: answered at once
    expect(pacing.holdMs(1.9)).toBe(0);
    expect(pacing.holdMs(2)).toBe(1000);
    expect(pacing.holdMs(30)).toBe(15_000);
    expect(pacing.holdMs(1000)).toBe(60_000);
    expect(new JoinPacing({ maxHoldSeconds: 0, clock }).holdMs(30)).toBe(0);
  });

  it('holds for the whole limit when this server saw no Node join (another replica may be seeing them)', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, clock });
    const held = pacing.hold(20);
    await vi.advanceTimersByTimeAsync(9_800);
    let done = false;
    void held.then(() => (done = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(done).toBe(false);

    await vi.advanceTimersByTimeAsync(400);
    expect(await held).toBeGreaterThanOrEqual(10_000);
  });

  it('ends a hold once the Nodes this server saw joining have stopped for quietSeconds', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, quietSeconds: 2, clock });
    pacing.noteJoin();
    const held = pacing.hold(100); // up to 50 s
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      pacing.noteJoin(); // still joining: 10 s
    }
    await vi.advanceTimersByTimeAsync(2400);

    const ms = await held;
    expect(ms).toBeGreaterThanOrEqual(12_000);
    expect(ms).toBeLessThan(13_000);
  });

  it('ends at once a hold that starts after the joins this server saw have stopped', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, quietSeconds: 2, clock });
    pacing.noteJoin();
    await vi.advanceTimersByTimeAsync(3000);
    const held = pacing.hold(100);
    await vi.advanceTimersByTimeAsync(200);

    expect(await held).toBe(200);
  });

  it('measures the arrival of the Nodes it sees joining, from the first join after a 10 s gap', async () => {
    const pacing = new JoinPacing({ clock });
    expect(pacing.joinArrival()).toBeUndefined();
    pacing.noteJoin();
    await vi.advanceTimersByTimeAsync(11_000);
    pacing.noteJoin(); // after a gap: a new arrival
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(1000);
      pacing.noteJoin();
    }
    expect(pacing.joinArrival()).toBe(5);

    await vi.advanceTimersByTimeAsync(2000);
    expect(pacing.joinArrival()).toBeUndefined();
  });

  it('ends every hold at stop, and holds nothing after it', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60, clock });
    const held = pacing.hold(100);
    await vi.advanceTimersByTimeAsync(1000);
    pacing.stop();

    expect(await held).toBe(1000);
    expect(await pacing.hold(100)).toBe(0);
  });
});

describe('the hook server with pacing', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date', 'performance'] });
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

  it('holds the chain while the node-profile calls it answered make Nodes join', async () => {
    const pacing = new JoinPacing({ maxHoldSeconds: 60 });
    const app = createApp({ clock, pacing });
    // Two Nodes without a profile 2.5 s apart: node-profile's answers create one each, two joins.
    const joined = await post(app, '/hooks/node-profile/sync', exampleBody('node-profile.sync.json'));
    expect(joined.status).toBe(200);
    expect(pacing.joinArrival()).toBe(0);
    await vi.advanceTimersByTimeAsync(2500);
    await post(app, '/hooks/node-profile/sync', exampleBody('node-profile.sync.json'));
    expect(pacing.joinArrival()).toBe(2.5);
    const pending = track(post(app, '/hooks/scheduling-chain/sync', exampleBody('scheduling-chain.sync.json')));
    await vi.advanceTimersByTimeAsync(800);
    expect(pending.answered()).toBe(false);

    await vi.advanceTimersByTimeAsync(600); // an arrival of 2.5 s: held 1.25 s
    expect((await pending.answer).status).toBe(200);
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
