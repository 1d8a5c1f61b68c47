/**
 * @module Writing our entry of `Workload.status.admissionChecks`: a server-side apply on the
 * status subresource that names only that entry. The list is a map keyed by `name`, so the apply
 * owns our entry's fields and leaves Kueue's entries and the rest of the status alone (a
 * DecoratorController would replace the whole status and race Kueue's own writes).
 */
import { DEVICES_ANNOTATION } from '../dra/index.js';
import { GPUSTACK_API_VERSION } from '../k8s/index.js';
import type { KubeApi } from '../api-client/index.js';
import { KUEUE_API } from './resources.js';

/** Our entry as written: the verdict plus the transition time the process stamps. */
export interface AdmissionCheckEntry {
  readonly name: string;
  readonly state: 'Ready' | 'Retry';
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly requeueAfterSeconds?: number;
}

export interface WorkloadRef {
  readonly namespace: string;
  readonly name: string;
}

/** The checker's writes; a fake in tests, {@link kubeCheckWriter} in the process. */
export interface CheckWriter {
  write(workload: WorkloadRef, entry: AdmissionCheckEntry): Promise<void>;
  /** The ledger's count of an InstanceType's pool as its `worker.gpustack.ai/devices` annotation; absent: not written. */
  writeDevices?(instanceType: string, text: string): Promise<void>;
}

/** `/apis/worker.gpustack.ai/v1alpha1/instancetypes/<name>?fieldManager=…&force=true`. */
export function instanceTypePath(name: string, fieldManager: string): string {
  return `/apis/${GPUSTACK_API_VERSION}/instancetypes/${encodeURIComponent(name)}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
}

/** The apply body: identity plus our one annotation (Metacontroller owns the status, the user the spec). */
export function devicesAnnotationPatch(name: string, text: string): object {
  return {
    apiVersion: GPUSTACK_API_VERSION,
    kind: 'InstanceType',
    metadata: { name, annotations: { [DEVICES_ANNOTATION]: text } },
  };
}

/** `/apis/kueue.x-k8s.io/v1beta2/namespaces/<ns>/workloads/<name>/status?fieldManager=…&force=true`. */
export function workloadStatusPath(workload: WorkloadRef, fieldManager: string): string {
  const base = `${KUEUE_API}/namespaces/${encodeURIComponent(workload.namespace)}/workloads/${encodeURIComponent(workload.name)}/status`;
  // force: Kueue itself writes our entry (`Pending` on quota reservation); the apply takes it back.
  return `${base}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
}

/** The apply body: identity plus our single entry, nothing else we do not mean to own. */
export function admissionCheckPatch(workload: WorkloadRef, entry: AdmissionCheckEntry): object {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: workload.name, namespace: workload.namespace },
    status: { admissionChecks: [entry] },
  };
}

/**
 * Server-side apply with `fieldManager` (the check name: one manager per check, so two checkers
 * with different names never remove each other's entry). JSON is valid YAML, hence the content type.
 */
export function kubeCheckWriter(api: KubeApi, fieldManager: string): CheckWriter {
  return {
    async write(workload, entry) {
      await api.patch(
        workloadStatusPath(workload, fieldManager),
        admissionCheckPatch(workload, entry),
        'application/apply-patch+yaml',
      );
    },
    async writeDevices(instanceType, text) {
      await api.patch(
        instanceTypePath(instanceType, fieldManager),
        devicesAnnotationPatch(instanceType, text),
        'application/apply-patch+yaml',
      );
    },
  };
}
