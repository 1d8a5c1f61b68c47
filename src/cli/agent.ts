/** @module The `agent` and `detect` subcommands, loaded only when one of them runs. */
import { statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MANUFACTURER_NAMES, detectIsolated, type DetectResult, type ManufacturerName } from '../../native/index.js';
import {
  PUBLISH_MODES,
  createAgentState,
  detectionStaleAfterMs,
  featureFilePublisher,
  labelsFromDetection,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  createAgentMetrics,
  failedManufacturers,
  resourceSlicePublisher,
  runAgent,
  sliceCardsOf,
  screenDetection,
  startHealthServer,
  type Publisher,
  type PublishMode,
  type SlicePublisher,
  apiDeviceOwnerSource,
  draOwnedCards,
  type DeviceOwnerSource,
  type DeviceOwnerships,
} from '../agent/index.js';
import { isManufacturer } from '../contracts/index.js';
import { desiredSlices } from '../dra/index.js';
import { AGENT_FLAGS, DETECT_FLAGS } from './agent-flags.js';
import { UsageError } from './errors.js';
import { requireKubeClient } from './kube-client.js';
import { parseDuration, parseLogLevel, parseNamespace, parseObjectName, parsePort } from './flags.js';
import { createProcessLogger, type Logger } from '../runtime/index.js';
import { DEFAULT_SYSTEM_NAMESPACE, canonicalize } from '../k8s/index.js';
import { createKubeApi, loadKubeConfig, type KubeApi } from '../api-client/index.js';
import { KubeletPlugins, resourceClaimPath } from '../kubelet-plugin/index.js';

/** `60s`, `5m`, `1h` or plain seconds. */
function parseManufacturers(text: string | undefined): ManufacturerName[] | undefined {
  if (text === undefined) return undefined;
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(MANUFACTURER_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new UsageError(`--manufacturers: unknown ${unknown.join(', ')}; known: ${MANUFACTURER_NAMES.join(', ')}`);
  return names as ManufacturerName[];
}

/**
 * An existing directory, made absolute; '' stays '' (this process's own root). A missing one is
 * a path that is not there, like a missing input file: one line and exit 1, not a usage error.
 */
function parseHostRoot(text: string): string {
  if (text === '') return '';
  const root = path.resolve(text);
  let why: string;
  try {
    if (statSync(root).isDirectory()) return root;
    why = 'not a directory';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    why = code === 'ENOENT' ? 'no such directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
  }
  throw new Error(`--host-root ${text}: ${why}`);
}

function detectFor(values: { manufacturers?: string | undefined; 'host-root': string }): () => Promise<DetectResult> {
  const manufacturers = parseManufacturers(values.manufacturers);
  const hostRoot = parseHostRoot(values['host-root']);
  // In a child process: a corrupted vendor library that kills it costs that vendor's cards, not the agent.
  return () => detectIsolated({ manufacturers, hostRoot });
}

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
): Promise<{ publisher: SlicePublisher; owners: DeviceOwnerSource } | undefined> {
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
  const owners = apiDeviceOwnerSource(sliceApi, node, (message) => logger.warn({ problem: message }, 'device owners'));
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
  const deviceOwners = slices?.owners;
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
    { detect: detectNow, publisher, slicePublisher, deviceOwners, intervalMs, logger, recorder: metrics },
    stop.signal,
  );
  await plugins?.close();
  await new Promise((resolve) => health.close(resolve));
}

function detectText(result: DetectResult, labels: Record<string, string>): string {
  const rows = result.devices.map((d) => [
    d.manufacturer,
    String(d.index),
    d.product,
    `${d.memoryMiB} MiB`,
    String(d.cores),
    d.computeCapability ?? '',
    d.uuid,
  ]);
  const header = ['MANUFACTURER', 'INDEX', 'PRODUCT', 'MEMORY', 'CORES', 'COMCAP', 'UUID'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const errors = result.errors.map((e) => `  ${e.manufacturer}: ${e.code}: ${e.message}`);
  return [
    result.devices.length > 0 ? [line(header), ...rows.map(line)].join('\n') : 'no accelerators found',
    ...(errors.length > 0 ? ['', 'errors:', ...errors] : []),
    '',
    'labels:',
    ...Object.keys(labels)
      .sort()
      .map((k) => `  ${k}=${labels[k]}`),
    '',
  ].join('\n');
}

/**
 * Who owns each detected manufacturer's cards on the node `$NODE_NAME` (docs/architecture.md#device-owner), read
 * as the agent reads it (the Node, the ChainSettings, the holders when a change is due) through
 * the kubeconfig or the in-cluster account; without one, `error` says why.
 */
async function deviceOwnersOf(
  raw: DetectResult,
  kubeconfig: string | undefined,
): Promise<{ owners?: DeviceOwnerships; report: unknown }> {
  const node = process.env['NODE_NAME'];
  if (node === undefined || node === '')
    return { report: { error: "NODE_NAME is not set: the owners are the node's" } };
  const manufacturers = [...sliceCardsOf(raw).map((c) => c.manufacturer), ...failedManufacturers(raw)];
  try {
    const source = apiDeviceOwnerSource(createKubeApi(await loadKubeConfig(kubeconfig)), node);
    const owners = await source.decide(manufacturers.filter(isManufacturer));
    return { owners, report: Object.fromEntries(owners) };
  } catch (error) {
    return { report: { error: `the node's owners could not be read: ${(error as Error).message}` } };
  }
}

/**
 * What the agent would publish as ResourceSlices, for the node `$NODE_NAME`, without an owner
 * reference (that needs the Node's uid from the API server, which `detect` does not ask) and with
 * pool generation 0; cards the device plugin owns are left out when the owners could be read.
 * Without `$NODE_NAME` the slices cannot be named: `resourceSlices` then says so instead of
 * inventing a node.
 */
function resourceSlicesOf(raw: DetectResult, owners: DeviceOwnerships | undefined): unknown {
  const node = process.env['NODE_NAME'];
  const detected = { cards: sliceCardsOf(raw), keep: failedManufacturers(raw) };
  const { cards, keep } = owners === undefined ? detected : draOwnedCards(detected.cards, detected.keep, owners);
  if (node === undefined || node === '')
    return { error: 'NODE_NAME is not set: the slices are named after the node (pool = node name)' };
  const desired = desiredSlices({ name: node }, cards);
  return {
    node,
    slices: desired.pools.flatMap((pool) => pool.slices),
    ...(desired.problems.length > 0 ? { problems: desired.problems } : {}),
    ...(keep.size > 0 ? { keptFromFailedDetection: [...keep].sort() } : {}),
  };
}

export async function detectCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      output: { type: 'string', short: 'o', default: 'json' },
      kubeconfig: { type: 'string' },
      ...DETECT_FLAGS,
    },
  });
  if (values.output !== 'json' && values.output !== 'text')
    throw new UsageError(`-o: "${values.output}" must be json or text`);
  // The same screening the agent applies, so the printed errors include dropped cards.
  const raw = await detectFor(values)();
  const result = screenDetection(raw);
  const labels = labelsFromDetection(result, undefined);
  if (values.output !== 'json') {
    process.stdout.write(detectText(result, labels));
    return;
  }
  const owners = await deviceOwnersOf(raw, values.kubeconfig);
  const resourceSlices = resourceSlicesOf(raw, owners.owners);
  const out = { ...result, labels, deviceOwners: owners.report, resourceSlices };
  process.stdout.write(`${JSON.stringify(canonicalize(out), null, 2)}\n`);
}
