/**
 * @module The node's kubelet plugins: one per manufacturer the agent has detected cards of, started
 * the first time a detection finds one and kept until the agent stops (a card that vanishes for a
 * while must not take the driver away: its claims still need unpreparing).
 */
import type { DetectResult, Device } from '../../native/index.js';
import {
  cardProblems,
  driverName,
  resourcePath,
  sharedDeviceName,
  wholeDeviceName,
  type CardIdentity,
  type CardProblem,
} from '../dra/index.js';
import type { ManufacturerName } from '../k8s/index.js';
import { SILENT_LOGGER, type Logger } from '../runtime/index.js';
import { cardFactsOnHost, deviceNodeExistsOnHost } from './host.js';
import { ClaimPreparer } from './preparer.js';
import type { DeviceHealthWire } from './protos.js';
import { pluginPaths, startKubeletPlugin, type PluginStatus, type RunningPlugin } from './server.js';

export interface KubeletPluginsOptions {
  readonly node: string;
  readonly registryDir: string;
  readonly pluginsDir: string;
  readonly cdiDir: string;
  /** Where the host's filesystem is mounted, for /sys and /dev ('' = own root). */
  readonly hostRoot: string;
  /** GET a ResourceClaim; `undefined` when it does not exist. */
  readonly readClaim: (namespace: string, name: string) => Promise<unknown>;
  /** LIST this node's ResourceSlices (`nodeSlicesPath`): the counters a claim is checked against. */
  readonly readSlices: () => Promise<readonly unknown[]>;
  /**
   * How long the kubelet may go without hearing a device's health before it counts it unknown:
   * a few detection intervals (health is sent after every detection). @default 0 (the kubelet's default)
   */
  readonly healthTimeoutSeconds?: number;
  /**
   * Every this many detections (and at the first after a plugin starts) each plugin's checkpoint
   * is compared with the API and the claims gone from it are unprepared (ClaimPreparer.collectStale),
   * in the background. @default 10
   */
  readonly staleCheckEvery?: number;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  readonly logger?: Logger;
}

const PROBLEM_MESSAGES: Record<CardProblem, string> = {
  missing: 'the card is no longer detected',
  replaced: 'another card (another UUID) is at this index',
  'detection-failed': "the vendor library's detection failed",
};

/** The API path of this node's ResourceSlices (every driver's). */
export function nodeSlicesPath(node: string): string {
  return `${resourcePath('resourceslices')}?${new URLSearchParams({ fieldSelector: `spec.nodeName=${node}` })}`;
}

/** The API path of a ResourceClaim. */
export function resourceClaimPath(namespace: string, name: string): string {
  return resourcePath('resourceclaims', { namespace, name });
}

export class KubeletPlugins {
  private latest: readonly Device[] = [];
  private readonly plugins = new Map<ManufacturerName, RunningPlugin>();
  private readonly preparers = new Map<ManufacturerName, ClaimPreparer>();
  /** Detections since each manufacturer's last stale check. */
  private readonly sinceStaleCheck = new Map<ManufacturerName, number>();
  private collecting: Promise<void> = Promise.resolve();
  private readonly starting = new Map<ManufacturerName, Promise<void>>();
  private readonly failures = new Map<ManufacturerName, string>();
  /** Every card each manufacturer had since the agent started (index → UUID at first sight). */
  private readonly seen = new Map<ManufacturerName, Map<number, string>>();

  constructor(private readonly options: KubeletPluginsOptions) {}

  /** Takes a detection's cards and starts the plugins of manufacturers seen for the first time. */
  async update(result: DetectResult): Promise<void> {
    this.latest = result.devices;
    const present = [...new Set(result.devices.map((d) => d.manufacturer))];
    await Promise.all(present.map((mfr) => this.ensure(mfr)));
    for (const [mfr, plugin] of this.plugins) plugin.setHealth(this.health(mfr, result));
    this.checkStale();
  }

  /** The stale checks under way (tests wait on it; the agent does not, so a slow API never holds a detection). */
  staleChecks(): Promise<void> {
    return this.collecting;
  }

  private checkStale(): void {
    const every = Math.max(1, this.options.staleCheckEvery ?? 10);
    const due = [...this.preparers].filter(([mfr]) => {
      const since = this.sinceStaleCheck.get(mfr);
      this.sinceStaleCheck.set(mfr, since === undefined || since + 1 >= every ? 0 : since + 1);
      return since === undefined || since + 1 >= every;
    });
    if (due.length === 0) return;
    const logger = this.options.logger ?? SILENT_LOGGER;
    // collectStale answers its errors per claim; only a checkpoint it cannot read rejects.
    const run = Promise.all(due.map(([, preparer]) => preparer.collectStale())).then(
      () => undefined,
      (error: Error) => logger.error({ err: error.message }, 'checking the checkpoint for stale claims failed'),
    );
    this.collecting = Promise.all([this.collecting, run]).then(() => undefined);
  }

  /**
   * Both devices of every card the manufacturer had since the start: healthy while detected with
   * the UUID it first had, unhealthy when missing, replaced or when the manufacturer's detection
   * failed (the same judgement as the slices' taints, `cardProblems`).
   */
  private health(mfr: ManufacturerName, result: DetectResult): DeviceHealthWire[] {
    const current: CardIdentity[] = result.devices
      .filter((d) => d.manufacturer === mfr)
      .map((d) => ({ index: d.index, uuid: d.uuid }));
    const seen = this.seen.get(mfr) ?? new Map<number, string>();
    this.seen.set(mfr, seen);
    for (const card of current) if (!seen.has(card.index)) seen.set(card.index, card.uuid);
    const failed = current.length === 0 && result.errors.some((e) => e.manufacturer === mfr);
    const previous = [...seen].map(([index, uuid]) => ({ index, uuid }));
    const problems = cardProblems(previous, current, failed);
    const now = Math.floor((this.options.clock ?? (() => new Date()))().getTime() / 1000);
    return previous
      .sort((a, b) => a.index - b.index)
      .flatMap(({ index }) => {
        const problem = problems.get(index);
        return [wholeDeviceName(index), sharedDeviceName(index)].map((device_name) => ({
          device: { pool_name: this.options.node, device_name },
          health: problem ? ('UNHEALTHY' as const) : ('HEALTHY' as const),
          last_updated_time: now,
          health_check_timeout_seconds: this.options.healthTimeoutSeconds ?? 0,
          message: problem ? PROBLEM_MESSAGES[problem] : '',
        }));
      });
  }

  private ensure(mfr: ManufacturerName): Promise<void> {
    if (this.plugins.has(mfr)) return Promise.resolve();
    const pending = this.starting.get(mfr);
    if (pending) return pending;
    const logger = this.options.logger ?? SILENT_LOGGER;
    const driver = driverName(mfr);
    const paths = pluginPaths(driver, this.options.registryDir, this.options.pluginsDir);
    const preparer = new ClaimPreparer({
      manufacturer: mfr,
      node: this.options.node,
      cdiDir: this.options.cdiDir,
      checkpointFile: paths.checkpointFile,
      readClaim: this.options.readClaim,
      readSlices: this.options.readSlices,
      cards: () => this.latest.filter((d) => d.manufacturer === mfr),
      cardFacts: cardFactsOnHost(this.options.hostRoot),
      nodeExists: deviceNodeExistsOnHost(this.options.hostRoot),
      logger,
    });
    const start = startKubeletPlugin({
      registryDir: this.options.registryDir,
      pluginsDir: this.options.pluginsDir,
      preparer,
      logger,
    }).then(
      (plugin) => {
        this.plugins.set(mfr, plugin);
        this.preparers.set(mfr, preparer);
        this.failures.delete(mfr);
      },
      (error: Error) => {
        // Retried on the next detection.
        this.failures.set(mfr, error.message);
        logger.error({ driver, err: error.message }, 'kubelet plugin did not start');
      },
    );
    const tracked = start.finally(() => this.starting.delete(mfr));
    this.starting.set(mfr, tracked);
    return tracked;
  }

  /** Per driver: its sockets and registration, or why it did not start. */
  status(): (PluginStatus | { driver: string; serving: false; error: string })[] {
    const out: (PluginStatus | { driver: string; serving: false; error: string })[] = [];
    for (const plugin of this.plugins.values()) out.push(plugin.status());
    for (const [mfr, error] of this.failures) out.push({ driver: driverName(mfr), serving: false, error });
    return out.sort((a, b) => a.driver.localeCompare(b.driver));
  }

  /** Every started plugin still serves both sockets. */
  healthy(): boolean {
    return this.status().every((s) => s.serving);
  }

  async close(): Promise<void> {
    await Promise.all([...this.starting.values()]);
    await this.collecting;
    await Promise.all([...this.plugins.values()].map((p) => p.close()));
    this.plugins.clear();
  }
}
