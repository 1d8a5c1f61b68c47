/**
 * The per-pass index (`indexNodeDevices`) is memoisation only: deciding many Workloads in a row
 * with one shared index gives, Workload by Workload, the verdict each gets alone without it. In
 * particular the pods one decision places never leak into the next decision's free cards.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManufacturerName, Node } from '../../src/k8s/index.js';
import { decideNodeDevices, indexNodeDevices, type Pod, type Workload } from '../../src/placement/index.js';
import { deepFreeze } from '../support/snapshot.js';
import {
  CHECK,
  boundPod,
  cordoned,
  deviceFlavor,
  flavorMap,
  gpuNode,
  gpus,
  makeWorkload,
  tainted,
  withTolerations,
} from './builders.js';

const deviceResourceOf = (mfr: ManufacturerName): string =>
  mfr === 'nvidia' ? 'nvidia.com/gpu' : `${mfr}.example.com/device`;
const flavors = flavorMap(withTolerations(deviceFlavor(), [{ key: 'nvidia.com/gpu', operator: 'Exists' }]));

function decideAll(workloads: readonly Workload[], nodes: readonly Node[], pods: readonly Pod[], shared: boolean) {
  const index = shared ? indexNodeDevices(nodes, pods) : undefined;
  return workloads.map((workload) =>
    decideNodeDevices({
      workload,
      flavors,
      nodes,
      pods,
      deviceResourceOf,
      checkName: CHECK,
      ...(index ? { index } : {}),
    }),
  );
}

describe('indexNodeDevices: one index per pass', () => {
  it('the same verdicts as deciding each Workload alone; the index holds no placement of an earlier decision', () => {
    const nodes = [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8)];
    const pods = [boundPod('busy', 'gpu-a', [gpus(4)])];
    // Each alone fits (4 free on gpu-a + 8 on gpu-b); had the first's placements leaked, the second would not.
    const workloads = [
      makeWorkload('first')
        .podSet('w', 1, [gpus(8)])
        .obj(),
      makeWorkload('second')
        .podSet('w', 1, [gpus(8)])
        .obj(),
    ];
    const shared = decideAll(workloads, nodes, pods, true);
    expect(shared).toEqual(decideAll(workloads, nodes, pods, false));
    expect(shared.map((v) => v?.state)).toEqual(['Ready', 'Ready']);
  });

  it('holds for random nodes, pods, cordons, taints and Workloads', () => {
    const scene = fc.record({
      nodes: fc.array(
        fc.record({ cards: fc.integer({ min: 0, max: 8 }), cordoned: fc.boolean(), tainted: fc.boolean() }),
        { minLength: 1, maxLength: 6 },
      ),
      pods: fc.array(
        fc.record({
          node: fc.integer({ min: 0, max: 6 }),
          cards: fc.integer({ min: 0, max: 8 }),
          phase: fc.constantFrom('Running', 'Pending', 'Succeeded'),
        }),
        { maxLength: 12 },
      ),
      workloads: fc.array(
        fc.record({
          sets: fc.array(
            fc.record({
              count: fc.integer({ min: 1, max: 3 }),
              cards: fc.integer({ min: 0, max: 8 }),
              tolerates: fc.boolean(),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        }),
        { minLength: 1, maxLength: 6 },
      ),
    });
    fc.assert(
      fc.property(scene, (s) => {
        const nodes = s.nodes.map((n, i) => {
          let node = gpuNode(`gpu-${i}`, n.cards);
          if (n.cordoned) node = cordoned(node);
          if (n.tainted) node = tainted(node, { key: 'maintenance', value: 'true', effect: 'NoSchedule' });
          return node;
        });
        const pods = s.pods.map((p, i) =>
          boundPod(`p-${i}`, p.node < nodes.length ? `gpu-${p.node}` : undefined, [gpus(p.cards)], p.phase),
        );
        const workloads = s.workloads.map((w, i) => {
          const builder = makeWorkload(`w-${i}`);
          w.sets.forEach((set, j) => builder.podSet(`set-${j}`, set.count, [gpus(set.cards)]));
          const workload = builder.obj();
          w.sets.forEach((set, j) => {
            if (set.tolerates)
              (
                workload.spec.podSets[j] as { template: { spec: { tolerations?: unknown[] } } }
              ).template.spec.tolerations = [{ key: 'maintenance', operator: 'Exists' }];
          });
          return workload;
        });
        deepFreeze({ nodes, pods, workloads });
        expect(decideAll(workloads, nodes, pods, true)).toEqual(decideAll(workloads, nodes, pods, false));
      }),
    );
  });
});
