/**
 * @module The flags of `agent` and `detect`. Apart from agent.ts so that the manifest tests can
 * check the DaemonSet's arguments without loading the addon loader or the Kubernetes client.
 */

/** Flags both `agent` and `detect` take. */
export const DETECT_FLAGS = {
  manufacturers: { type: 'string' },
  /** Where the host's filesystem is mounted (the DaemonSet: `/host`); '' = this process's own root. */
  'host-root': { type: 'string', default: '' },
} as const;

/** `node` and `namespace` fall back to $NODE_NAME and $POD_NAMESPACE when the command runs. */
export const AGENT_FLAGS = {
  node: { type: 'string' },
  publish: { type: 'string', default: 'nodefeature' },
  interval: { type: 'string', default: '60s' },
  namespace: { type: 'string' },
  'features-dir': { type: 'string', default: '/etc/kubernetes/node-feature-discovery/features.d' },
  'health-port': { type: 'string', default: '8081' },
  kubeconfig: { type: 'string' },
  'log-level': { type: 'string', default: 'info' },
  /** Serve the kubelet DRA plugin of every manufacturer detected (docs/architecture.md#kubelet-plugin). */
  'kubelet-plugin': { type: 'boolean', default: false },
  /** The kubelet's plugin registry and plugins folders (its defaults) and the CDI spec folder. */
  'kubelet-registry-dir': { type: 'string', default: '/var/lib/kubelet/plugins_registry' },
  'kubelet-plugins-dir': { type: 'string', default: '/var/lib/kubelet/plugins' },
  'cdi-dir': { type: 'string', default: '/var/run/cdi' },
  ...DETECT_FLAGS,
} as const;
