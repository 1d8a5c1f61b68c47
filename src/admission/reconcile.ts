/**
 * @module One reconcile pass: every Workload in the store that awaits our verdict is decided
 * (the pure `decideNodeDevices`), and our entry is written only where state, message or delay
 * differ from the observed one, so our own write, coming back through the watch, causes no
 * further write. The transition time is stamped here, not in the decision (it reads no clock).
 */
import {
  DEVICES_ANNOTATION,
  SliceCache,
  devicePluginCards,
  wantedOwner,
  buildCardRows,
  buildDeviceLedger,
  cardPoolsOf,
  poolResolver,
  type CardRow,
  formatPoolDevices,
  poolDevices,
  type DeviceLedger,
  type ReceivedResourceClaim,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceClaimTemplate,
  type ReceivedResourceSlice,
} from '../dra/index.js';
import { rfc3339Seconds, type ManufacturerName, type Node, type Settings } from '../k8s/index.js';
import { ApiError } from '../api-client/index.js';
import {
  decideNodeDevices,
  indexNodeDevices,
  type ClaimsInput,
  type AdmissionCheckState,
  type NodeDevicesIndex,
  type NodeDevicesVerdict,
  type ReceivedResourceFlavor,
  type Pod,
  type Workload,
} from '../placement/index.js';
import { deviceOwnerSettingOf, deviceResourceOf } from '../contracts/index.js';
import { retryAfterMsOf, type Logger } from '../runtime/index.js';
import { NO_RECORDING, type AdmissionRecorder } from './metrics.js';
import type { ReceivedInstanceType } from '../dra/index.js';
import { objectKey, resourceVersionOf } from './resources.js';
import { ACCELERATABLE_PREFIX, MANAGED_LABEL, acceleratorKeyManufacturer } from '../nodefeature/index.js';
import type { AdmissionCheckEntry, CheckWriter } from './writer.js';
import { OvercommitWarnings, type EventSink } from './events.js';

/** What the stores hold at the start of a pass. */
export interface Snapshot {
  readonly workloads: Iterable<Workload>;
  /** ResourceFlavors by name. */
  readonly flavors: Readonly<Record<string, ReceivedResourceFlavor>>;
  readonly nodes: readonly Node[];
  readonly pods: readonly Pod[];
  /**
   * The SchedulingChain's settings: a manufacturer's device resource is the one they name
   * (`deviceResourceOf`, as the chain builds it), the table's otherwise. A manufacturer the
   * settings disable keeps the table's resource there too: the chain builds it no flavors, so
   * only a Workload left in an old queue of it reaches the decision.
   */
  readonly settings: Settings;
  /**
   * The card ledger's stores, once all three have listed; absent, a Workload whose pods use
   * claims is answered Retry. Templates keyed `namespace/name`, as the informer keeps them.
   */
  readonly dra?: {
    readonly slices: ReadonlyMap<string, ReceivedResourceSlice>;
    readonly claims: ReadonlyMap<string, ReceivedResourceClaim>;
    readonly templates: ReadonlyMap<string, ReceivedResourceClaimTemplate>;
    /** DeviceTaintRules (none where the cluster serves none, or before their first list). */
    readonly taintRules?: ReadonlyMap<string, ReceivedDeviceTaintRule>;
  };
  /** InstanceTypes, to annotate each device pool with the ledger's count (with `dra` only). */
  readonly instanceTypes?: Iterable<ReceivedInstanceType>;
}

/** Managed nodes by `<os>/<arch>`: the nodes an InstanceType's pool can have (its model is checked per card). */
function managedNodesByPlatform(nodes: readonly Node[]): Map<string, Node[]> {
  const out = new Map<string, Node[]>();
  for (const node of nodes) {
    const labels = node.metadata.labels ?? {};
    if (labels[MANAGED_LABEL] !== 'true') continue;
    const key = `${labels['kubernetes.io/os'] ?? ''}/${labels['kubernetes.io/arch'] ?? ''}`;
    const list = out.get(key);
    if (list === undefined) out.set(key, [node]);
    else list.push(node);
  }
  return out;
}

/** Whether the vendor's device plugin owns `mfr`'s cards on `node`, by the agent's rule without the holders. */
function ownedByDevicePlugin(settings: Settings, mfr: ManufacturerName | undefined): (node: Node) => boolean {
  if (mfr === undefined) return () => false;
  const setting = deviceOwnerSettingOf(settings, mfr);
  const resource = deviceResourceOf(settings, mfr);
  return (node) => wantedOwner(setting, resource, node.status?.allocatable).owner === 'DevicePlugin';
}

/**
 * Which of the flavors of model `productKey` a node is in: the first (by name) whose node labels it
 * carries. A cordoned card is taken off that flavor's quota.
 */
function flavorOfNode(
  flavors: Readonly<Record<string, ReceivedResourceFlavor>>,
  nodes: readonly Node[],
  productKey: string,
): (node: string) => string | undefined {
  const keyLabel = `${ACCELERATABLE_PREFIX}${productKey}`;
  const candidates = Object.values(flavors)
    .filter((f) => f.spec?.nodeLabels?.[keyLabel] === 'true')
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const labelsOf = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  return (node) => {
    const labels = labelsOf.get(node);
    if (labels === undefined) return undefined;
    const flavor = candidates.find((f) =>
      Object.entries(f.spec?.nodeLabels ?? {}).every(([key, value]) => labels[key] === value),
    );
    return flavor?.metadata.name;
  };
}

/**
 * The ledger of a pass, built on first use: a pass whose Workloads use no claims never builds it.
 * `cache` outlives the pass: pools whose slices did not change are not turned into cards again.
 */
function claimsInput(dra: NonNullable<Snapshot['dra']>, cache: SliceCache): ClaimsInput {
  let ledger: DeviceLedger | undefined;
  return {
    get ledger() {
      return (ledger ??= buildDeviceLedger(
        dra.slices.values(),
        dra.claims.values(),
        cache,
        dra.taintRules?.values() ?? [],
      ));
    },
    templates: (namespace, name) => dra.templates.get(objectKey({ namespace, name })),
  };
}

/** The per-card rows of this pass's ledger, built on first call (a scrape), at most once. */
function cardRowsOf(
  claims: ClaimsInput,
  nodes: readonly Node[],
  instanceTypes: readonly ReceivedInstanceType[] | undefined,
): () => readonly CardRow[] {
  let rows: CardRow[] | undefined;
  return () =>
    (rows ??= buildCardRows(claims.ledger, { poolOf: poolResolver(cardPoolsOf(instanceTypes ?? []), nodes) }));
}

export interface ReconcilerOptions {
  readonly writer: CheckWriter;
  readonly checkName: string;
  readonly logger: Logger;
  readonly clock?: () => Date;
  /** @default NO_RECORDING */
  readonly recorder?: AdmissionRecorder;
  /**
   * Asked before every write: false once this process stops leading (another checker decides
   * now), so the rest of a pass under way writes nothing. @default always true
   */
  readonly mayWrite?: () => boolean;
  /** Where an over-committed card's Warning Events go (docs/operations.md#faults). @default none recorded */
  readonly events?: EventSink;
}

export interface PassResult {
  readonly written: number;
  /** Writes that failed with something other than 404/409: the caller retries after a backoff. */
  readonly failed: number;
  /** The longest `Retry-After` a failed write carried (429 from API Priority and Fairness): the retry waits at least that. */
  readonly retryAfterMs?: number;
}

/** True when the verdict says something the observed entry does not (the time alone is not a change). */
export function differsFromObserved(verdict: NodeDevicesVerdict, observed: AdmissionCheckState | undefined): boolean {
  if (observed === undefined) return true;
  return (
    observed.state !== verdict.state ||
    (observed.message ?? '') !== verdict.message ||
    observed.requeueAfterSeconds !== verdict.requeueAfterSeconds
  );
}

/** The entry to write: the time moves only when the state does (a new message within `Retry` keeps it). */
export function stampEntry(
  verdict: NodeDevicesVerdict,
  observed: AdmissionCheckState | undefined,
  now: string,
): AdmissionCheckEntry {
  const sameState =
    observed !== undefined && observed.state === verdict.state && observed.lastTransitionTime !== undefined;
  // The entry is what we send: a verdict without a delay has no requeueAfterSeconds key at all.
  const { requeueAfterSeconds, ...rest } = verdict;
  return {
    ...rest,
    ...(requeueAfterSeconds !== undefined ? { requeueAfterSeconds } : {}),
    lastTransitionTime: sameState ? (observed.lastTransitionTime as string) : now,
  };
}

function sameVerdict(a: AdmissionCheckEntry, b: NodeDevicesVerdict): boolean {
  return a.state === b.state && a.message === b.message && a.requeueAfterSeconds === b.requeueAfterSeconds;
}

/** Decides and writes; remembers what it wrote per Workload version so a pass before the watch echo does not repeat it. */
export class Reconciler {
  private readonly written = new Map<
    string,
    { readonly resourceVersion: string | undefined; readonly entry: AdmissionCheckEntry }
  >();

  /** The devices annotation written per InstanceType version, so a pass before the watch echo does not repeat it. */
  private readonly annotated = new Map<
    string,
    { readonly resourceVersion: string | undefined; readonly text: string }
  >();
  /** Our pools' cards, reused across passes while their slices are unchanged. */
  private readonly slices = new SliceCache();
  private readonly warnings: OvercommitWarnings | undefined;

  constructor(private readonly options: ReconcilerOptions) {
    this.warnings = options.events === undefined ? undefined : new OvercommitWarnings(options.events, options.logger);
  }

  async pass(snapshot: Snapshot): Promise<PassResult> {
    const seen = new Set<string>();
    const resourceOf = (mfr: ManufacturerName) => deviceResourceOf(snapshot.settings, mfr);
    // Card usage and pools depend on the Nodes and Pods only: built once, shared by every decision of the pass.
    const index = indexNodeDevices(snapshot.nodes, snapshot.pods);
    const claims = snapshot.dra === undefined ? undefined : claimsInput(snapshot.dra, this.slices);
    let written = 0;
    let failed = 0;
    this.retryAfterMs = undefined;
    for (const workload of snapshot.workloads) {
      const key = objectKey(workload.metadata);
      seen.add(key);
      const outcome = await this.reconcileOne(workload, key, snapshot, { index, claims }, resourceOf);
      if (outcome === 'written') written++;
      else if (outcome === 'failed') failed++;
    }
    for (const key of [...this.written.keys()]) if (!seen.has(key)) this.written.delete(key);
    const instanceTypes = snapshot.instanceTypes === undefined ? undefined : [...snapshot.instanceTypes];
    if (claims !== undefined && instanceTypes !== undefined) {
      const annotated = await this.annotatePools(snapshot, instanceTypes, claims.ledger, snapshot.settings);
      failed += annotated.failed;
    }
    if (claims !== undefined)
      (this.options.recorder ?? NO_RECORDING).cards(cardRowsOf(claims, snapshot.nodes, instanceTypes));
    if (claims !== undefined && this.warnings !== undefined)
      await this.warnings.pass(claims.ledger, this.options.mayWrite?.() ?? true);
    return { written, failed, ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }) };
  }

  /** The longest Retry-After of this pass's failed writes. */
  private retryAfterMs: number | undefined;

  private noteRetryAfter(error: unknown): void {
    const ms = retryAfterMsOf(error);
    if (ms !== undefined) this.retryAfterMs = Math.max(this.retryAfterMs ?? 0, ms);
  }

  /**
   * Writes each device InstanceType's ledger count (`worker.gpustack.ai/devices`) where it differs
   * from the observed one; the instance-type hook copies it into `status.devices` and takes the
   * cordoned cards off their flavors' quota. A cordon thus changes one InstanceType (and its
   * ClusterQueue), never a Node or the chain.
   */
  private async annotatePools(
    snapshot: Pick<Snapshot, 'nodes' | 'flavors'>,
    instanceTypes: Iterable<ReceivedInstanceType>,
    ledger: DeviceLedger,
    settings: Settings,
  ): Promise<{ failed: number }> {
    const nodes = snapshot.nodes;
    const writeDevices = this.options.writer.writeDevices?.bind(this.options.writer);
    if (writeDevices === undefined) return { failed: 0 };
    const byPlatform = managedNodesByPlatform(nodes);
    let failed = 0;
    const seen = new Set<string>();
    for (const type of instanceTypes) {
      const { spec, metadata } = type;
      if (spec?.acceleratable !== true || !spec.acceleratorGroup) continue;
      seen.add(metadata.name);
      const pool = byPlatform.get(`${spec.os ?? ''}/${spec.arch ?? ''}`) ?? [];
      const aKey = spec.acceleratorGroup;
      const devicePlugin = devicePluginCards(
        ledger,
        pool,
        aKey,
        ownedByDevicePlugin(settings, acceleratorKeyManufacturer(aKey)),
      );
      const flavorOf = flavorOfNode(snapshot.flavors, nodes, aKey);
      const devices = {
        ...poolDevices(
          ledger,
          pool.map((n) => n.metadata.name),
          aKey,
          flavorOf,
        ),
        ...(devicePlugin > 0 ? { devicePlugin } : {}),
      };
      const observed = metadata.annotations?.[DEVICES_ANNOTATION];
      // A pool with no cards for DRA nor the device plugin (no agent, or not yet) is left alone, unless we counted it before.
      if (devices.published === 0 && devicePlugin === 0 && observed === undefined) continue;
      const text = formatPoolDevices(devices);
      const resourceVersion = resourceVersionOf(type);
      const previous = this.annotated.get(metadata.name);
      if (observed === text) continue;
      if (previous !== undefined && previous.resourceVersion === resourceVersion && previous.text === text) continue;
      if (!(this.options.mayWrite?.() ?? true)) continue;
      try {
        await writeDevices(metadata.name, text);
        this.annotated.set(metadata.name, { resourceVersion, text });
      } catch (error) {
        // Gone or changed under us: the next pass decides again; anything else is retried with a backoff.
        if (!(error instanceof ApiError && (error.status === 404 || error.status === 409))) failed++;
        this.noteRetryAfter(error);
        this.options.logger.warn(
          { instanceType: metadata.name, err: (error as Error).message },
          'InstanceType devices annotation not written; will try again',
        );
      }
    }
    for (const name of [...this.annotated.keys()]) if (!seen.has(name)) this.annotated.delete(name);
    return { failed };
  }

  private async reconcileOne(
    workload: Workload,
    key: string,
    snapshot: Snapshot,
    shared: { readonly index: NodeDevicesIndex; readonly claims: ClaimsInput | undefined },
    resourceOf: (mfr: ManufacturerName) => string,
  ): Promise<'written' | 'unchanged' | 'skipped' | 'failed'> {
    const { checkName } = this.options;
    const namespace = workload.metadata.namespace;
    const verdict = decideNodeDevices({
      workload,
      flavors: snapshot.flavors,
      nodes: snapshot.nodes,
      pods: snapshot.pods,
      index: shared.index,
      ...(shared.claims === undefined ? {} : { claims: shared.claims }),
      deviceResourceOf: resourceOf,
      checkName,
    });
    if (verdict === undefined || namespace === undefined) return 'skipped';
    const observed = workload.status?.admissionChecks?.find((c) => c.name === checkName);
    if (!differsFromObserved(verdict, observed)) return 'unchanged';
    const resourceVersion = resourceVersionOf(workload);
    const previous = this.written.get(key);
    if (previous && previous.resourceVersion === resourceVersion && sameVerdict(previous.entry, verdict))
      return 'unchanged';
    const entry = stampEntry(verdict, observed, rfc3339Seconds((this.options.clock ?? (() => new Date()))()));
    return this.write({ namespace, name: workload.metadata.name }, key, resourceVersion, entry);
  }

  private async write(
    ref: { namespace: string; name: string },
    key: string,
    resourceVersion: string | undefined,
    entry: AdmissionCheckEntry,
  ): Promise<'written' | 'skipped' | 'failed'> {
    const fields = {
      workload: key,
      namespace: ref.namespace,
      name: ref.name,
      check: entry.name,
      state: entry.state,
      message: entry.message,
    };
    const recorder = this.options.recorder ?? NO_RECORDING;
    if (!(this.options.mayWrite?.() ?? true)) return 'skipped';
    try {
      await this.options.writer.write(ref, entry);
    } catch (error) {
      // Gone or changed under us: the watch brings the new version and the next pass decides again.
      if (error instanceof ApiError && (error.status === 404 || error.status === 409)) {
        this.options.logger.warn(
          { ...fields, status: error.status, err: error.message },
          'admission check not written; will decide again on the next change',
        );
        recorder.write('skipped', entry.state);
        return 'skipped';
      }
      this.noteRetryAfter(error);
      this.options.logger.error(
        { ...fields, err: (error as Error).message },
        'admission check write failed; will retry',
      );
      recorder.write('failed', entry.state);
      return 'failed';
    }
    this.written.set(key, { resourceVersion, entry });
    recorder.write('written', entry.state);
    this.options.logger.info(
      {
        ...fields,
        ...(entry.requeueAfterSeconds !== undefined ? { requeueAfterSeconds: entry.requeueAfterSeconds } : {}),
      },
      'admission check written',
    );
    return 'written';
  }
}
