/**
 * @module Publishes the node's ResourceSlices (docs/architecture.md#resourceslices) through the API server: one pool per
 * manufacturer, written only when the desired slices differ from the published ones, then all
 * of them with the pool generation one above the highest seen. Every write carries a
 * resourceVersion precondition, so two agents of one node (a rolling update) cannot overwrite
 * each other unnoticed: a 409 re-reads the pool and tries again, and the generation only grows.
 * A slice's name is derived from the node (the node restriction lets no other node create it);
 * one held by an object this agent does not own (another node's, another driver's: a squatter it
 * may not delete) is published under a name the API server generates from it instead, and
 * reported, so a squatter costs a name, never the node's cards.
 */
import {
  RESOURCE_API_VERSION,
  resourcePath,
  ReceivedPublishedSliceSchema,
  desiredSlices,
  withGeneration,
  type DesiredPool,
  type ReceivedPublishedSlice,
  type ResourceSlice,
  type SliceCard,
} from '../dra/index.js';
import { ApiError, withQuery, type KubeApi } from '../api-client/index.js';
import { canonicalize, parseQuantityExact, type ManufacturerName } from '../k8s/index.js';
import { SYSTEM_DOMAIN } from '../nodefeature/index.js';
import { isManufacturer } from '../contracts/index.js';

export type SlicePublishResult = 'published' | 'unchanged';

export interface SlicePublishOutcome {
  readonly result: SlicePublishResult;
  /** Slices created or replaced, and deleted, in this call. */
  readonly written: number;
  readonly deleted: number;
  /** Cards left out or published without a figure (the builder's report). */
  readonly problems: readonly string[];
}

export interface SlicePublisher {
  /**
   * Brings the node's pools to the slices of `cards`. A manufacturer in `keep` (its detection
   * failed) keeps the cards this publisher last published for it, each device tainted
   * `gpustack.ai/unhealthy=detection-failed:NoSchedule` so no new claim lands on them while the
   * claims already allocated keep theirs (after a restart, with nothing published by this process
   * yet, its slices stay as they are); any other manufacturer without cards loses its slices, and a
   * card that is gone from a detection that worked leaves its slice.
   */
  publish(cards: readonly SliceCard[], keep: ReadonlySet<string>): Promise<SlicePublishOutcome>;
}

const COLLECTION = resourcePath('resourceslices');

/** The API server answers 404 for the ResourceSlice collection: resource.k8s.io/v1 is not served (DRA off). */
export class SlicesNotServedError extends Error {
  override readonly name = 'SlicesNotServedError';
  constructor(cause: ApiError) {
    super(`${RESOURCE_API_VERSION} is not served by this cluster (DRA off): ${cause.message}`);
  }
}
/** Conflicts re-read and retried within one call; beyond that the agent's backoff takes over. */
const CONFLICT_ATTEMPTS = 4;
const DRIVER_SUFFIX = `.${SYSTEM_DOMAIN}`;

/** Fields whose values are quantities: compared by value, since the API server rewrites `81920Mi` as `80Gi`. */
const QUANTITY_KEYS = new Set(['value', 'default', 'min', 'max', 'step']);

function normalize(value: unknown, key?: string): unknown {
  if (typeof value === 'string' && key !== undefined && QUANTITY_KEYS.has(key)) {
    const exact = parseQuantityExact(value);
    return exact ? `${exact.numerator}/${exact.denominator}` : value;
  }
  if (Array.isArray(value)) return value.map((v) => normalize(v));
  // A device taint's `timeAdded` is the API server's: ours never carries one.
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'timeAdded')
        .map(([k, v]) => [k, normalize(v, k)]),
    );
  return value;
}

/**
 * The name the agent wanted for a published slice: its own, or for one published under a
 * generated name (the wanted one was held), the name it was generated from.
 */
function wantedName(slice: { metadata: { name: string; generateName?: string | undefined } }): string {
  const { name, generateName } = slice.metadata;
  return generateName !== undefined && generateName.endsWith('-') && name.startsWith(generateName)
    ? generateName.slice(0, -1)
    : name;
}

/** What must match for a published slice to count as the desired one: owner, spec but the generation. */
function comparable(slice: ResourceSlice | ReceivedPublishedSlice): string {
  const spec = slice.spec as Record<string, unknown> & { pool: Record<string, unknown> };
  const owners = (slice.metadata as { ownerReferences?: { uid?: string }[] }).ownerReferences ?? [];
  return JSON.stringify(
    canonicalize({
      name: wantedName(slice),
      owners: owners.map((o) => o.uid),
      spec: normalize({ ...spec, pool: { ...spec.pool, generation: 0 } }),
    }),
  );
}

function isConflict(error: unknown): boolean {
  return error instanceof ApiError && error.status === 409;
}

function samePool(desired: readonly ResourceSlice[], existing: readonly ReceivedPublishedSlice[]): boolean {
  if (desired.length !== existing.length) return false;
  if (new Set(existing.map((s) => s.spec.pool.generation)).size > 1) return false;
  const have = new Set(existing.map(comparable));
  return desired.every((s) => have.has(comparable(s)));
}

function nodePath(node: string): string {
  return `/api/v1/nodes/${encodeURIComponent(node)}`;
}

function slicePath(name: string): string {
  return resourcePath('resourceslices', { name });
}

export interface SlicePublisherOptions {
  /**
   * Calls with the cards of the last verified call are answered from memory, without a request,
   * except every this many: then the pool is listed and compared again, so a slice deleted or
   * changed by someone else (or a Node recreated under the same name) is repaired within that
   * many cycles. At the 60 s default interval, 10 is ten minutes. @default 10
   */
  readonly resyncEvery?: number;
}

export function resourceSlicePublisher(
  api: KubeApi,
  node: string,
  options: SlicePublisherOptions = {},
): SlicePublisher {
  return new ResourceSlicePublisher(api, node, options);
}

/** What one call wrote: slices created or replaced, and slices deleted; names found held by others. */
interface Writes {
  written: number;
  deleted: number;
  problems: string[];
}

class ResourceSlicePublisher implements SlicePublisher {
  readonly #api: KubeApi;
  readonly #node: string;
  readonly #resyncEvery: number;
  /** The last call that ended with the API matching its cards, and the calls answered since. */
  #verified: { key: string; problems: readonly string[]; calls: number } | undefined;
  /** The healthy cards last published, by manufacturer: what a failed detection taints. */
  readonly #lastHealthy = new Map<string, readonly SliceCard[]>();

  constructor(api: KubeApi, node: string, options: SlicePublisherOptions) {
    this.#api = api;
    this.#node = node;
    this.#resyncEvery = Math.max(1, options.resyncEvery ?? 10);
  }

  async publish(cards: readonly SliceCard[], keep: ReadonlySet<string>): Promise<SlicePublishOutcome> {
    const all = this.#withUnhealthy(cards, keep);
    const key = JSON.stringify([all, [...keep].sort()]);
    const remembered = this.#answerFromMemory(key);
    if (remembered !== undefined) return remembered;
    this.#verified = undefined;
    const outcome = await this.#syncPools(all, keep);
    this.#verified = { key, problems: outcome.problems, calls: 1 };
    this.#remember(cards, keep);
    return outcome;
  }

  /** The last verified call's answer, while `key` is its key and no resync is due. */
  #answerFromMemory(key: string): SlicePublishOutcome | undefined {
    const verified = this.#verified;
    if (verified?.key !== key || verified.calls >= this.#resyncEvery) return undefined;
    verified.calls++;
    return { result: 'unchanged', written: 0, deleted: 0, problems: verified.problems };
  }

  /** `cards`, plus the last healthy cards of every kept manufacturer that reports none, tainted. */
  #withUnhealthy(cards: readonly SliceCard[], keep: ReadonlySet<string>): SliceCard[] {
    const reported = new Set(cards.map((c) => c.manufacturer as string));
    const unhealthy = [...keep]
      .filter((mfr) => !reported.has(mfr))
      .flatMap((mfr) =>
        (this.#lastHealthy.get(mfr) ?? []).map((card) => ({ ...card, problem: 'detection-failed' as const })),
      );
    return [...cards, ...unhealthy];
  }

  #remember(cards: readonly SliceCard[], keep: ReadonlySet<string>): void {
    const byMfr = new Map<string, SliceCard[]>();
    for (const card of cards) byMfr.set(card.manufacturer, [...(byMfr.get(card.manufacturer) ?? []), card]);
    for (const mfr of [...this.#lastHealthy.keys()])
      if (!byMfr.has(mfr) && !keep.has(mfr)) this.#lastHealthy.delete(mfr);
    for (const [mfr, list] of byMfr) this.#lastHealthy.set(mfr, list);
  }

  /** Brings every pool to the slices of `all`; a conflict re-reads the pools and tries again. */
  async #syncPools(all: readonly SliceCard[], keep: ReadonlySet<string>): Promise<SlicePublishOutcome> {
    const writes: Writes = { written: 0, deleted: 0, problems: [] };
    let uid: string | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        const current = await this.#published();
        // The owner's uid is read only when something may be written, and once per call.
        uid ??= all.length > 0 ? await this.#nodeUid() : undefined;
        const desired = desiredSlices({ name: this.#node, uid }, all);
        await this.#writePools(desired.pools, current, keep, writes);
        const result = writes.written + writes.deleted > 0 ? 'published' : 'unchanged';
        const { written, deleted } = writes;
        return { result, written, deleted, problems: [...desired.problems, ...writes.problems] };
      } catch (error) {
        if (!isConflict(error) || attempt >= CONFLICT_ATTEMPTS) throw error;
      }
    }
  }

  /** Writes each pool that differs from its desired slices, adding what it wrote to `writes`. */
  async #writePools(
    pools: readonly DesiredPool[],
    current: ReadonlyMap<string, readonly ReceivedPublishedSlice[]>,
    keep: ReadonlySet<string>,
    writes: Writes,
  ): Promise<void> {
    const wanted = new Map<string, readonly ResourceSlice[]>(pools.map((p) => [p.manufacturer as string, p.slices]));
    for (const mfr of [...new Set([...wanted.keys(), ...current.keys()])].sort()) {
      const want = wanted.get(mfr as ManufacturerName) ?? [];
      const have = current.get(mfr) ?? [];
      if (want.length === 0 && keep.has(mfr)) continue;
      if (samePool(want, have)) continue;
      const done = await this.#writePool(want, have, writes.problems);
      writes.written += done.written;
      writes.deleted += done.deleted;
    }
  }

  async #nodeUid(): Promise<string> {
    const object = (await this.#api.get(nodePath(this.#node))) as { metadata?: { uid?: string } } | undefined;
    const uid = object?.metadata?.uid;
    if (uid === undefined) throw new Error(`node ${this.#node} not found: its ResourceSlices need it as their owner`);
    return uid;
  }

  /** The manufacturer of a slice of ours on this node; `undefined` for any other slice. */
  #ourManufacturer(slice: ReceivedPublishedSlice): string | undefined {
    if (slice.spec.nodeName !== this.#node) return undefined;
    const driver = slice.spec.driver;
    if (!driver.endsWith(DRIVER_SUFFIX)) return undefined;
    const mfr = driver.slice(0, -DRIVER_SUFFIX.length);
    // Another driver of our domain is not one of ours to delete.
    return isManufacturer(mfr) ? mfr : undefined;
  }

  /** Our slices on this node, by manufacturer (drivers `<mfr>.gpustack.ai`), whatever their names. */
  async #published(): Promise<Map<string, ReceivedPublishedSlice[]>> {
    const byMfr = new Map<string, ReceivedPublishedSlice[]>();
    await this.#list({ fieldSelector: `spec.nodeName=${this.#node}` }, (item) => {
      const parsed = ReceivedPublishedSliceSchema.safeParse(item);
      if (!parsed.success) return;
      const mfr = this.#ourManufacturer(parsed.data);
      if (mfr !== undefined) byMfr.set(mfr, [...(byMfr.get(mfr) ?? []), parsed.data]);
    });
    return byMfr;
  }

  /** Lists slices; a 404 for the collection itself says the API is not served. */
  async #list(query: Record<string, string>, onItem: (item: unknown) => void): Promise<void> {
    try {
      await this.#api.listEach(withQuery(COLLECTION, query), onItem);
    } catch (error) {
      throw error instanceof ApiError && error.status === 404 ? new SlicesNotServedError(error) : error;
    }
  }

  /**
   * Creates `slice`. A 409 for a name held by a slice of ours (another agent of this node wrote it
   * first) rejects, so the pool is read again; a name held by anything else (another node's or
   * driver's slice: not ours to delete) is given up for one the API server generates from it, and
   * the holder reported in `problems`.
   */
  async #create(slice: ResourceSlice, problems: string[]): Promise<void> {
    try {
      await this.#api.create(COLLECTION, slice);
      return;
    } catch (error) {
      if (!isConflict(error)) throw error;
      const { name, ...metadata } = slice.metadata;
      let holder: { spec?: { nodeName?: unknown; driver?: unknown } } | undefined;
      await this.#list({ fieldSelector: `metadata.name=${name}` }, (item) => {
        holder = item as typeof holder;
      });
      // Gone again, or ours: the caller reads the pool again and retries.
      if (holder === undefined) throw error;
      const ours = ReceivedPublishedSliceSchema.safeParse(holder);
      if (ours.success && this.#ourManufacturer(ours.data) !== undefined) throw error;
      const created = (await this.#api.create(COLLECTION, {
        ...slice,
        metadata: { ...metadata, generateName: `${name}-` },
      })) as { metadata?: { name?: string } } | undefined;
      problems.push(
        `ResourceSlice ${name} is held by another (spec.nodeName "${String(holder.spec?.nodeName ?? '')}", ` +
          `driver "${String(holder.spec?.driver ?? '')}"), which this agent may not delete: published as ` +
          `${created?.metadata?.name ?? `${name}-<generated>`}; deleting it frees the name`,
      );
    }
  }

  /** Writes one pool (or deletes it: `desired` empty); a 404 or a 409 on the way rejects. */
  async #writePool(
    desired: readonly ResourceSlice[],
    existing: readonly ReceivedPublishedSlice[],
    problems: string[],
  ): Promise<{ written: number; deleted: number }> {
    // A slice of our driver on this node in another pool cannot be updated into ours (the pool
    // name is immutable: 422): it goes first, so its name is free.
    let deleted = await this.#removeEach(existing.filter((s) => s.spec.pool.name !== this.#node));
    // One slice per wanted name (the first found); a second one of a name (two agents that both
    // fell back to a generated name) goes with the slices no longer wanted.
    const byName = new Map<string, ReceivedPublishedSlice>();
    for (const slice of existing.filter((s) => s.spec.pool.name === this.#node))
      if (!byName.has(wantedName(slice))) byName.set(wantedName(slice), slice);
    const ours = existing.filter((s) => s.spec.pool.name === this.#node);
    const generation = Math.max(-1, ...ours.map((s) => s.spec.pool.generation)) + 1;
    const written = await this.#writeSlices(withGeneration(desired, generation), byName, problems);
    const keep = new Set(desired.map((s) => byName.get(s.metadata.name)?.metadata.name ?? s.metadata.name));
    deleted += await this.#removeEach(ours.filter((s) => !keep.has(s.metadata.name)));
    return { written, deleted };
  }

  /** Creates or replaces each slice (at one generation above the pool's highest), by its wanted name. */
  async #writeSlices(
    slices: readonly ResourceSlice[],
    byName: ReadonlyMap<string, ReceivedPublishedSlice>,
    problems: string[],
  ): Promise<number> {
    // One order for every writer: a second agent of this node conflicts on the first slice.
    for (const slice of slices) {
      const current = byName.get(slice.metadata.name);
      if (current === undefined) await this.#create(slice, problems);
      else
        await this.#api.replace(slicePath(current.metadata.name), {
          ...slice,
          metadata: {
            ...slice.metadata,
            // A slice published under a generated name keeps it, and what it was generated from.
            name: current.metadata.name,
            ...(current.metadata.generateName !== undefined ? { generateName: current.metadata.generateName } : {}),
            resourceVersion: current.metadata.resourceVersion,
          },
        });
    }
    return slices.length;
  }

  /** Deletes each slice, one after another, under its resourceVersion; how many. */
  async #removeEach(slices: readonly ReceivedPublishedSlice[]): Promise<number> {
    for (const slice of slices) await this.#api.remove(slicePath(slice.metadata.name), slice.metadata.resourceVersion);
    return slices.length;
  }
}
