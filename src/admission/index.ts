/**
 * @module src/admission: the `gpustack-node-devices` checker process (docs/architecture.md#admission-check) — watches
 * Workloads, ResourceFlavors, Nodes, Pods, the SchedulingChain (its resource names) and the card
 * ledger's ResourceSlices, ResourceClaims and ResourceClaimTemplates, decides with the pure `decideNodeDevices`, and
 * server-side applies only its own entry of `Workload.status.admissionChecks`.
 */
export { DEFAULT_CHECK_NAME, startChecker, type Checker, type CheckerOptions } from './checker.js';
export { OvercommitWarnings, kubeEventSink, warningEvent, type ClaimWarning, type EventSink } from './events.js';
export {
  healthReport,
  isLive,
  serveHealth,
  type HealthReport,
  type ProbeServerOptions,
  type WatchHealth,
} from './health.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  LeaderElector,
  SOLE_WRITER,
  leaseRetryDelayMs,
  microTime,
  nextLeaseStep,
  releasedLease,
  type LeaderElectionOptions,
  type Leadership,
  type LeaseStep,
  type LeaseStepInput,
  type ReceivedLease,
} from './leader-election.js';
export {
  CARD_LABELS,
  CARD_METRICS,
  NO_RECORDING,
  createAdmissionMetrics,
  renderCardMetrics,
  type AdmissionMetrics,
  type AdmissionRecorder,
} from './metrics.js';
export {
  DEFAULT_BACKOFF,
  ESTABLISHED_STREAM_MS,
  Informer,
  type InformerOptions,
  type InformerStatus,
} from './informer.js';
export {
  Reconciler,
  differsFromObserved,
  stampEntry,
  type PassResult,
  type ReconcilerOptions,
  type Snapshot,
} from './reconcile.js';
export {
  INSTANCE_TYPES,
  KUEUE_API,
  NODES,
  PODS,
  RESOURCE_CLAIMS,
  RESOURCE_CLAIM_TEMPLATES,
  RESOURCE_FLAVORS,
  RESOURCE_SLICES,
  SCHEDULING_CHAINS,
  WORKLOADS,
  deviceTaintRules,
  objectKey,
  type WatchedResource,
} from './resources.js';
export type { ReceivedSchedulingChain } from './received-chain.js';
export { SettingsTracker } from './settings.js';
export { TaintRuleWatch } from './taint-rules.js';
export {
  admissionCheckPatch,
  devicesAnnotationPatch,
  instanceTypePath,
  kubeCheckWriter,
  workloadStatusPath,
  type AdmissionCheckEntry,
  type CheckWriter,
  type WorkloadRef,
} from './writer.js';
// `why` (src/cli/why.ts) explains one Workload with the decision's own reading of it.
export { WorkloadSchema, explainWorkload } from '../placement/index.js';
