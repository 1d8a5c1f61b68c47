// The harness's public surface for the e2e suite, the faults and trust scenarios and bench/: the
// fixture and what a scenario needs most. The other modules (helm, image, node, hook-proxy…) are
// imported by path.
export { startCluster, type Checker, type Cluster, type ClusterOptions } from './cluster.js';
export { useCluster, type ClusterHandle, type UseClusterOptions } from './use-cluster.js';
export { controlPlaneFlags, deviceTaintRuleApi, type DeviceTaintRuleApi } from './versions.js';
export { startProcess, freePorts, type ManagedProcess, type StartOptions } from './processes.js';
export { waitFor, sleep, converge, KubeClient, KubeError, type KubeObject } from './apply.js';
export { CLI, type HookServer, type HookServerOptions } from './hook-server.js';
export { log } from './log.js';
