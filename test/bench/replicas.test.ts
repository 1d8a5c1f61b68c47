// bench:cluster --replicas (bench/cluster/replicas.ts): the default replica count is the chart's,
// the proxy's expected hold of a paced call is the server's pure pace at the second it came, and a
// replica whose logged hold differs from it is reported as disagreeing.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import {
  CHART_VALUES,
  chartReplicas,
  installPacing,
  loggedPacedCalls,
  matchCalls,
  pacedCall,
  pacingTable,
  type PacedCall,
} from '../../bench/cluster/replicas.js';
import { exampleBody } from '../../harness/hooks/examples.js';

const NOW_MS = Date.parse('2026-06-01T00:00:00Z');

/** The example shard request with `count` profiles created one a second, the newest `ageSeconds` before NOW. */
function shardBody(count: number, ageSeconds: number): Buffer {
  const body = exampleBody('node-shard.sync.json');
  const related = body['related'] as Record<string, Record<string, { metadata: Record<string, unknown> }>>;
  for (const profiles of Object.values(related)) {
    const [name, profile] = Object.entries(profiles)[0] as [string, { metadata: Record<string, unknown> }];
    for (let i = 0; i < count; i++) {
      const copy = structuredClone(profile);
      copy.metadata['name'] = `${name}-${i}`;
      copy.metadata['creationTimestamp'] = new Date(NOW_MS - (ageSeconds + i) * 1000).toISOString();
      profiles[`${name}-${i}`] = copy;
    }
    delete profiles[name];
  }
  return Buffer.from(JSON.stringify(body));
}

const call = (body: Buffer, upstream = 0, receivedMs = NOW_MS) => ({
  route: 'node-shard/sync',
  upstream,
  receivedMs,
  durationMs: 4600,
  status: 200,
  body,
});

const hookLine = (route: string, parent: string, heldMs?: number): string =>
  JSON.stringify({
    level: 30,
    msg: 'hook',
    controller: route.split('/')[0],
    hook: route.split('/')[1],
    parent,
    status: 200,
    ...(heldMs === undefined ? {} : { heldMs }),
  });

describe('bench:cluster --replicas', () => {
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("defaults to the chart's server.replicas, and refuses values without a positive count", () => {
    const values = parse(readFileSync(CHART_VALUES, 'utf8')) as { server: { replicas: number } };
    expect(chartReplicas()).toBe(values.server.replicas);
    dir = mkdtempSync(path.join(os.tmpdir(), 'bench-replicas-'));
    const file = path.join(dir, 'values.yaml');
    for (const bad of ['server:\n  replicas: 0\n', 'server: {}\n', 'server:\n  replicas: "2"\n', '']) {
      writeFileSync(file, bad);
      expect(() => chartReplicas(file), bad).toThrow('server.replicas is not a positive integer');
    }
    writeFileSync(file, 'server:\n  replicas: 3\n');
    expect(chartReplicas(file)).toBe(3);
  });

  it("expects the server's pure pace of a paced call at the second it came and the next", () => {
    // 10 profiles created a second apart, the newest just now: arriving for 9 s, held half of it.
    const arriving = pacedCall(call(shardBody(10, 0)));
    expect(arriving).toMatchObject({ route: 'node-shard/sync', expectedHoldSeconds: [4.5, 4.5], arrivalSeconds: 9 });
    // The newest 5 s old: arriving at this second (2 + 3 s of skew), not at the next.
    expect(pacedCall(call(shardBody(10, 5))).expectedHoldSeconds).toEqual([4.5, 0]);
    // Settled an hour ago: no hold.
    expect(pacedCall(call(shardBody(10, 3600))).expectedHoldSeconds).toEqual([0, 0]);
  });

  it('lines up each replica’s logged holds with the calls it answered, and reports the one that held otherwise', () => {
    const held = pacedCall(call(shardBody(10, 0), 0));
    const heldOnB = pacedCall(call(shardBody(10, 0), 1));
    const settled = pacedCall(call(shardBody(10, 3600), 1));
    const parent = held.parent;
    const logs = [
      ['{"msg":"listening"}', hookLine('node-profile/sync', 'node-a'), hookLine('node-shard/sync', parent, 4500)].join(
        '\n',
      ),
      // Replica b held its first call not at all (it should have, 4.5 s), its second not (right).
      [hookLine('node-shard/sync', parent), hookLine('node-shard/sync', parent)].join('\n'),
    ];
    expect(loggedPacedCalls(logs[0] as string)).toEqual([
      { route: 'node-shard/sync', parent, heldMs: 4500, status: 200 },
    ]);
    const matched = matchCalls([held, heldOnB, settled], logs.map(loggedPacedCalls));
    expect(matched.map((m) => [m.upstream, m.heldSeconds, m.disagrees])).toEqual([
      [0, 4.5, false],
      [1, 0, true],
      [1, 0, false],
    ]);

    const pacing = installPacing([held, heldOnB, settled] as PacedCall[], logs, NOW_MS - 10_000, NOW_MS + 1);
    expect(pacing.routes['node-shard/sync']).toEqual({
      calls: 3,
      held: 1,
      disagreements: 1,
      byReplica: [
        { calls: 1, held: 1 },
        { calls: 2, held: 0 },
      ],
    });
    expect(pacingTable([{ nodes: 200, installSeconds: 36.5, pacing }])).toContain(
      '| 200 | 2 | 36.5 s | 3 (1) | 0 (0) | #0: 1 (1) / 0 (0); #1: 2 (0) / 0 (0) | 1 | 0 / 0 |',
    );
  });
});
