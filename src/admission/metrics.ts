/**
 * @module Prometheus metrics of the admission checker, named like the hook server's
 * (`gpustack_<part>_…`), on a registry of its own; `/metrics` beside `/healthz` serves them. The
 * per-card, per-pool and per-holder gauges (docs/operations.md#card-metrics) are read from the
 * latest pass's ledger when scraped, not set during passes: 5,000 nodes have 40,000 cards.
 */
import { Gauge, type Registry } from 'prom-client';
import { countHolders, countPoolCards, type CardRow, type HolderCounts, type PoolCardCounts } from '../dra/index.js';
import { counterOn, createRegistry, secondsOn } from '../runtime/index.js';

/** What the checker reports as it works; `NO_RECORDING` where nobody scrapes (tests, `serve --admission` off). */
export interface AdmissionRecorder {
  /** One reconcile pass took `seconds`. */
  pass(seconds: number): void;
  /** One write of our entry: `written` with the verdict's state, or `skipped` (404/409) / `failed`. */
  write(result: 'written' | 'skipped' | 'failed', state: string): void;
  /** A watch of `resource` lost its stream for good and lists again (not the first list). */
  watchRestart(resource: string): void;
  /** The cards as the latest pass's ledger has them; called when scraped, once per pass at most. */
  cards(rows: () => readonly CardRow[]): void;
  /** This checker started or stopped leading (deciding and writing); also called once at the start. */
  leading?(leading: boolean): void;
}

export const NO_RECORDING: AdmissionRecorder = {
  pass: () => {},
  write: () => {},
  watchRestart: () => {},
  cards: () => {},
};

export interface AdmissionMetrics extends AdmissionRecorder {
  readonly registry: Registry;
}

export function createAdmissionMetrics(options: { defaultMetrics?: boolean } = {}): AdmissionMetrics {
  const registry = createRegistry(options);
  const passDuration = secondsOn(
    registry,
    'gpustack_admission_pass_duration_seconds',
    'Time of one reconcile pass: every Workload awaiting our verdict decided, changed entries written.',
    [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  );
  const verdicts = counterOn(
    registry,
    'gpustack_admission_verdicts_total',
    'Verdicts written to Workloads (only changes are written), by state (Ready, Retry).',
    ['state'],
  );
  const writes = counterOn(
    registry,
    'gpustack_admission_writes_total',
    'Writes of our admission check entry, by result (written, skipped: 404/409, failed: retried).',
    ['result'],
  );
  const restarts = counterOn(
    registry,
    'gpustack_admission_watch_restarts_total',
    'Relists of a watched resource after its watch was lost (410 Gone, errors), by resource.',
    ['resource'],
  );
  const leader = new Gauge({
    name: 'gpustack_admission_leader',
    help: '1 while this checker holds the leader Lease (decides and writes), 0 while another does.',
    registers: [registry],
  });
  return {
    registry,
    leading: (leading) => leader.set(leading ? 1 : 0),
    pass: (seconds) => passDuration.observe(seconds),
    write: (result, state) => {
      writes.inc({ result });
      if (result === 'written') verdicts.inc({ state });
    },
    watchRestart: (resource) => restarts.inc({ resource }),
    cards: registerCardGauges(registry),
  };
}

/** One value of a gauge read at scrape time. */
interface ViewValue {
  readonly value: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** A gauge whose values are computed when it is scraped, without a `set()` per series. */
class ViewGauge extends Gauge {
  readonly #read: () => readonly ViewValue[];

  constructor(
    registry: Registry,
    name: string,
    help: string,
    labelNames: readonly string[],
    read: () => readonly ViewValue[],
  ) {
    super({ name, help, labelNames, registers: [registry] });
    this.#read = read;
  }

  override async get(): Promise<Awaited<ReturnType<Gauge['get']>>> {
    const base = await super.get();
    return { ...base, values: [...this.#read()] };
  }
}

/**
 * The per-card series (docs/operations.md#card-metrics): each labelled `node` and `card` (the
 * index), so a name has at most one series per published card — 5,000 nodes × 8 cards: 40,000.
 * `model` and `pool` are on `gpustack_card_info` alone (join with `* on(node, card)
 * group_left(pool) gpustack_card_info`): on every series they would double the scrape. The four
 * flags are present (value 1) only while true, as kube-state-metrics' taint series are: at 40,000
 * cards the zeros alone would be 7 MB of the text. Rendered by hand, not by prom-client, which
 * takes seconds over 300,000 series.
 */
export const CARD_METRICS: readonly {
  readonly name: string;
  readonly help: string;
  /** The value; `null`: no series for this card. */
  readonly value: (row: CardRow) => number | null;
}[] = [
  {
    name: 'gpustack_card_info',
    help: "A card's model (aKey) and pool (InstanceType; empty: none); always 1.",
    value: () => 1,
  },
  {
    name: 'gpustack_card_memory_bytes',
    help: "Memory of the card (its shared device's memory capacity).",
    value: (r) => r.memoryBytes,
  },
  {
    name: 'gpustack_card_units',
    help: "Compute units of the card (its shared device's units capacity).",
    value: (r) => r.units,
  },
  {
    name: 'gpustack_card_memory_promised_bytes',
    help: 'Memory promised to claims: the whole card, or what its shares consumed.',
    value: (r) => r.promised.memoryBytes,
  },
  {
    name: 'gpustack_card_units_promised',
    help: 'Units promised to claims: the whole card, or what its shares consumed.',
    value: (r) => r.promised.units,
  },
  {
    name: 'gpustack_card_claims',
    help: 'ResourceClaims holding the card, whole or by a share.',
    value: (r) => r.claims.length,
  },
  {
    name: 'gpustack_card_whole',
    help: 'Present (1) while a claim holds the whole card; absent otherwise.',
    value: (r) => (r.state === 'whole' ? 1 : null),
  },
  {
    name: 'gpustack_card_cordoned',
    help: 'Present (1) while the card is cordoned (a gpustack.ai/cordoned device taint); absent otherwise.',
    value: (r) => (r.cordoned ? 1 : null),
  },
  {
    name: 'gpustack_card_unhealthy',
    help: 'Present (1) while the card is unhealthy (a gpustack.ai/unhealthy device taint); absent otherwise.',
    value: (r) => (r.unhealthy ? 1 : null),
  },
  {
    name: 'gpustack_card_overcommitted',
    help: 'Present (1) while claims hold the card beyond its counters (memory, cores, units; whole and shared at once); absent otherwise.',
    value: (r) => (r.overcommitted !== null ? 1 : null),
  },
];

/** The labels of `gpustack_card_info`; every other per-card series has the first two. */
export const CARD_LABELS = ['node', 'card', 'model', 'pool'] as const;

interface CardsView {
  readonly rows: readonly CardRow[];
  readonly pools: readonly PoolCardCounts[];
  readonly holders: readonly HolderCounts[];
}

/** A label value as the text format needs it (names and keys never need it; a safeguard). */
function labelValue(text: string): string {
  return /[\\"\n]/.test(text) ? text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : text;
}

/** The text of the per-card series of one view, in the Prometheus text format. */
export function renderCardMetrics(rows: readonly CardRow[]): string {
  const ids = rows.map(
    (r) => `node="${labelValue(r.node)}",card="${labelValue(r.index === null ? r.card : String(r.index))}"`,
  );
  let out = '';
  for (const metric of CARD_METRICS) {
    out += `# HELP ${metric.name} ${metric.help}\n# TYPE ${metric.name} gauge\n`;
    const info = metric.name === 'gpustack_card_info';
    rows.forEach((row, i) => {
      const value = metric.value(row);
      if (value === null) return;
      const labels = info
        ? `${ids[i]},model="${labelValue(row.model ?? '')}",pool="${labelValue(row.pool ?? '')}"`
        : ids[i];
      out += `${metric.name}{${labels}} ${value}\n`;
    });
  }
  return out;
}

/** The per-card, per-pool and per-holder gauges; returns the recorder's `cards`. */
function registerCardGauges(registry: Registry): (rows: () => readonly CardRow[]) => void {
  let source: (() => readonly CardRow[]) | undefined;
  let built: { readonly source: () => readonly CardRow[]; readonly view: CardsView } | undefined;
  const view = (): CardsView | undefined => {
    if (source === undefined) return undefined;
    if (built?.source !== source) {
      const rows = source();
      built = { source, view: { rows, pools: countPoolCards(rows), holders: countHolders(rows) } };
    }
    return built.view;
  };
  const perPool = (name: string, help: string, value: (pool: PoolCardCounts) => number) =>
    new ViewGauge(registry, name, help, ['pool'], () =>
      (view()?.pools ?? []).map((p) => ({ value: value(p), labels: { pool: p.pool } })),
    );
  perPool(
    'gpustack_pool_cards',
    'Cards in the pool (an InstanceType): its model on the managed nodes of its os/arch.',
    (p) => p.cards,
  );
  perPool(
    'gpustack_pool_cards_free',
    'Cards of the pool a whole claim can take: held by no claim, not cordoned, not unhealthy.',
    (p) => p.free,
  );
  perPool('gpustack_pool_cards_cordoned', 'Cordoned cards of the pool.', (p) => p.cordoned);
  perPool('gpustack_pool_cards_unhealthy', 'Unhealthy cards of the pool.', (p) => p.unhealthy);
  perPool('gpustack_pool_cards_shared', 'Cards of the pool held by shares.', (p) => p.shared);
  const perHolder = (name: string, help: string, value: (holder: HolderCounts) => number) =>
    new ViewGauge(registry, name, help, ['namespace', 'pod'], () =>
      (view()?.holders ?? []).map((h) => ({ value: value(h), labels: { namespace: h.namespace, pod: h.pod } })),
    );
  perHolder(
    'gpustack_holder_cards',
    'Cards a Pod holds whole or a share of, through the claims reserved for it.',
    (h) => h.cards,
  );
  perHolder(
    'gpustack_holder_memory_promised_bytes',
    'Card memory promised to a Pod through the claims reserved for it.',
    (h) => h.memoryBytes,
  );
  // The per-card block follows prom-client's text (which ends with a newline), same format.
  const plain = registry.metrics.bind(registry);
  let rendered: { readonly view: CardsView; readonly text: string } | undefined;
  registry.metrics = async () => {
    const text = await plain();
    const current = view();
    if (current === undefined || current.rows.length === 0) return text;
    // A second scrape of the same pass renders nothing again.
    if (rendered?.view !== current) rendered = { view: current, text: renderCardMetrics(current.rows) };
    return `${text}${rendered.text}`;
  };
  return (rows) => {
    source = rows;
  };
}
