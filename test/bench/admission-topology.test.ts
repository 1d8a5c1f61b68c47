// The topology case of `npm run bench:admission` (issue 44): Nodes in blocks and racks, and the
// domains Kueue's TAS assigns a Workload — which must read as the check reads a real one.
import { describe, expect, it } from 'vitest';
import type { PassTiming } from '../../bench/admission/pass.js';
import { admissionTables, topologyCell } from '../../bench/admission/report.js';
import {
  BLOCK_LABEL,
  DEFAULT_SHAPE,
  SUBBLOCK_LABEL,
  TOPOLOGY_LEVELS,
  assignment,
  domainOf,
  sceneOf,
  withAssignment,
  withDomainLabels,
} from '../../bench/admission/topology.js';
import type { Node } from '../../src/k8s/index.js';
import { TopologyAssignmentSchema, expandTopologyAssignment } from '../../src/placement/index.js';

const names = Array.from({ length: 600 }, (_, i) => `h100-8x-${String(i).padStart(5, '0')}`);
const shape = { blockSize: 256, rackSize: 16 };

describe('bench/admission/topology.ts', () => {
  it('puts 256 Nodes in a block and 16 in a rack, the last ones short', () => {
    expect(domainOf(0, shape)).toEqual({ block: 'b0', rack: 'b0-r0' });
    expect(domainOf(255, shape)).toEqual({ block: 'b0', rack: 'b0-r15' });
    expect(domainOf(256, shape)).toEqual({ block: 'b1', rack: 'b1-r0' });
    // 5,000 Nodes: 19 whole blocks of 16 racks, and 136 Nodes in 9 racks.
    expect(sceneOf(5000, DEFAULT_SHAPE, 2000)).toEqual({
      levels: [...TOPOLOGY_LEVELS],
      blocks: 20,
      racks: 19 * 16 + 9,
      assigned: 2000,
    });
  });

  it('labels a copy of the Node and leaves the Node as it was', () => {
    const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: names[300] ?? '', labels: { a: 'b' } } };
    const labelled = withDomainLabels(node, 300, shape);
    expect(labelled.metadata.labels).toEqual({ a: 'b', [BLOCK_LABEL]: 'b1', [SUBBLOCK_LABEL]: 'b1-r2' });
    expect(node.metadata.labels).toEqual({ a: 'b' });
  });

  it('assigns the pods to hosts of one rack, as the check expands them', () => {
    for (const [seed, pods] of [
      [0, 1],
      [7, 2],
      [123, 16],
      [99, 20],
    ] as const) {
      const parsed = TopologyAssignmentSchema.parse(assignment(seed, pods, names, shape));
      const expanded = expandTopologyAssignment(parsed);
      if (!expanded.ok) throw new Error(expanded.message);
      expect(expanded.levels).toEqual([...TOPOLOGY_LEVELS]);
      expect(expanded.domains.reduce((sum, d) => sum + d.pods, 0)).toBe(pods);
      const hosts = expanded.domains.map((d) => d.values[2] ?? '');
      expect(new Set(hosts).size).toBe(hosts.length);
      for (const domain of expanded.domains) {
        const index = names.indexOf(domain.values[2] ?? '');
        expect(index).toBeGreaterThanOrEqual(0);
        const { block, rack } = domainOf(index, shape);
        expect(domain.values.slice(0, 2)).toEqual([block, rack]);
      }
    }
  });

  it('stays inside the short last rack of a cluster', () => {
    // 600 Nodes: the last rack, b2-r5, holds 600 − 592 = 8 Nodes.
    const seeds = Array.from({ length: 400 }, (_, i) => i);
    const lastRack = seeds
      .map((seed) => expandTopologyAssignment(TopologyAssignmentSchema.parse(assignment(seed, 12, names, shape))))
      .flatMap((e) => (e.ok ? [e.domains] : []))
      .find((domains) => domains[0]?.values[1] === 'b2-r5');
    expect(lastRack?.map((d) => d.values[2])).toHaveLength(8);
    expect(lastRack?.reduce((sum, d) => sum + d.pods, 0)).toBe(12);
  });

  it('adds the assignment to every PodSet of a copy of the Workload', () => {
    const workload = { status: { admission: { podSetAssignments: [{ name: 'main', count: 2 }] } } };
    const copy = withAssignment(workload, 3, names, shape) as typeof workload & {
      status: { admission: { podSetAssignments: { topologyAssignment?: unknown }[] } };
    };
    expect(copy.status.admission.podSetAssignments[0]?.topologyAssignment).toEqual(assignment(3, 2, names, shape));
    expect(workload.status.admission.podSetAssignments[0]).not.toHaveProperty('topologyAssignment');
  });
});

describe('the TAS column of bench/admission/report.ts', () => {
  const pass: PassTiming = {
    nodes: 5000,
    pods: 44375,
    workloads: 2000,
    awaiting: 100,
    verdicts: { Ready: 100, Retry: 0 },
    passMs: { median: 250, cv: 0.1, n: 7, min: 240, max: 300 },
    cpuMs: { median: 200, cv: 0.05, n: 7, min: 190, max: 220 },
    msPerAwaiting: 2.5,
    dra: { claimShare: 0.3, slices: 10000, claims: 4331, templates: 600, awaitingWithClaims: 29 },
  };

  it('says — for a pass without domains and the scene for one with them', () => {
    expect(topologyCell(pass)).toBe('—');
    const tas = { ...pass, topology: sceneOf(5000, DEFAULT_SHAPE, 2000) };
    expect(topologyCell(tas)).toBe('3 levels, 20 blocks, 313 racks');
    const rows = admissionTables([pass, tas], []).split('\n').slice(2, 4);
    expect(rows[0]).toContain('| 10,000 / 4,331 | — | 100 (29) / 2000 | 250 |');
    expect(rows[1]).toContain('| 10,000 / 4,331 | 3 levels, 20 blocks, 313 racks | 100 (29) / 2000 | 250 |');
  });
});
