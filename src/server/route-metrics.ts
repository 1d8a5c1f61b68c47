/** @module One hook route's metrics. */
import type { HookMetrics } from './metrics.js';

/** One route's metrics, label sets bound once: an observation then skips hashing its labels on every call. */
export class RouteMetrics {
  readonly #metrics: HookMetrics | undefined;
  readonly #labels: { readonly controller: string; readonly hook: string };
  readonly #duration: { observe(seconds: number): void } | undefined;
  readonly #requests = new Map<number, { inc(): void }>();
  /** Counts a 429 of the in-flight budget; undefined without metrics. */
  readonly busy: (() => void) | undefined;

  constructor(metrics: HookMetrics | undefined, controller: string, hook: string) {
    this.#metrics = metrics;
    this.#labels = { controller, hook };
    this.#duration = metrics?.duration.labels({ controller, hook });
    this.busy = metrics && (() => metrics.busy.inc({ controller, hook }));
  }

  /** One call answered with `status` after `seconds`. */
  answered(status: number, seconds: number): void {
    this.#duration?.observe(seconds);
    this.#requestCounter(status)?.inc();
  }

  #requestCounter(status: number): { inc(): void } | undefined {
    let counter = this.#requests.get(status);
    if (counter === undefined && this.#metrics) {
      counter = this.#metrics.requests.labels({ ...this.#labels, code: String(status) });
      this.#requests.set(status, counter);
    }
    return counter;
  }
}
