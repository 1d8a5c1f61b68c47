// The first-install report (bench/cluster/install-report.ts) on small inputs: two made-up runs of
// 1,000 Nodes whose every derived number can be worked out here by hand.
import { describe, expect, it } from 'vitest';
import {
  fit,
  floorSeconds,
  installBytes,
  installModel,
  pacedBytesRatio,
  installSection,
  installTable,
  installTargets,
  largestChangeRequest,
  spliceInstallSection,
  writesPerNode,
  type InstallFile,
  type InstallRun,
} from '../../bench/cluster/install-report.js';

const PROFILE_BYTES = 1_000_000; // 1,000 profiles of 1 KB

function run(nodes: number, installSeconds: number, shardBytes: number, p90: number): InstallRun {
  return {
    nodes,
    loadAverageStart: [0.5, 0.4, 0.3],
    loadAverageEnd: [1, 1, 1],
    createSeconds: 10,
    installSeconds,
    qps: 100,
    // Labels and status of each Node, each profile, and a shard status write that is not per Node.
    writes: { nodes: nodes, 'nodes/status': 0, nodeprofiles: nodes, 'nodeshards/status': 500, events: 7 },
    calls: { 'node-profile/sync': 2 * nodes, 'node-shard/sync': 40, 'scheduling-chain/sync': 5 },
    requests: {
      'node-profile/sync': { count: 2 * nodes, totalBytes: 2 * nodes * 20_000, maxBytes: 20_000 },
      'node-shard/sync': { count: 40, totalBytes: shardBytes, maxBytes: 100_000 },
      'scheduling-chain/sync': { count: 5, totalBytes: 500_000, maxBytes: 100_000 },
    },
    profileBytes: (PROFILE_BYTES * nodes) / 1000,
    processes: { metacontroller: { cpuSecondsConvergence: 12.34, cpuSecondsReactions: 1, peakRssMB: 300 } },
    reaction: { p50: 0.5, p90, max: 1.5 },
    reactions: [
      { node: 'a', seconds: 0.5, calls: {}, cpu: {}, largestRequestBytes: { 'node-shard/sync': 400_000 } },
      { node: 'b', seconds: 0.6, calls: {}, cpu: {}, largestRequestBytes: { 'scheduling-chain/sync': 700_000 } },
    ],
    connectionResets: 0,
    metacontroller: 'v4.17.2',
  };
}

const file = (commit: string, runs: InstallRun[]): InstallFile => ({
  date: '2026-12-04',
  commit,
  machine: { cpus: 2, cpuModel: 'Test CPU', node: 'v24.0.0' },
  changes: 2,
  metacontrollerWorkers: 20,
  runs,
});

describe('install report', () => {
  const before = run(5000, 400, 40_000_000, 1.2);
  const after = run(5000, 140, 2_000_000, 0.9);

  it('derives the floor, the writes per Node, the bytes and the largest change request', () => {
    expect(floorSeconds(after)).toBe(100); // 2 writes × 5,000 Nodes at 100 q/s
    expect(writesPerNode(after)).toBe(2); // nodes + nodeprofiles, not nodeshards/status nor events
    expect(installBytes(after)).toEqual({ all: 200_000_000 + 2_000_000 + 500_000, aggregating: 2_500_000 });
    expect(largestChangeRequest(after)).toBe(700_000);
  });

  it('judges each target at 5,000 Nodes against the limits, beside the before run', () => {
    const targets = installTargets(file('b', [before]), file('a', [after]));
    const byWhat = Object.fromEntries(targets.map((t) => [t.what.split(' (')[0], t]));

    expect(byWhat['install time ÷ floor']).toMatchObject({ before: '4.00×', after: '1.40×', met: true });
    // 202.5 MB over 5 MB of profiles: the whole Nodes node-profile receives miss it.
    expect(byWhat['hook request bytes ÷ NodeProfile bytes']).toMatchObject({ met: false });
    expect(byWhat['hook request bytes ÷ NodeProfile bytes']?.after).toBe('40.5× (shard + chain 0.50×)');
    expect(byWhat['largest request of any change']).toMatchObject({ after: '0.700 MB', met: true });
    expect(byWhat['reaction p90']).toMatchObject({ before: '1.20 s', after: '0.90 s', met: true });
  });

  it('fails the time target past 1.5× the floor', () => {
    const slow = installTargets(file('b', [before]), file('a', [run(5000, 151, 2_000_000, 0.9)]));
    expect(slow.find((t) => t.what.startsWith('install time'))?.met).toBe(false);
  });

  it('tabulates a run, and splices its section into RESULTS.md once', () => {
    expect(installTable([after])).toContain(
      '| 5,000 | 0.5 / 0.4 / 0.3 | 140.0 s | — | 100.0 s | 1.40 | 2.00 | 10,000 / 40 / 5 | 203 MB | 40.5 | 0.50 | 0.50 / 0.90 s | 0.700 MB |',
    );
    const section = installSection(file('b', [before]), file('a', [after]), 'Intro.');
    expect(section).toContain('| after | 5,000 | metacontroller | 12.3 | 300 |');
    const once = spliceInstallSection('# Results\n', section);
    const twice = spliceInstallSection(once, section);
    expect(twice).toBe(once);
    expect(once.match(/bench:install start/g)).toHaveLength(1);
  });
});

describe('install model', () => {
  it('fits a line and a parabola exactly where the points lie on one', () => {
    const xs = [1, 2, 3, 4];
    expect(
      fit(
        xs,
        xs.map((x) => 3 + 2 * x),
      ).map((c) => Number(c.toFixed(9))),
    ).toEqual([3, 2]);
    expect(
      fit(
        xs,
        xs.map((x) => 1 - x + 0.5 * x * x),
        true,
      ).map((c) => Number(c.toFixed(9))),
    ).toEqual([1, -1, 0.5]);
  });

  it('extrapolates before quadratically and after linearly to 20,000, 65,000 and 100,000 Nodes', () => {
    const sizes = [1000, 2000, 4000];
    // before: 1e-5 s per Node²; after: 20 s + 0.01 s per Node; RSS 100 MB + 0.25 MB per Node.
    const withRss = (r: InstallRun): InstallRun => ({
      ...r,
      processes: {
        metacontroller: { cpuSecondsConvergence: 1, cpuSecondsReactions: 0, peakRssMB: 100 + 0.25 * r.nodes },
        'kube-apiserver': { cpuSecondsConvergence: 1, cpuSecondsReactions: 0, peakRssMB: 200 + 0.3 * r.nodes },
      },
    });
    const before = file(
      'b',
      sizes.map((n) => withRss(run(n, 1e-5 * n * n, 0, 1))),
    );
    const after = file(
      'a',
      sizes.map((n) => withRss(run(n, 20 + 0.01 * n, 0, 1))),
    );

    const rows = installModel(before, after);
    const at = (label: string, nodes: number) => rows.find((r) => r.run === label && r.nodes === nodes);
    expect(at('before', 100_000)?.installSeconds).toBeCloseTo(100_000, 0);
    expect(at('after', 100_000)?.installSeconds).toBeCloseTo(1020, 3);
    expect(at('after', 65_000)?.metacontrollerRssMB).toBeCloseTo(100 + 0.25 * 65_000, 3);
    expect(at('after', 20_000)?.apiServerRssMB).toBeCloseTo(200 + 0.3 * 20_000, 3);
    expect(rows.map((r) => r.nodes)).toEqual([20_000, 65_000, 100_000, 20_000, 65_000, 100_000]);
    // After: node-profile's 40 KB per Node, plus the profiles' 1 KB per Node times the paced ratio
    // of a 2,000 s arrival (2 writes per Node at 100 q/s).
    expect(at('after', 100_000)?.requestBytes).toBeCloseTo(4e9 + pacedBytesRatio(2000) * 1e8, -3);
    expect(at('after', 100_000)?.aggregatingRatio).toBe(pacedBytesRatio(2000));
  });

  it('adds up the paced syncs of a shard: holds of half the arrival so far, 1 s at least, capped', () => {
    // Syncs at 1, 2, 3, 4.5, 6.75 s of a 10 s arrival (the next at 10.125 s is past it), then one with all.
    expect(pacedBytesRatio(10)).toBeCloseTo((1 + 2 + 3 + 4.5 + 6.75) / 10 + 1, 9);
    // Under the cap the ratio stays near 3 whatever the arrival; past it, it grows with the arrival.
    expect(pacedBytesRatio(200)).toBeLessThan(4);
    expect(pacedBytesRatio(2000)).toBeGreaterThan(pacedBytesRatio(200) * 3);
    expect(pacedBytesRatio(2000, 1000)).toBeLessThan(4);
  });
});
