/**
 * @module NodePrepareResources / NodeUnprepareResources of one driver: per claim, read the claim
 * from the API, take the devices allocated to our driver in this node's pool, write the claim's CDI
 * spec and answer its CDI device ids. A checkpoint file records every prepared claim (its answer
 * and its spec) before the spec is written, so a repeated prepare answers the same ids, a spec lost
 * in a crash is rewritten, and an unprepare after a restart still removes the spec. What a kill
 * leaves half done is finished on the next start: the temporary files of an interrupted write are
 * removed, and a claim the checkpoint holds that the API no longer has (deleted, or recreated under
 * its name with another uid, while nothing told this plugin) is unprepared by `collectStale`.
 * A claim whose devices, added to the claims already prepared, would hold a card beyond its
 * counters in our published ResourceSlices (`checkPrepare`: a scheduler that counted an allocation
 * twice, docs/operations.md#faults) is refused before anything is written; the claims prepared stay.
 * Errors are per claim, in the answer (the kubelet retries those claims); nothing here throws to the caller.
 */
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Device } from '../../native/index.js';
import {
  CDI_CLASS,
  ReceivedResourceSliceSchema,
  buildClaimSpec,
  cdiSpecFileName,
  checkPrepare,
  claimAllocationOnNode,
  driverName,
  type AllocatedDevice,
  type CardFacts,
  type ClaimCard,
  type ClaimReference,
  type NodeClaim,
  type ReceivedResourceSlice,
} from '../dra/index.js';
import type { ManufacturerName } from '../k8s/index.js';
import { SILENT_LOGGER, type Logger } from '../runtime/index.js';
import { removeFile, writeFileAtomic } from './files.js';
import type { PrepareResultWire, PreparedDeviceWire } from './protos.js';

export interface PreparerOptions {
  readonly manufacturer: ManufacturerName;
  /** This node's name: our pool. */
  readonly node: string;
  /** Where CDI specs go (`/var/run/cdi`). */
  readonly cdiDir: string;
  /** The checkpoint file (in the driver's plugin folder, which survives restarts of the agent). */
  readonly checkpointFile: string;
  /** GET the ResourceClaim; `undefined` when it does not exist. */
  readonly readClaim: (namespace: string, name: string) => Promise<unknown>;
  /** LIST the ResourceSlices of this node (every driver's; ours are picked by driver): the cards' counters. */
  readonly readSlices: () => Promise<readonly unknown[]>;
  /** The cards of this manufacturer the latest detection found. */
  readonly cards: () => readonly Device[];
  /** A card's facts beyond the detection (its DRM nodes). */
  readonly cardFacts: (device: Device) => CardFacts;
  /** Whether the host has a device node (paths as the container sees them, `/dev/...`). */
  readonly nodeExists: (devicePath: string) => boolean;
  readonly logger?: Logger;
}

const PreparedDeviceSchema = z.object({
  request_names: z.array(z.string()),
  pool_name: z.string(),
  device_name: z.string(),
  cdi_device_ids: z.array(z.string()),
  share_id: z.string().optional(),
});

/** One allocation result of ours as prepared, with what it consumed (memory in bytes, cores, units). */
const PreparedResultSchema = z.object({
  driver: z.string(),
  pool: z.string(),
  device: z.string(),
  consumedCapacity: z.record(z.string(), z.number()).optional(),
});

const CheckpointSchema = z.object({
  version: z.literal(1),
  claims: z.record(
    z.string(),
    z.object({
      namespace: z.string(),
      name: z.string(),
      specFile: z.string(),
      spec: z.unknown(),
      devices: z.array(PreparedDeviceSchema),
      /**
       * What the claim holds of its cards, for the counter check of the next claims. Absent in
       * entries written before it was kept: their devices count at the request policy's default.
       */
      results: z.array(PreparedResultSchema).optional(),
    }),
  ),
});
type Checkpoint = z.infer<typeof CheckpointSchema>;
type CheckpointEntry = Checkpoint['claims'][string];

export class ClaimPreparer {
  readonly driver: string;
  private checkpoint: Checkpoint | undefined;
  /** One batch at a time: the checkpoint is read-modify-written. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: PreparerOptions) {
    this.driver = driverName(options.manufacturer);
  }

  /** Claim uids the checkpoint holds (health and tests). */
  async preparedClaims(): Promise<string[]> {
    return Object.keys((await this.load()).claims).sort();
  }

  prepare(claims: readonly ClaimReference[]): Promise<Record<string, PrepareResultWire>> {
    return this.serial(async () => {
      const out: Record<string, PrepareResultWire> = {};
      for (const claim of claims) out[claim.uid] = await this.prepareOne(claim);
      return out;
    });
  }

  unprepare(claims: readonly ClaimReference[]): Promise<Record<string, { error: string }>> {
    return this.serial(async () => {
      const out: Record<string, { error: string }> = {};
      for (const claim of claims) out[claim.uid] = { error: await this.unprepareOne(claim) };
      return out;
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => {});
    return next;
  }

  /**
   * Unprepares every checkpointed claim the API says is gone: not found, or found with another uid.
   * Such a claim is no Pod's any more (a claim is deleted only once no Pod holds it), so its spec
   * and entry are garbage the kubelet will not ask about if it lost track of it. A claim that
   * cannot be read now (the API down) is kept for the next call. Answers the uids removed.
   */
  collectStale(): Promise<string[]> {
    return this.serial(async () => {
      const removed: string[] = [];
      for (const [uid, entry] of Object.entries((await this.load()).claims)) {
        let raw: unknown;
        try {
          raw = await this.options.readClaim(entry.namespace, entry.name);
        } catch {
          continue;
        }
        const current = (raw as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
        if (raw !== undefined && current === uid) continue;
        const error = await this.unprepareOne({ namespace: entry.namespace, name: entry.name, uid });
        if (error === '') removed.push(uid);
      }
      if (removed.length > 0)
        (this.options.logger ?? SILENT_LOGGER).info(
          { driver: this.driver, claims: removed },
          'unprepared stale claims',
        );
      return removed;
    });
  }

  private async load(): Promise<Checkpoint> {
    if (this.checkpoint) return this.checkpoint;
    // First use in this process: no write of ours is under way, so a temporary file is a killed run's.
    await this.removeInterruptedWrites();
    let text: string | undefined;
    try {
      text = await readFile(this.options.checkpointFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text === undefined) {
      this.checkpoint = { version: 1, claims: {} };
      return this.checkpoint;
    }
    const parsed = CheckpointSchema.safeParse(JSON.parse(text));
    if (!parsed.success)
      throw new Error(`checkpoint ${this.options.checkpointFile} is not one this agent wrote: ${parsed.error.message}`);
    this.checkpoint = parsed.data;
    return this.checkpoint;
  }

  /** The dot-named temporary files of writeFileAtomic (checkpoint and this driver's specs) a kill left behind. */
  private async removeInterruptedWrites(): Promise<void> {
    const sweeps = [
      { dir: this.options.cdiDir, prefix: `.${this.driver}-${CDI_CLASS}_` },
      { dir: path.dirname(this.options.checkpointFile), prefix: `.${path.basename(this.options.checkpointFile)}.` },
    ];
    for (const { dir, prefix } of sweeps) {
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      for (const name of names)
        if (name.startsWith(prefix) && name.endsWith('.tmp')) await removeFile(path.join(dir, name));
    }
  }

  private async save(checkpoint: Checkpoint): Promise<void> {
    await writeFileAtomic(this.options.checkpointFile, `${JSON.stringify(checkpoint, null, 2)}\n`);
  }

  private specPath(uid: string): string {
    return path.join(this.options.cdiDir, cdiSpecFileName(this.options.manufacturer, uid));
  }

  private async prepareOne(ref: ClaimReference): Promise<PrepareResultWire> {
    const logger = this.options.logger ?? SILENT_LOGGER;
    try {
      const checkpoint = await this.load();
      const known = checkpoint.claims[ref.uid];
      if (known) {
        // Prepared before (a retry, or after a restart): same answer; the spec is rewritten in case it was lost.
        await writeFileAtomic(known.specFile, `${JSON.stringify(known.spec, null, 2)}\n`);
        return { devices: known.devices, error: '' };
      }
      const raw = await this.options.readClaim(ref.namespace, ref.name);
      if (raw === undefined) return fail(`ResourceClaim ${ref.namespace}/${ref.name} not found`);
      const allocation = claimAllocationOnNode(raw, ref, this.driver, this.options.node);
      if (!allocation.ok) return fail(allocation.error);
      const cards = new Map(this.options.cards().map((d) => [d.index, d]));
      const claimCards: ClaimCard[] = [];
      for (const allocated of allocation.devices) {
        const device = cards.get(allocated.index);
        if (!device)
          return fail(`${allocated.device}: card ${allocated.index} of ${this.driver} is not on this node any more`);
        claimCards.push({ allocated, card: this.options.cardFacts(device) });
      }
      const results = allocation.devices.map((d) => preparedResult(this.driver, d));
      const check = checkPrepare(
        await this.ourSlices(),
        preparedClaims(checkpoint, this.driver),
        { namespace: ref.namespace, name: ref.name, results },
        this.driver,
      );
      if (!check.ok) {
        logger.warn({ driver: this.driver, uid: ref.uid, err: check.error }, 'refused to prepare claim');
        return fail(check.error);
      }
      const { spec, cdiDeviceIds } = buildClaimSpec(
        this.options.manufacturer,
        ref.uid,
        claimCards,
        this.options.nodeExists,
      );
      const devices: PreparedDeviceWire[] = claimCards.map(({ allocated }, i) => ({
        request_names: [allocated.request],
        pool_name: allocated.pool,
        device_name: allocated.device,
        cdi_device_ids: [cdiDeviceIds[i] as string],
        ...(allocated.shareID !== undefined ? { share_id: allocated.shareID } : {}),
      }));
      const entry: CheckpointEntry = {
        namespace: ref.namespace,
        name: ref.name,
        specFile: this.specPath(ref.uid),
        spec,
        devices,
        results,
      };
      // Checkpoint first: a crash before the spec is written leaves an entry that the next prepare completes
      // and the next unprepare cleans up.
      await this.save({ ...checkpoint, claims: { ...checkpoint.claims, [ref.uid]: entry } });
      this.checkpoint = { ...checkpoint, claims: { ...checkpoint.claims, [ref.uid]: entry } };
      await writeFileAtomic(entry.specFile, `${JSON.stringify(spec, null, 2)}\n`);
      logger.info(
        { driver: this.driver, claim: `${ref.namespace}/${ref.name}`, uid: ref.uid, cdiDeviceIds },
        'prepared claim',
      );
      return { devices, error: '' };
    } catch (error) {
      logger.error({ driver: this.driver, uid: ref.uid, err: (error as Error).message }, 'prepare failed');
      return fail(`prepare ${ref.namespace}/${ref.name}: ${(error as Error).message}`);
    }
  }

  /** This node's slices of our driver, as the API has them (a slice that does not parse is skipped). */
  private async ourSlices(): Promise<ReceivedResourceSlice[]> {
    const out: ReceivedResourceSlice[] = [];
    for (const item of await this.options.readSlices()) {
      const parsed = ReceivedResourceSliceSchema.safeParse(item);
      if (parsed.success && parsed.data.spec.driver === this.driver) out.push(parsed.data);
    }
    return out;
  }

  private async unprepareOne(ref: ClaimReference): Promise<string> {
    const logger = this.options.logger ?? SILENT_LOGGER;
    try {
      const checkpoint = await this.load();
      const known = checkpoint.claims[ref.uid];
      // Not in the checkpoint: never prepared here, or the checkpoint was lost after the spec was written.
      await removeFile(known?.specFile ?? this.specPath(ref.uid));
      if (known) {
        const claims = { ...checkpoint.claims };
        delete claims[ref.uid];
        await this.save({ ...checkpoint, claims });
        this.checkpoint = { ...checkpoint, claims };
        logger.info({ driver: this.driver, claim: `${ref.namespace}/${ref.name}`, uid: ref.uid }, 'unprepared claim');
      }
      return '';
    } catch (error) {
      logger.error({ driver: this.driver, uid: ref.uid, err: (error as Error).message }, 'unprepare failed');
      return `unprepare ${ref.namespace}/${ref.name}: ${(error as Error).message}`;
    }
  }
}

function preparedResult(driver: string, device: AllocatedDevice): z.infer<typeof PreparedResultSchema> {
  const { pool, consumed } = device;
  return {
    driver,
    pool,
    device: device.device,
    ...(consumed !== undefined ? { consumedCapacity: { ...consumed } } : {}),
  };
}

/** The claims of the checkpoint as the counter check reads them. */
function preparedClaims(checkpoint: Checkpoint, driver: string): NodeClaim[] {
  return Object.values(checkpoint.claims).map((entry) => ({
    namespace: entry.namespace,
    name: entry.name,
    results: entry.results ?? entry.devices.map((d) => ({ driver, pool: d.pool_name, device: d.device_name })),
  }));
}

function fail(error: string): PrepareResultWire {
  return { devices: [], error };
}
