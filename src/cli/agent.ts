/** @module The `agent` subcommand (the node agent), loaded only when it runs. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { DetectResult } from '../../native/index.js';
import { detectFor } from './detection.js';
import {
  PUBLISH_MODES,
  createAgentState,
  detectionStaleAfterMs,
  featureFilePublisher,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  createAgentMetrics,
  resourceSlicePublisher,
  runAgent,
  screenDetection,
  startHealthServer,
  type Publisher,
  type PublishMode,
  type SlicePublisher,
  apiOwnerDecider,
  type OwnerDecider,
} from '../agent/index.js';
import { AGENT_FLAGS } from './agent-flags.js';
import { UsageError } from './errors.js';
import { requireKubeClient } from './kube-client.js';
import { parseDuration, parseLogLevel, parseNamespace, parseObjectName, parsePort } from './flags.js';
import { createProcessLogger, type Logger } from '../runtime/index.js';
import { DEFAULT_SYSTEM_NAMESPACE } from '../k8s/index.js';
import { createKubeApi, loadKubeConfig, type KubeApi } from '../api-client/index.js';
import { KubeletPlugins, nodeSlicesPath, resourceClaimPath } from '../kubelet-plugin/index.js';

async function kubeletPlugins(
  values: {
    'kubelet-registry-dir': string;
    'kubelet-plugins-dir': string;
    'cdi-dir': string;
    kubeconfig?: string | undefined;
  },
  node: string,
  intervalMs: number,
  logger: Logger,
  agentApi: KubeApi | undefined,
): Promise<KubeletPlugins> {
  const api = agentApi ?? createKubeApi(await loadKubeConfig(values.kubeconfig));
  return new KubeletPlugins({
    node,
    registryDir: path.resolve(values['kubelet-registry-dir']),
    pluginsDir: path.resolve(values['kubelet-plugins-dir']),
    cdiDir: path.resolve(values['cdi-dir']),
    // Device nodes and sysfs in the agent's own filesystem, not under --host-root (the libraries'
    // mount): the DaemonSet mounts the host's /dev at /dev, and a container's /sys is the host's.
    hostRoot: '',
    readClaim: (namespace, name) => api.get(resourceClaimPath(namespace, name)),
    readSlices: async () => {
      const items: unknown[] = [];
      await api.listEach(nodeSlicesPath(node), (item) => items.push(item));
      return items;
    },
    // Health is sent after every detection; as many missed as /healthz allows make it unknown.
    healthTimeoutSeconds: Math.ceil(detectionStaleAfterMs(intervalMs) / 1000),
    logger,
  });
}

/** Each detection also tells the kubelet plugins which cards the node has (and starts new manufacturers' plugins). */
function servingPlugins(detectNow: () => Promise<DetectResult>, plugins: KubeletPlugins): () => Promise<DetectResult> {
  return async () => {
    const result = await detectNow();
    await plugins.update(screenDetection(result));
    return result;
  };
}

/**
 * ResourceSlices are published whenever the agent knows its node and reaches an API server. Only
 * `--publish feature-file` runs without one; there a missing node name or kubeconfig is reported
 * once and the labels are published alone.
 */
async function sliceApi(
  api: KubeApi | undefined,
  node: string | undefined,
  kubeconfig: string | undefined,
  logger: Logger,
): Promise<{ publisher: SlicePublisher; owners: OwnerDecider } | undefined> {
  if (node === undefined || node === '') {
    logger.warn({}, 'no --node (or $NODE_NAME): ResourceSlices are not published');
    return undefined;
  }
  let sliceApi = api;
  try {
    sliceApi ??= createKubeApi(await loadKubeConfig(kubeconfig));
  } catch (error) {
    logger.warn({ err: (error as Error).message }, 'no API server: ResourceSlices are not published');
    return undefined;
  }
  const owners = apiOwnerDecider(sliceApi, node, (message) => logger.warn({ problem: message }, 'device owners'));
  return { publisher: resourceSlicePublisher(sliceApi, node), owners };
}

/** A name from its flag, else from its variable (checked and named by where it came from); '' = unset. */
function nameFrom(
  flagValue: string | undefined,
  flag: string,
  variable: string,
  parse: (text: string, from: string) => string,
): string | undefined {
  if (flagValue !== undefined) return parse(flagValue, flag);
  const fromEnv = process.env[variable];
  return fromEnv === undefined || fromEnv === '' ? undefined : parse(fromEnv, `$${variable}`);
}

export async function agentCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: AGENT_FLAGS });
  const node = nameFrom(values.node, '--node', 'NODE_NAME', parseObjectName);
  const namespace =
    nameFrom(values.namespace, '--namespace', 'POD_NAMESPACE', parseNamespace) ?? DEFAULT_SYSTEM_NAMESPACE;
  const mode = values.publish as PublishMode;
  if (!PUBLISH_MODES.includes(mode))
    throw new UsageError(`--publish: "${values.publish}" must be one of ${PUBLISH_MODES.join(', ')}`);
  if (mode !== 'feature-file' && !node) throw new UsageError('agent: --node (or $NODE_NAME) is required');
  if (values['kubelet-plugin'] && !node)
    throw new UsageError('agent: --kubelet-plugin needs --node (or $NODE_NAME): the node is the pool of its devices');
  const intervalMs = parseDuration(values.interval, '--interval', { minMs: 1000 });
  const healthPort = parsePort(values['health-port'], '--health-port');
  const logLevel = parseLogLevel(values['log-level']);
  if (mode !== 'feature-file' || values['kubelet-plugin']) requireKubeClient('agent');
  // No usable kubeconfig is an error now, not a loop of failing requests later.
  const api = mode === 'feature-file' ? undefined : createKubeApi(await loadKubeConfig(values.kubeconfig));
  const logger = createProcessLogger({ level: logLevel });
  const plugins = values['kubelet-plugin']
    ? await kubeletPlugins(values, node as string, intervalMs, logger, api)
    : undefined;
  const detectNow = plugins ? servingPlugins(detectFor(values), plugins) : detectFor(values);
  const publisher: Publisher =
    api === undefined
      ? featureFilePublisher(values['features-dir'])
      : mode === 'node-labels'
        ? nodeLabelsPublisher(api, node as string)
        : nodeFeaturePublisher(api, node as string, namespace);
  const slices = await sliceApi(api, node, values.kubeconfig, logger);
  const slicePublisher = slices?.publisher;
  const ownerDecider = slices?.owners;
  const state = createAgentState();
  const metrics = createAgentMetrics({ defaultMetrics: true });
  const health = await startHealthServer(state, {
    intervalMs,
    port: healthPort,
    metrics: metrics.registry,
    ...(plugins ? { extra: () => ({ healthy: plugins.healthy(), fields: { kubeletPlugins: plugins.status() } }) } : {}),
  });
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      logger.info({ signal }, 'stopping');
      stop.abort();
    });
  logger.info(
    { node, mode, intervalMs, healthPort, hostRoot: values['host-root'], resourceSlices: slicePublisher !== undefined },
    'agent started',
  );
  await runAgent(
    state,
    { detect: detectNow, publisher, slicePublisher, ownerDecider, intervalMs, logger, recorder: metrics },
    stop.signal,
  );
  await plugins?.close();
  await new Promise((resolve) => health.close(resolve));
}
