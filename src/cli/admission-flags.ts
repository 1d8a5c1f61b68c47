/**
 * @module The flags `admission` and `serve --admission` share. Apart from admission.ts so that
 * `serve` can parse them without loading the Kubernetes client.
 */
export const ADMISSION_FLAGS = {
  kubeconfig: { type: 'string' },
  'health-port': { type: 'string', default: '8082' },
  /** Also the field manager of the apply; must match the AdmissionCheck the chain emits. */
  'check-name': { type: 'string', default: 'gpustack-node-devices' },
  /** `false`: decide without a Lease (one checker only, or a test). */
  'leader-elect': { type: 'string', default: 'true' },
  /** Where the Lease (named after the check) lives. @default $POD_NAMESPACE, the Pod's own namespace, else `default` */
  'leader-election-namespace': { type: 'string' },
} as const;
