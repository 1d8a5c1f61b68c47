/**
 * The checker's per-card, per-pool and per-holder metrics (docs/operations.md#card-metrics): read
 * from the latest pass's ledger when scraped; the per-card flags are present only while true; a
 * card's model and pool are on `gpustack_card_info` alone.
 */
import { describe, expect, it } from 'vitest';
import {
  CARD_METRICS,
  Reconciler,
  createAdmissionMetrics,
  renderCardMetrics,
  type CheckWriter,
  type Snapshot,
} from '../../src/admission/index.js';
import {
  CORDON_TAINT_KEY,
  UNTAINTED,
  buildCardRows,
  buildDeviceLedger,
  type CardHealth,
  type PublishedCard,
  type ReceivedResourceClaim,
} from '../../src/dra/index.js';
import { resolveSettings } from '../../src/contracts/index.js';
import type { Settings } from '../../src/k8s/index.js';
import { CHECK, deviceFlavor, flavorMap, gpuNode } from '../placement/builders.js';
import { CARD_MIB, H100_KEY, allocatedClaim, nodePool } from '../dra/builders.js';
import { recordingLogger } from './support.js';

const GiB = 2 ** 30;
const CARD_BYTES = CARD_MIB * 2 ** 20;
const POOL = 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64';

const noWrites: CheckWriter = { write: () => Promise.resolve() };

function settings(): Settings {
  const resolution = resolveSettings(undefined);
  if (!resolution.ok) throw new Error(resolution.message);
  return resolution.settings;
}

function snapshot(claims: ReceivedResourceClaim[]): Snapshot {
  const slices = [...nodePool('gpu-a', 4), ...nodePool('gpu-b', 2)];
  return {
    workloads: [],
    flavors: flavorMap(deviceFlavor()),
    nodes: [gpuNode('gpu-a', 4, H100_KEY), gpuNode('gpu-b', 2, H100_KEY)],
    pods: [],
    settings: settings(),
    dra: {
      slices: new Map(slices.map((s) => [s.metadata.name, s])),
      claims: new Map(claims.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c])),
      templates: new Map(),
    },
    instanceTypes: [
      {
        metadata: { name: POOL },
        spec: { acceleratable: true, acceleratorGroup: H100_KEY, os: 'linux', arch: 'amd64' },
      },
    ],
  };
}

const CLAIMS = () => [
  allocatedClaim('train', [{ node: 'gpu-a', device: 'card-0' }]),
  allocatedClaim('infer', [
    { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '20Gi', units: '400k', cores: '25' } },
  ]),
];

/** The sample lines of one metric, without HELP and TYPE. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('per-card metrics of the checker', () => {
  it('exports nothing per card before a pass with the ledger', async () => {
    const metrics = createAdmissionMetrics();
    const text = await metrics.registry.metrics();
    for (const { name } of CARD_METRICS) expect(samples(text, name)).toEqual([]);
    expect(samples(text, 'gpustack_pool_cards')).toEqual([]);
  });

  it('after a pass: every card with its pool, capacities, promises and claims; pool and holder counts', async () => {
    const metrics = createAdmissionMetrics();
    const r = new Reconciler({ writer: noWrites, checkName: CHECK, logger: recordingLogger(), recorder: metrics });
    await r.pass(snapshot(CLAIMS()));
    const text = await metrics.registry.metrics();
    expect(samples(text, 'gpustack_card_info')).toHaveLength(6);
    expect(text).toContain(`gpustack_card_info{node="gpu-a",card="0",model="${H100_KEY}",pool="${POOL}"} 1\n`);
    expect(text).toContain(`gpustack_card_memory_bytes{node="gpu-b",card="1"} ${CARD_BYTES}\n`);
    expect(text).toContain('gpustack_card_units{node="gpu-b",card="1"} 1600000\n');
    expect(text).toContain(`gpustack_card_memory_promised_bytes{node="gpu-a",card="0"} ${CARD_BYTES}\n`);
    expect(text).toContain(`gpustack_card_memory_promised_bytes{node="gpu-a",card="1"} ${20 * GiB}\n`);
    expect(text).toContain('gpustack_card_units_promised{node="gpu-a",card="1"} 400000\n');
    expect(text).toContain('gpustack_card_memory_promised_bytes{node="gpu-a",card="2"} 0\n');
    expect(text).toContain('gpustack_card_claims{node="gpu-a",card="1"} 1\n');
    // Flags: present only while true.
    expect(samples(text, 'gpustack_card_whole')).toEqual(['gpustack_card_whole{node="gpu-a",card="0"} 1']);
    expect(samples(text, 'gpustack_card_cordoned')).toEqual([]);
    expect(samples(text, 'gpustack_pool_cards')).toEqual([`gpustack_pool_cards{pool="${POOL}"} 6`]);
    expect(samples(text, 'gpustack_pool_cards_free')).toEqual([`gpustack_pool_cards_free{pool="${POOL}"} 4`]);
    expect(samples(text, 'gpustack_pool_cards_shared')).toEqual([`gpustack_pool_cards_shared{pool="${POOL}"} 1`]);
    expect(samples(text, 'gpustack_holder_memory_promised_bytes')).toEqual([
      `gpustack_holder_memory_promised_bytes{namespace="team-a",pod="infer-pod"} ${20 * GiB}`,
      `gpustack_holder_memory_promised_bytes{namespace="team-a",pod="train-pod"} ${CARD_BYTES}`,
    ]);
  });

  it('follows the next pass: a claim gone frees its card in the next scrape', async () => {
    const metrics = createAdmissionMetrics();
    const r = new Reconciler({ writer: noWrites, checkName: CHECK, logger: recordingLogger(), recorder: metrics });
    await r.pass(snapshot(CLAIMS()));
    expect(await metrics.registry.metrics()).toContain('gpustack_card_whole{node="gpu-a",card="0"} 1');
    await r.pass(snapshot(CLAIMS().slice(1)));
    const text = await metrics.registry.metrics();
    expect(samples(text, 'gpustack_card_whole')).toEqual([]);
    expect(text).toContain('gpustack_card_memory_promised_bytes{node="gpu-a",card="0"} 0\n');
    expect(samples(text, 'gpustack_pool_cards_free')).toEqual([`gpustack_pool_cards_free{pool="${POOL}"} 5`]);
    expect(samples(text, 'gpustack_holder_cards')).toEqual([
      'gpustack_holder_cards{namespace="team-a",pod="infer-pod"} 1',
    ]);
  });

  it('renders a cordoned and an unhealthy card as flags, whatever source the health came from', () => {
    const ledger = buildDeviceLedger(nodePool('gpu-a', 3), []);
    const health = (card: PublishedCard): CardHealth =>
      card.name === 'card-1'
        ? { cordoned: true, unhealthy: false, blocked: true, taints: [{ key: CORDON_TAINT_KEY, effect: 'NoSchedule' }] }
        : card.name === 'card-2'
          ? {
              cordoned: false,
              unhealthy: true,
              blocked: true,
              taints: [{ key: 'gpustack.ai/unhealthy', effect: 'NoSchedule' }],
            }
          : UNTAINTED;
    const text = renderCardMetrics(buildCardRows(ledger, { health }));
    expect(samples(text, 'gpustack_card_cordoned')).toEqual(['gpustack_card_cordoned{node="gpu-a",card="1"} 1']);
    expect(samples(text, 'gpustack_card_unhealthy')).toEqual(['gpustack_card_unhealthy{node="gpu-a",card="2"} 1']);
    // A card in no pool: an empty pool label (Prometheus reads it as absent).
    expect(text).toContain(`gpustack_card_info{node="gpu-a",card="0",model="${H100_KEY}",pool=""} 1\n`);
    expect(samples(text, 'gpustack_card_overcommitted')).toEqual([]);
    // Every metric once, as HELP and TYPE gauge.
    for (const { name } of CARD_METRICS) expect(text).toContain(`# TYPE ${name} gauge\n`);
  });

  it('renders an over-committed card (issue 46) as a flag, present only while its claims hold more than it has', () => {
    const whole = allocatedClaim('whole', [{ node: 'gpu-a', device: 'card-2' }]);
    const share = allocatedClaim('share', [{ node: 'gpu-a', device: 'card-2-shared', consumed: { memory: '1Gi' } }]);
    const over = renderCardMetrics(buildCardRows(buildDeviceLedger(nodePool('gpu-a', 3), [whole, share])));
    expect(samples(over, 'gpustack_card_overcommitted')).toEqual([
      'gpustack_card_overcommitted{node="gpu-a",card="2"} 1',
    ]);
    const within = renderCardMetrics(buildCardRows(buildDeviceLedger(nodePool('gpu-a', 3), [whole])));
    expect(samples(within, 'gpustack_card_overcommitted')).toEqual([]);
  });
});
