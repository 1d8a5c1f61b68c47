/**
 * @module src/admission: the `gpustack-node-devices` checker process (DESIGN §4.3) — watches
 * Workloads, ResourceFlavors, Nodes, Pods and the SchedulingChain (its resource names), decides with the pure `decideNodeDevices`, and
 * server-side applies only its own entry of `Workload.status.admissionChecks`.
 */
export { DEFAULT_CHECK_NAME, startChecker, type Checker, type CheckerOptions } from './checker.js';
export {
  healthReport,
  isLive,
  serveHealth,
  type HealthReport,
  type ProbeServerOptions,
  type WatchHealth,
} from './health.js';
export { NO_RECORDING, createAdmissionMetrics, type AdmissionMetrics, type AdmissionRecorder } from './metrics.js';
export { DEFAULT_BACKOFF, Informer, type InformerOptions, type InformerStatus } from './informer.js';
export {
  Reconciler,
  differsFromObserved,
  stampEntry,
  type PassResult,
  type ReconcilerOptions,
  type Snapshot,
} from './reconcile.js';
export {
  KUEUE_API,
  NODES,
  PODS,
  RESOURCE_FLAVORS,
  SCHEDULING_CHAINS,
  WORKLOADS,
  objectKey,
  type WatchedChain,
  type WatchedResource,
} from './resources.js';
export { ChainSettings } from './settings.js';
export {
  admissionCheckPatch,
  kubeCheckWriter,
  workloadStatusPath,
  type AdmissionCheckEntry,
  type CheckWriter,
  type WorkloadRef,
} from './writer.js';
