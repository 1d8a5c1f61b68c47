/**
 * @module The checker's watch of DeviceTaintRules, at the version discovery finds served
 * (`resource.k8s.io/v1` from Kubernetes 1.37, `v1beta2` behind a gate and `--runtime-config` in
 * 1.36). A cluster that serves neither has no rules to count: the watch says so once in the log
 * and counts as listed with none, so the ledger runs on the slices' own taints. Discovery that
 * fails otherwise (no connection) is retried with the informers' backoff.
 */
import {
  DEVICE_TAINT_RULES_NOT_SERVED,
  DEVICE_TAINT_RULES_RESOURCE,
  DEVICE_TAINT_RULE_VERSIONS,
  type ReceivedDeviceTaintRule,
} from '../dra/index.js';
import { servedVersion, type KubeApi } from '../api-client/index.js';
import { retryDelayMs, sleep } from '../runtime/index.js';
import { DEFAULT_BACKOFF, Informer, type InformerOptions, type InformerStatus } from './informer.js';
import { deviceTaintRules } from './resources.js';

const NO_RULES: ReadonlyMap<string, ReceivedDeviceTaintRule> = new Map();

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export class TaintRuleWatch {
  #informer: Informer<ReceivedDeviceTaintRule> | undefined;
  readonly #own: InformerStatus = {
    resource: DEVICE_TAINT_RULES_RESOURCE,
    synced: false,
    streaming: false,
    failures: 0,
    lists: 0,
  };

  constructor(
    private readonly api: KubeApi,
    private readonly options: InformerOptions,
  ) {}

  /** The informer's status once discovery found a version; before, or with none served, its own. */
  get status(): InformerStatus {
    return this.#informer?.status ?? this.#own;
  }

  /** The rules as last listed and watched; none where the cluster serves none. */
  get store(): ReadonlyMap<string, ReceivedDeviceTaintRule> {
    return this.#informer?.store ?? NO_RULES;
  }

  /** Discovers the served version, then lists and watches it until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let version: string | undefined;
      try {
        version = await servedVersion(this.api, DEVICE_TAINT_RULES_RESOURCE, DEVICE_TAINT_RULE_VERSIONS);
      } catch (error) {
        this.#own.failures++;
        this.#own.lastError = (error as Error).message;
        const retryInMs = retryDelayMs(this.#own.failures, this.options.backoff ?? DEFAULT_BACKOFF, error);
        this.options.logger.error(
          { resource: DEVICE_TAINT_RULES_RESOURCE, err: this.#own.lastError, retryInMs },
          'discovery of DeviceTaintRule failed; will try again after a backoff',
        );
        await sleep(retryInMs, signal);
        continue;
      }
      if (version === undefined) {
        this.options.logger.warn(
          { resource: DEVICE_TAINT_RULES_RESOURCE },
          `${DEVICE_TAINT_RULES_NOT_SERVED}; cordons are not seen, the slices' own device taints still count`,
        );
        this.#own.synced = true;
        this.#own.lists++;
        this.options.onChange();
        await aborted(signal);
        return;
      }
      this.options.logger.info({ resource: DEVICE_TAINT_RULES_RESOURCE, version }, 'watching DeviceTaintRules');
      this.#informer = new Informer(this.api, deviceTaintRules(version), this.options);
      await this.#informer.run(signal);
      return;
    }
  }
}
