#!/usr/bin/env node
/**
 * @module `gpustack-operator`: one binary — `serve` (the hook server), `render` (the whole chain
 * offline for a node dump), `agent` (the node agent) and `detect` (one detection, by hand).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { MANUFACTURERS, detect, type DetectResult, type Manufacturer } from '../native/index.js';
import {
  PUBLISH_MODES, createAgentState, createKubeApi, featureFilePublisher, labelsFromDetection, loadKubeConfig,
  nodeFeaturePublisher, nodeLabelsPublisher, runAgent, startHealthServer, type Publisher, type PublishMode,
} from './agent/index.js';
import { DEFAULT_SYSTEM_NAMESPACE, canonicalize, parseQuantity } from './k8s/index.js';
import { InputError, parseChain, parseNodes } from './render-input.js';
import { runServer } from './server/index.js';
import { renderChain } from './sync/index.js';

const USAGE = `Usage: gpustack-operator <command> [options]

Commands:
  serve    Run the Metacontroller hook server
           --port 8080  --host 0.0.0.0  --max-body 256Mi  --log-level info
  render   Print the labels and Kueue objects the chain derives from a node dump
           --nodes FILE (kubectl get nodes -o yaml|json, or an array of Nodes)
           [--chain FILE] [--namespaces default,team-a] [-o yaml|json]
  agent    Detect this node's accelerators every interval and publish the labels on change
           --node NAME (default $NODE_NAME)  --publish nodefeature|feature-file|node-labels
           --interval 60s  --namespace gpustack-system  --features-dir DIR  --health-port 8081
           [--kubeconfig FILE] [--manufacturers nvidia,amd]
  detect   Print what the vendor libraries report and the labels the agent would publish
           [-o json|text] [--manufacturers nvidia,amd]

Vendor library overrides: GPUSTACK_<MFR>_LIBRARY=/path/lib.so (e.g. GPUSTACK_NVIDIA_LIBRARY).
`;

const DEFAULT_FEATURES_DIR = '/etc/kubernetes/node-feature-discovery/features.d';

class UsageError extends Error {
  override readonly name = 'UsageError';
}

function parseByteSize(text: string): number {
  const bytes = parseQuantity(text);
  if (bytes === undefined || bytes <= 0 || !Number.isSafeInteger(Math.floor(bytes))) throw new UsageError(`--max-body: "${text}" is not a size such as 256Mi`);
  return Math.floor(bytes);
}

async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: process.env['PORT'] ?? '8080' },
      host: { type: 'string', default: '0.0.0.0' },
      'max-body': { type: 'string', default: '256Mi' },
      'log-level': { type: 'string', default: 'info' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: "${values.port}" is not a port number`);
  await runServer({ port, host: values.host, maxBodyBytes: parseByteSize(values['max-body']), logLevel: values['log-level'] });
}

function renderCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      nodes: { type: 'string' },
      chain: { type: 'string' },
      namespaces: { type: 'string', default: 'default' },
      output: { type: 'string', short: 'o', default: 'yaml' },
    },
  });
  if (!values.nodes) throw new UsageError('render: --nodes FILE is required');
  if (values.output !== 'yaml' && values.output !== 'json') throw new UsageError(`-o: "${values.output}" must be yaml or json`);
  const nodes = parseNodes(readFileSync(values.nodes, 'utf8'), values.nodes);
  const chain = values.chain ? parseChain(readFileSync(values.chain, 'utf8'), values.chain) : undefined;
  const namespaces = values.namespaces.split(',').map((n) => n.trim()).filter(Boolean);
  const now = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const result = renderChain({ nodes, namespaces, ...(chain ? { chain } : {}) }, { now });
  if (!result.ok) throw new InputError(`${result.error.code}: ${result.error.message}`);
  const output = canonicalize({ nodes: result.nodes, objects: result.objects }, true);
  process.stdout.write(values.output === 'json' ? `${JSON.stringify(output, null, 2)}\n` : stringify(output, { lineWidth: 0 }));
}

/** `60s`, `5m`, `1h` or plain seconds. */
function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match?.[2] ?? 's'] ?? 1000;
  const ms = match ? Number(match[1]) * unit : NaN;
  if (!(ms >= 1000)) throw new UsageError(`${flag}: "${text}" is not a duration of at least 1s (e.g. 60s, 5m)`);
  return ms;
}

function parseManufacturers(text: string | undefined): Manufacturer[] | undefined {
  if (text === undefined) return undefined;
  const names = text.split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !(MANUFACTURERS as readonly string[]).includes(n));
  if (unknown.length > 0) throw new UsageError(`--manufacturers: unknown ${unknown.join(', ')}; known: ${MANUFACTURERS.join(', ')}`);
  return names as Manufacturer[];
}

function detectFor(manufacturers: Manufacturer[] | undefined): () => Promise<DetectResult> {
  return () => detect(manufacturers ? { manufacturers } : undefined);
}

async function agentCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      node: { type: 'string', default: process.env['NODE_NAME'] },
      publish: { type: 'string', default: 'nodefeature' },
      interval: { type: 'string', default: '60s' },
      namespace: { type: 'string', default: process.env['POD_NAMESPACE'] ?? DEFAULT_SYSTEM_NAMESPACE },
      'features-dir': { type: 'string', default: DEFAULT_FEATURES_DIR },
      'health-port': { type: 'string', default: '8081' },
      kubeconfig: { type: 'string' },
      manufacturers: { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
    },
  });
  const mode = values.publish as PublishMode;
  if (!PUBLISH_MODES.includes(mode)) throw new UsageError(`--publish: "${values.publish}" must be one of ${PUBLISH_MODES.join(', ')}`);
  if (mode !== 'feature-file' && !values.node) throw new UsageError('agent: --node (or $NODE_NAME) is required');
  const intervalMs = parseDuration(values.interval, '--interval');
  const healthPort = Number(values['health-port']);
  const logger = pino({ level: values['log-level'], base: undefined });
  const publisher: Publisher = mode === 'feature-file'
    ? featureFilePublisher(values['features-dir'])
    : mode === 'node-labels'
      ? nodeLabelsPublisher(createKubeApi(loadKubeConfig(values.kubeconfig)), values.node as string)
      : nodeFeaturePublisher(createKubeApi(loadKubeConfig(values.kubeconfig)), values.node as string, values.namespace);
  const state = createAgentState();
  const health = await startHealthServer(state, intervalMs, healthPort);
  const stop = new AbortController();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { logger.info({ signal }, 'stopping'); stop.abort(); });
  logger.info({ node: values.node, mode, intervalMs, healthPort }, 'agent started');
  await runAgent(state, { detect: detectFor(parseManufacturers(values.manufacturers)), publisher, intervalMs, logger }, stop.signal);
  await new Promise((resolve) => health.close(resolve));
}

function detectText(result: DetectResult, labels: Record<string, string>): string {
  const rows = result.devices.map((d) => [d.manufacturer, String(d.index), d.product, `${d.memoryMiB} MiB`, String(d.cores), d.computeCapability ?? '', d.uuid]);
  const header = ['MANUFACTURER', 'INDEX', 'PRODUCT', 'MEMORY', 'CORES', 'COMCAP', 'UUID'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  const errors = result.errors.map((e) => `  ${e.manufacturer}: ${e.code}: ${e.message}`);
  return [
    result.devices.length > 0 ? [line(header), ...rows.map(line)].join('\n') : 'no accelerators found',
    ...(errors.length > 0 ? ['', 'errors:', ...errors] : []),
    '', 'labels:', ...Object.keys(labels).sort().map((k) => `  ${k}=${labels[k]}`), '',
  ].join('\n');
}

async function detectCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { output: { type: 'string', short: 'o', default: 'json' }, manufacturers: { type: 'string' } } });
  if (values.output !== 'json' && values.output !== 'text') throw new UsageError(`-o: "${values.output}" must be json or text`);
  const result = await detectFor(parseManufacturers(values.manufacturers))();
  const labels = labelsFromDetection(result, undefined);
  process.stdout.write(values.output === 'json'
    ? `${JSON.stringify(canonicalize({ ...result, labels }), null, 2)}\n`
    : detectText(result, labels));
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve': await serveCommand(rest); return 0;
      case 'render': renderCommand(rest); return 0;
      case 'agent': await agentCommand(rest); return 0;
      case 'detect': await detectCommand(rest); return 0;
      case undefined: case 'help': case '--help': case '-h': process.stdout.write(USAGE); return command === undefined ? 2 : 0;
      default: throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof InputError || (error as NodeJS.ErrnoException).code === 'ENOENT') {
      process.stderr.write(`error: ${(error as Error).message}\n`);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
