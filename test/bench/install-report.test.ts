// The first-install report (bench/cluster/install-report.ts) on small inputs: two made-up runs of
// 1,000 Nodes whose every derived number can be worked out here by hand.
import { describe, expect, it } from 'vitest';
import {
  floorSeconds,
  installBytes,
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
      '| 5,000 | 0.5 / 0.4 / 0.3 | 140.0 s | 100.0 s | 1.40 | 2.00 | 10,000 / 40 / 5 | 203 MB | 40.5 | 0.50 | 0.50 / 0.90 s | 0.700 MB |',
    );
    const section = installSection(file('b', [before]), file('a', [after]), 'Intro.');
    expect(section).toContain('| after | 5,000 | metacontroller | 12.3 | 300 |');
    const once = spliceInstallSection('# Results\n', section);
    const twice = spliceInstallSection(once, section);
    expect(twice).toBe(once);
    expect(once.match(/bench:install start/g)).toHaveLength(1);
  });
});
