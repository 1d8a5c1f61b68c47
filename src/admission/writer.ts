/**
 * @module Writing our entry of `Workload.status.admissionChecks`: a server-side apply on the
 * status subresource that names only that entry. The list is a map keyed by `name`, so the apply
 * owns our entry's fields and leaves Kueue's entries and the rest of the status alone (a
 * DecoratorController would replace the whole status and race Kueue's own writes).
 */
import type { KubeApi } from '../kube/index.js';
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

/** The one write the checker makes; a fake in tests, {@link kubeCheckWriter} in the process. */
export interface CheckWriter {
  write(workload: WorkloadRef, entry: AdmissionCheckEntry): Promise<void>;
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
  };
}
