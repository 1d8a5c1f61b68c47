/** `why`: one Workload explained per PodSet, with the check's reason (docs/operations.md#why). */
import { describe, expect, it } from 'vitest';
import { WorkloadSchema, explainWorkload } from '../../src/placement/index.js';
import { CHECK, H100_FLAVOR, NVIDIA_CREDITS, gpus, makeWorkload } from './builders.js';

const HOST = 'kubernetes.io/hostname';

describe('explainWorkload', () => {
  it("lists Kueue's conditions, each PodSet's flavors and domains, and our check's reason first", () => {
    const base = makeWorkload()
      .podSet('workers', 2, [gpus(8)], {
        topologyAssignment: {
          levels: [HOST],
          slices: [
            {
              domainCount: 2,
              valuesPerLevel: [{ individual: { roots: ['gpu-1a', 'gpu-1b'] } }],
              podCounts: { universal: 1 },
            },
          ],
        },
      })
      .listedChecks('other-check', CHECK)
      .obj();
    const reason = `podset "workers": topology domain ${HOST}=gpu-1a of flavor ${H100_FLAVOR}: 1 pod × 8 cards do not fit there; free cards per node: gpu-1a 4; will retry as capacity frees`;
    const workload = WorkloadSchema.parse({
      ...base,
      status: {
        ...base.status,
        admissionChecks: [
          { name: 'other-check', state: 'Ready', message: 'ok' },
          { name: CHECK, state: 'Retry', message: reason },
        ],
      },
    });
    expect(explainWorkload(workload, CHECK)).toEqual([
      'workload team-a/train (ClusterQueue gpustack-nvidia-h100-80gb-hbm3-linux-amd64)',
      '  QuotaReserved=True (QuotaReserved): Quota reserved in ClusterQueue',
      `  podset "workers": 2 pods; flavors ${NVIDIA_CREDITS}→${H100_FLAVOR}`,
      `    domain ${HOST}=gpu-1a: 1 pod`,
      `    domain ${HOST}=gpu-1b: 1 pod`,
      `  check ${CHECK}: Retry: ${reason}`,
      '  check other-check: Ready: ok',
    ]);
  });

  it('says when Kueue has reserved no quota yet', () => {
    const workload = makeWorkload()
      .podSet('main', 1, [gpus(1)])
      .withoutAdmission()
      .obj();
    expect(explainWorkload(workload, CHECK)).toContain(
      '  no quota reserved yet: Kueue has not found room in the queue (see its QuotaReserved message)',
    );
  });
});
