/**
 * @module src/kubelet-plugin: the node side of DRA in the agent (docs/architecture.md#kubelet-plugin) — the kubelet's plugin
 * registration and DRA gRPC services per manufacturer, claims prepared into CDI specs, checkpointed.
 */
export { KubeletPlugins, nodeSlicesPath, resourceClaimPath, type KubeletPluginsOptions } from './plugins.js';
export { ClaimPreparer, type PreparerOptions } from './preparer.js';
export {
  DEFAULT_PLUGINS_DIR,
  DEFAULT_REGISTRY_DIR,
  pluginPaths,
  startKubeletPlugin,
  type PluginOptions,
  type PluginPaths,
  type PluginStatus,
  type RunningPlugin,
} from './server.js';
export { cardFactsOnHost, deviceNodeExistsOnHost } from './host.js';
export {
  DRA_HEALTH_SERVICE,
  DRA_HEALTH_V1ALPHA1_PROTO,
  DRA_PLUGIN_TYPE,
  DRA_SERVICE,
  DRA_SERVICE_VERSION,
  DRA_V1_PROTO,
  PLUGIN_REGISTRATION_PROTO,
  REGISTRATION_SERVICE,
  draDefinition,
  draHealthDefinition,
  protoRoot,
  registrationDefinition,
  type ClaimRef,
  type DeviceHealthWire,
  type PrepareResultWire,
  type PreparedDeviceWire,
} from './protos.js';
