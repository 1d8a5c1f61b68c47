import { describe, expect, it } from 'vitest';
import {
  createAgentMetrics,
  createAgentState,
  failedManufacturers,
  nextDelayMs,
  runCycle,
  sliceCardsOf,
  type Labels,
  type Publisher,
  type SlicePublisher,
} from '../../src/agent/index.js';
import type { SliceCard } from '../../src/dra/index.js';
import { ApiError } from '../../src/api-client/index.js';
import { detection, h100, mi300x, recordingLogger, times } from './support.js';

/** The midpoint of the jitter: the retry delay unvaried. */
const NO_JITTER = (): number => 0.5;

function labelPublisher(): Publisher & { written: Labels[] } {
  const written: Labels[] = [];
  return {
    mode: 'node-labels',
    written,
    read: () => Promise.resolve(undefined),
    write: (labels) => {
      written.push(labels);
      return Promise.resolve();
    },
  };
}

/** Records what it is asked to publish; fails while `failing` holds an error. */
function slicePublisher(): SlicePublisher & {
  calls: { cards: readonly SliceCard[]; keep: ReadonlySet<string> }[];
  failing?: Error | undefined;
} {
  const self = {
    calls: [] as { cards: readonly SliceCard[]; keep: ReadonlySet<string> }[],
    failing: undefined as Error | undefined,
    publish(cards: readonly SliceCard[], keep: ReadonlySet<string>) {
      self.calls.push({ cards, keep });
      if (self.failing) return Promise.reject(self.failing);
      return Promise.resolve({
        result: 'published' as const,
        written: 2,
        deleted: 0,
        problems: cards.some((c) => c.memoryMiB === -1) ? ['nvidia card 1: implausible memory -1 MiB'] : [],
      });
    },
  };
  return self;
}

describe('the agent cycle publishes ResourceSlices beside the labels', () => {
  it('hands every card to the slice publisher (one with implausible memory too), and reports the problems', async () => {
    const slices = slicePublisher();
    const logger = recordingLogger();
    const state = createAgentState();
    const result = detection([h100(0), h100(1, { memoryMiB: -1 })]);
    expect(
      await runCycle(state, {
        detect: () => Promise.resolve(result),
        publisher: labelPublisher(),
        slicePublisher: slices,
        intervalMs: 60_000,
        logger,
      }),
    ).toBe('published');
    expect(slices.calls[0]?.cards.map((c) => [c.index, c.memoryMiB])).toEqual([
      [0, 81559],
      [1, -1],
    ]);
    expect(logger.entries.filter((e) => e.message === 'resource slices: card reported')).toHaveLength(1);
    expect(state.sliceWrites).toBe(1);
  });

  it('a failing slice write never holds back the labels; it is logged with the API reason and backs off', async () => {
    const slices = slicePublisher();
    slices.failing = new ApiError(
      422,
      'PUT',
      '/apis/resource.k8s.io/v1/resourceslices/x',
      '{"reason":"Invalid","message":"spec.pool.name: field is immutable"}',
    );
    const labels = labelPublisher();
    const logger = recordingLogger();
    const metrics = createAgentMetrics();
    const state = createAgentState();
    const options = {
      detect: () => Promise.resolve(detection(times(2, h100))),
      publisher: labels,
      slicePublisher: slices,
      intervalMs: 60_000,
      logger,
      recorder: metrics,
    };
    expect(await runCycle(state, options)).toBe('published');
    expect(labels.written).toHaveLength(1);
    expect(state.sliceFailures).toBe(1);
    expect(state.lastSliceError).toMatch(/HTTP 422.*field is immutable/);
    const logged = logger.entries.find((e) => e.level === 'error');
    expect(logged?.message).toBe('publishing resource slices failed; will retry');
    expect((logged?.fields as { err: string }).err).toMatch(/Invalid/);
    expect(nextDelayMs(state, 60_000, NO_JITTER)).toBe(1000);
    expect(await runCycle(state, options)).toBe('unchanged');
    expect(nextDelayMs(state, 60_000, NO_JITTER)).toBe(2000);
    delete slices.failing;
    await runCycle(state, options);
    expect(state.sliceFailures).toBe(0);
    expect(nextDelayMs(state, 60_000, NO_JITTER)).toBe(60_000);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/gpustack_agent_slice_publishes_total\{result="failed"\} 2/);
    expect(text).toMatch(/gpustack_agent_slice_publishes_total\{result="published"\} 1/);
  });

  it('a detection that throws publishes no slices (nothing to compare with)', async () => {
    const slices = slicePublisher();
    const state = createAgentState();
    await runCycle(state, {
      detect: () => Promise.reject(new Error('addon gone')),
      publisher: labelPublisher(),
      slicePublisher: slices,
      intervalMs: 60_000,
      logger: recordingLogger(),
    });
    expect(slices.calls).toEqual([]);
  });

  it('a vendor whose detection failed is kept; one whose library is absent is not', async () => {
    const slices = slicePublisher();
    await runCycle(createAgentState(), {
      detect: () => Promise.resolve(detection(times(1, h100), { amd: 'InitFailed' })),
      publisher: labelPublisher(),
      slicePublisher: slices,
      intervalMs: 60_000,
      logger: recordingLogger(),
    });
    expect([...(slices.calls[0]?.keep ?? [])]).toEqual(['amd']);
  });
});

describe('sliceCardsOf / failedManufacturers', () => {
  it('cuts strings at NUL like the labels and keeps memory as reported', () => {
    const cards = sliceCardsOf(
      detection([h100(0, { product: 'NVIDIA H100\u0000garbage', pciBusId: '0000:18:00.0', numaNode: 1 }), mi300x(0)]),
    );
    expect(cards[0]).toMatchObject({ product: 'NVIDIA H100', pciBusId: '0000:18:00.0', numaNode: 1, memoryMiB: 81559 });
    expect(cards[1]?.manufacturer).toBe('amd');
  });

  it('a vendor with cards is never failed, even with an error entry', () => {
    expect([...failedManufacturers(detection([h100(0)], { nvidia: 'CallFailed', ascend: 'InitFailed' }))]).toEqual([
      'ascend',
    ]);
  });
});
