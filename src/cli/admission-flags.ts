/**
 * @module The flags `admission` and `serve --admission` share. Apart from admission.ts so that
 * `serve` can parse them without loading the Kubernetes client.
 */
export const ADMISSION_FLAGS = {
  kubeconfig: { type: 'string' },
  'health-port': { type: 'string', default: '8082' },
  /** Also the field manager of the apply; must match the AdmissionCheck the chain emits. */
  'check-name': { type: 'string', default: 'gpustack-node-devices' },
} as const;
