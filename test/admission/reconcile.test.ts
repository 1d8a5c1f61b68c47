/**
 * One reconcile pass, store → verdict → write decision, with a recorded-calls fake of the
 * CheckWriter: writes only on a change of state, message or delay; stamps lastTransitionTime
 * when the state moves and keeps it otherwise; leaves Workloads that do not await a verdict alone;
 * does not repeat a write before the watch brings it back; 404/409 are skipped, others retried.
 */
import { describe, expect, it } from 'vitest';
import {
  Reconciler,
  type AdmissionCheckEntry,
  type CheckWriter,
  type Snapshot,
  type WorkloadRef,
} from '../../src/admission/index.js';
import { ApiError } from '../../src/api-client/index.js';
import type { Settings } from '../../src/k8s/index.js';
import { resolveSettings } from '../../src/contracts/index.js';
import { WorkloadSchema, type AdmissionCheckState, type Pod, type Workload } from '../../src/placement/index.js';
import {
  CHECK,
  H100_FLAVOR,
  boundPod,
  deviceFlavor,
  flavorMap,
  gpuNode,
  gpus,
  makeWorkload,
} from '../placement/builders.js';
import { recordingLogger } from './support.js';

const NOW = '2026-03-01T12:00:00Z';
const EARLIER = '2026-02-01T08:00:00Z';
const RETRY_8_ON_4_4 = `podset "workers": 1 pod × 8 cards do not fit in flavor ${H100_FLAVOR}; the largest free block is 4 cards (node gpu-a); will retry as capacity frees`;

interface Call {
  readonly workload: WorkloadRef;
  readonly entry: AdmissionCheckEntry;
}

/** Records every write; fails the next ones with `failWith` while it is set. */
function fakeWriter(): CheckWriter & { calls: Call[]; failWith: Error | undefined } {
  const writer = {
    calls: [] as Call[],
    failWith: undefined as Error | undefined,
    write(workload: WorkloadRef, entry: AdmissionCheckEntry): Promise<void> {
      writer.calls.push({ workload, entry });
      return writer.failWith ? Promise.reject(writer.failWith) : Promise.resolve();
    },
  };
  return writer;
}

function reconciler(writer: CheckWriter) {
  const logger = recordingLogger();
  const r = new Reconciler({
    writer,
    checkName: CHECK,
    logger,
    clock: () => new Date(NOW),
  });
  return { r, logger };
}

/** The Workload as the watch would deliver it: a resourceVersion and our entry as observed. */
function observed(
  workload: Workload,
  entry: Partial<AdmissionCheckState> | undefined,
  resourceVersion = '1',
): Workload {
  const raw = structuredClone(workload) as Workload & { metadata: { resourceVersion?: string } };
  raw.metadata.resourceVersion = resourceVersion;
  const checks = raw.status?.admissionChecks ?? [];
  if (raw.status)
    raw.status.admissionChecks = entry ? checks.map((c) => (c.name === CHECK ? { ...c, ...entry } : c)) : checks;
  return WorkloadSchema.parse(raw);
}

const eight = () =>
  makeWorkload('train')
    .podSet('workers', 1, [gpus(8)])
    .obj();
const busy = (...nodes: string[]): Pod[] => nodes.map((n) => boundPod(`busy-${n}`, n, [gpus(4)]));

/** Settings as the chain resolves them from a spec; absent → every default. */
function settingsOf(spec?: unknown): Settings {
  const resolution = resolveSettings(spec);
  if (!resolution.ok) throw new Error(resolution.message);
  return resolution.settings;
}

function snapshot(workloads: Workload[], pods: Pod[] = busy('gpu-a', 'gpu-b'), settings = settingsOf()): Snapshot {
  return {
    workloads,
    flavors: flavorMap(deviceFlavor()),
    nodes: [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8)],
    pods,
    settings,
  };
}

describe('Reconciler: what it writes', () => {
  it('Pending (as Kueue adds it) → Retry: writes our entry with the delay, stamped now, and logs one line', async () => {
    const writer = fakeWriter();
    const { r, logger } = reconciler(writer);
    expect(
      await r.pass(snapshot([observed(eight(), { state: 'Pending', message: '', lastTransitionTime: EARLIER })])),
    ).toEqual({ written: 1, failed: 0 });
    expect(writer.calls).toEqual([
      {
        workload: { namespace: 'team-a', name: 'train' },
        entry: {
          name: CHECK,
          state: 'Retry',
          message: RETRY_8_ON_4_4,
          requeueAfterSeconds: 30,
          lastTransitionTime: NOW,
        },
      },
    ]);
    expect(logger.entries).toEqual([
      {
        level: 'info',
        message: 'admission check written',
        fields: {
          workload: 'team-a/train',
          namespace: 'team-a',
          name: 'train',
          check: CHECK,
          state: 'Retry',
          message: RETRY_8_ON_4_4,
          requeueAfterSeconds: 30,
        },
      },
    ]);
  });

  it('Pending → Ready when a node has 8 free; no delay field', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    await r.pass(snapshot([observed(eight(), { state: 'Pending', lastTransitionTime: EARLIER })], busy('gpu-a')));
    expect(writer.calls.map((c) => c.entry)).toEqual([
      {
        name: CHECK,
        state: 'Ready',
        message: 'the assigned flavor pool has enough free cards to place every pod',
        lastTransitionTime: NOW,
      },
    ]);
  });

  it('writes nothing when state, message and delay already match, whatever the observed time', async () => {
    const writer = fakeWriter();
    const { r, logger } = reconciler(writer);
    const same = observed(eight(), {
      state: 'Retry',
      message: RETRY_8_ON_4_4,
      requeueAfterSeconds: 30,
      lastTransitionTime: EARLIER,
    });
    expect(await r.pass(snapshot([same]))).toEqual({ written: 0, failed: 0 });
    expect(writer.calls).toEqual([]);
    expect(logger.entries).toEqual([]);
  });

  it('a new message in the same state is written, keeping the observed transition time', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    await r.pass(
      snapshot([
        observed(eight(), {
          state: 'Retry',
          message: 'an older reason',
          requeueAfterSeconds: 30,
          lastTransitionTime: EARLIER,
        }),
      ]),
    );
    expect(writer.calls.map((c) => c.entry)).toEqual([
      { name: CHECK, state: 'Retry', message: RETRY_8_ON_4_4, requeueAfterSeconds: 30, lastTransitionTime: EARLIER },
    ]);
  });

  it('a different delay alone is a change', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    await r.pass(
      snapshot([observed(eight(), { state: 'Retry', message: RETRY_8_ON_4_4, lastTransitionTime: EARLIER })]),
    );
    expect(writer.calls.map((c) => c.entry.requeueAfterSeconds)).toEqual([30]);
    expect(writer.calls[0]?.entry.lastTransitionTime).toBe(EARLIER);
  });

  it('Retry → Ready moves the transition time to now', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    await r.pass(
      snapshot(
        [
          observed(eight(), {
            state: 'Retry',
            message: RETRY_8_ON_4_4,
            requeueAfterSeconds: 30,
            lastTransitionTime: EARLIER,
          }),
        ],
        [],
      ),
    );
    expect(writer.calls.map((c) => [c.entry.state, c.entry.lastTransitionTime])).toEqual([['Ready', NOW]]);
  });
});

describe('Reconciler: what it leaves alone', () => {
  it.each([
    {
      name: 'no quota reservation',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .condition('QuotaReserved', 'False')
        .obj(),
    },
    {
      name: 'evicted',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .condition('Evicted', 'True')
        .obj(),
    },
    {
      name: 'already admitted',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .condition('Admitted', 'True')
        .obj(),
    },
    {
      name: 'finished',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .condition('Finished', 'True')
        .obj(),
    },
    {
      name: 'deactivated',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .deactivated()
        .obj(),
    },
    {
      name: 'our check not listed',
      workload: makeWorkload('w')
        .podSet('workers', 1, [gpus(8)])
        .listedChecks('other-check')
        .obj(),
    },
  ])('$name → no write', async ({ workload }) => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    expect(await r.pass(snapshot([observed(workload, undefined)]))).toEqual({ written: 0, failed: 0 });
    expect(writer.calls).toEqual([]);
  });

  it('decides each Workload on its own: one awaiting among several that do not', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    const others = [
      observed(
        makeWorkload('evicted')
          .podSet('workers', 1, [gpus(8)])
          .condition('Evicted', 'True')
          .obj(),
        undefined,
      ),
      observed(
        makeWorkload('small')
          .podSet('workers', 1, [gpus(2)])
          .obj(),
        { state: 'Ready', message: 'the assigned flavor pool has enough free cards to place every pod' },
      ),
    ];
    await r.pass(snapshot([...others, observed(eight(), { state: 'Pending' })]));
    expect(writer.calls.map((c) => `${c.workload.name}:${c.entry.state}`)).toEqual(['train:Retry']);
  });
});

describe('Reconciler: no write loops, and failures', () => {
  it('a second pass before the watch brings our write back does not repeat it; a Kueue reset after it does', async () => {
    const writer = fakeWriter();
    const { r } = reconciler(writer);
    const pending = observed(eight(), { state: 'Pending' }, '7');
    await r.pass(snapshot([pending]));
    await r.pass(snapshot([pending]));
    expect(writer.calls).toHaveLength(1);
    // The echo of our write: nothing to do.
    await r.pass(
      snapshot([
        observed(
          eight(),
          { state: 'Retry', message: RETRY_8_ON_4_4, requeueAfterSeconds: 30, lastTransitionTime: NOW },
          '8',
        ),
      ]),
    );
    expect(writer.calls).toHaveLength(1);
    // Kueue evicted, backed off, reserved quota again and reset our entry to Pending: decide again.
    await r.pass(snapshot([observed(eight(), { state: 'Pending', message: '', lastTransitionTime: EARLIER }, '12')]));
    expect(writer.calls).toHaveLength(2);
  });

  it.each([404, 409])('HTTP %i on write is logged and skipped, not counted as a failure', async (status) => {
    const writer = fakeWriter();
    writer.failWith = new ApiError(status, 'PATCH', '/apis/…/status', 'gone or conflict');
    const { r, logger } = reconciler(writer);
    expect(await r.pass(snapshot([observed(eight(), { state: 'Pending' })]))).toEqual({ written: 0, failed: 0 });
    expect(logger.entries.map((e) => [e.level, e.fields['status']])).toEqual([['warn', status]]);
  });

  it('any other failure is counted (the checker retries after a backoff) and the same write is tried again next pass', async () => {
    const writer = fakeWriter();
    writer.failWith = new ApiError(500, 'PATCH', '/apis/…/status', 'etcd unavailable');
    const { r, logger } = reconciler(writer);
    const pending = observed(eight(), { state: 'Pending' });
    expect(await r.pass(snapshot([pending]))).toEqual({ written: 0, failed: 1 });
    expect(logger.entries.map((e) => e.level)).toEqual(['error']);
    writer.failWith = undefined;
    expect(await r.pass(snapshot([pending]))).toEqual({ written: 1, failed: 0 });
    expect(writer.calls).toHaveLength(2);
  });
});

describe('Reconciler: the SchedulingChain names the device resource', () => {
  const RENAMED = 'nvidia.com/gpu-h100';
  const renamedSettings = () =>
    settingsOf({ manufacturers: [{ name: 'nvidia', resourceName: RENAMED }, { name: 'amd' }] });
  const eightRenamed = () =>
    makeWorkload('train')
      .podSet('workers', 1, [gpus(8, 'requests', RENAMED)])
      .obj();
  const busyRenamed = boundPod('busy-gpu-a', 'gpu-a', [gpus(4, 'requests', RENAMED)]);
  const busyRenamedB = boundPod('busy-gpu-b', 'gpu-b', [gpus(4, 'requests', RENAMED)]);

  it("8 cards of the renamed resource on a 4 + 4 pool: Retry with the chain's name, where the table's name sees no demand and answers Ready", async () => {
    const workload = observed(eightRenamed(), { state: 'Pending' });
    const withChain = fakeWriter();
    await reconciler(withChain).r.pass(snapshot([workload], [busyRenamed, busyRenamedB], renamedSettings()));
    expect(withChain.calls.map((c) => c.entry)).toEqual([
      { name: CHECK, state: 'Retry', message: RETRY_8_ON_4_4, requeueAfterSeconds: 30, lastTransitionTime: NOW },
    ]);

    // The same scene with default settings counts `nvidia.com/gpu`: no demand, wrongly Ready.
    const withDefaults = fakeWriter();
    await reconciler(withDefaults).r.pass(snapshot([workload], [busyRenamed, busyRenamedB]));
    expect(withDefaults.calls.map((c) => [c.entry.state, c.entry.message])).toEqual([
      ['Ready', 'no pod set asks for whole accelerator cards; nothing to place'],
    ]);
  });

  it('busy cards are counted in the renamed resource too: 8 renamed cards fit once a node is free of them', async () => {
    const writer = fakeWriter();
    // Pods asking the table's name hold none of the renamed cards.
    await reconciler(writer).r.pass(
      snapshot([observed(eightRenamed(), { state: 'Pending' })], [busyRenamed, ...busy('gpu-b')], renamedSettings()),
    );
    expect(writer.calls.map((c) => c.entry.state)).toEqual(['Ready']);
  });
});
