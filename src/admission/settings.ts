/**
 * @module The settings the checker decides with: those of the SchedulingChain `default`, resolved
 * as the chain resolves them (src/contracts), so a manufacturer's device resource
 * (`spec.manufacturers[].resourceName`) is the one the chain's flavors and queues were built for.
 * No chain → every default (`settingsFromChains`).
 */
import { SCHEDULING_CHAIN_NAME, type KubeObject, type Settings } from '../k8s/index.js';
import { settingsFromChains } from '../contracts/index.js';
import type { Logger } from '../runtime/index.js';

/**
 * Tracks the chain's settings across passes. An invalid spec is never replaced by guessed
 * settings: the last valid ones are kept, or, when none has been seen since the process started,
 * passes are skipped until the spec is corrected.
 */
export class SettingsTracker {
  private lastGood: Settings | undefined;
  /** The invalid-spec message already warned about; cleared once the spec is valid again. */
  private warned: string | undefined;

  constructor(private readonly logger: Logger) {}

  /** The settings to decide with, or `undefined` to skip the pass. `chains` by name, as the informer stores them. */
  resolve(chains: ReadonlyMap<string, KubeObject>): Settings | undefined {
    const resolution = settingsFromChains(chains.values());
    if (resolution.ok) {
      if (this.warned !== undefined)
        this.logger.info({}, 'SchedulingChain settings are valid again; deciding with them');
      this.warned = undefined;
      this.lastGood = resolution.settings;
      return resolution.settings;
    }
    // Why keep the last valid settings rather than skip: the chain itself keeps its last good
    // children on an invalid spec, so the flavors and queues Kueue admits into were built with
    // those settings, and their resource names are the right ones to count. Skipping would leave
    // every Workload Pending; defaults could read 0 cards of a renamed resource and answer Ready.
    // Without last valid settings (the process started on an invalid spec) nothing is decided:
    // Workloads stay Pending and are decided on the first pass after the spec is corrected.
    if (this.warned !== resolution.message) {
      this.warned = resolution.message;
      this.logger.warn(
        {
          schedulingChain: SCHEDULING_CHAIN_NAME,
          err: resolution.message,
          keeping: this.lastGood !== undefined ? 'last valid settings' : 'no verdicts',
        },
        this.lastGood !== undefined
          ? 'SchedulingChain spec is invalid; deciding with its last valid settings until it is corrected'
          : 'SchedulingChain spec is invalid and no valid settings were seen yet; deciding nothing until it is corrected',
      );
    }
    return this.lastGood;
  }
}
