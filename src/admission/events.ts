/**
 * @module The checker's Warning Events (events.k8s.io/v1): an over-committed card
 * (docs/operations.md#faults) is told once to every claim holding it, in the claim's namespace,
 * where its owner looks (`kubectl get events -n <ns>`). Once per card and reason: the pass that
 * first sees the card so (or sees it so for another reason, or another claim) records them; the
 * card back within its counters is forgotten, so a later over-commit is told again.
 */
import type { KubeApi } from '../api-client/index.js';
import { describeOvercommit, overcommittedCards, type DeviceLedger } from '../dra/index.js';
import type { Logger } from '../runtime/index.js';
import { microTime } from './leader-election.js';

/** One Warning to record, about one ResourceClaim. */
export interface ClaimWarning {
  readonly namespace: string;
  readonly claim: string;
  readonly reason: 'CardOvercommitted';
  readonly note: string;
}

/** Where the checker's Warnings go: {@link kubeEventSink} in the process, a fake in tests. */
export interface EventSink {
  warn(warning: ClaimWarning): Promise<void>;
}

/** The API's limit on an Event's note. */
const NOTE_MAX = 1024;

/** The Event: regarding the claim, from the checker (`reportingInstance`: this process's host). */
export function warningEvent(warning: ClaimWarning, instance: string, now: Date): object {
  const note = warning.note.length <= NOTE_MAX ? warning.note : `${warning.note.slice(0, NOTE_MAX - 1)}…`;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    // Named as client-go names its Events (`<object>.<unix nanoseconds, hex>`): the API server
    // refuses a generateName ending in '.' for an Event.
    metadata: {
      name: `${warning.claim}.${(BigInt(now.getTime()) * 1_000_000n).toString(16)}`,
      namespace: warning.namespace,
    },
    eventTime: microTime(now),
    reportingController: 'gpustack.ai/admission-checker',
    reportingInstance: instance,
    action: 'CheckCounters',
    reason: warning.reason,
    type: 'Warning',
    note,
    regarding: {
      apiVersion: 'resource.k8s.io/v1',
      kind: 'ResourceClaim',
      namespace: warning.namespace,
      name: warning.claim,
    },
  };
}

export function kubeEventSink(api: KubeApi, instance: string, clock: () => Date = () => new Date()): EventSink {
  return {
    warn: async (warning) => {
      const path = `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(warning.namespace)}/events`;
      await api.create(path, warningEvent(warning, instance, clock()));
    },
  };
}

/** Tells each over-committed card once (see the module); lives as long as the checker. */
export class OvercommitWarnings {
  /** What was told per card: its sentence (the counters and the claims). */
  private readonly told = new Map<string, string>();

  constructor(
    private readonly sink: EventSink,
    private readonly logger: Logger,
  ) {}

  /** Records the Warnings of this pass's ledger; `mayWrite` false (not leading): nothing is recorded. */
  async pass(ledger: DeviceLedger, mayWrite: boolean): Promise<void> {
    const seen = new Set<string>();
    for (const over of overcommittedCards(ledger)) {
      const key = `${over.driver}\u0000${over.node}\u0000${over.card}`;
      seen.add(key);
      const note = describeOvercommit(over);
      if (this.told.get(key) === note || !mayWrite) continue;
      this.logger.warn({ node: over.node, card: over.card, driver: over.driver, note }, 'card over-committed');
      let failed = false;
      for (const claim of over.claims) {
        try {
          await this.sink.warn({ namespace: claim.namespace, claim: claim.name, reason: 'CardOvercommitted', note });
        } catch (error) {
          failed = true;
          this.logger.warn(
            { claim: `${claim.namespace}/${claim.name}`, err: (error as Error).message },
            'over-commit Warning not recorded; will try again',
          );
        }
      }
      // A Warning that could not be recorded is tried again at the next pass.
      if (!failed) this.told.set(key, note);
    }
    for (const key of [...this.told.keys()]) if (!seen.has(key)) this.told.delete(key);
  }
}
