#!/usr/bin/env node
/**
 * @module `gpustack-operator`: one binary — `serve` (the hook server), `render` (the whole chain
 * offline for a node dump), `agent` (the node agent), `detect` (one detection, by hand),
 * `admission` (the per-card admission check; also inside `serve --admission`) and `cards` (every
 * card of a cluster). Installed as `kubectl-gpustack` too: `kubectl gpustack cards` runs it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { ADMISSION_FLAGS } from './admission-flags.js';
import { UsageError } from './errors.js';
import { parseDuration, parseLogLevel, parseNamespace, parsePort } from './flags.js';
import { canonicalize, parseQuantity, rfc3339Seconds } from '../k8s/index.js';
import { InputError, parseChain, parseNodes, readInput } from './render-input.js';
import { CredentialError, checkCredentialFiles, runServer, type CredentialFiles } from '../server/index.js';
import { renderChain } from '../render/index.js';

/**
 * The default port of `serve`: not 8080, where kubectl falls back to when it has no kubeconfig (a
 * hook server there answers kubectl's requests). The manifests and the chart pass their own.
 */
export const DEFAULT_PORT = 8090;

/** Each command's options, shown by `<command> --help` and, together, by `--help`. */
const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: `  serve      Run the Metacontroller hook server
             --port ${DEFAULT_PORT} (or $PORT)  --host 0.0.0.0  --log-level info
             --max-body 256Mi  largest request body (413 above): the chain hook of 10,000 Nodes
                               (~23 KB of JSON each) fits
             --max-inflight-bytes SIZE  request bytes read and processed at once (429 + Retry-After
                               above); default (container memory limit - 256Mi) / 6, 2Gi assumed
                               without a limit
             --drain-timeout 20s  on SIGTERM, time for requests in flight before connections close
             [--tls-cert FILE --tls-key FILE] serve the hooks over HTTPS (PEM; read again when
                               they change, so a rotated Secret needs no restart)
             [--token-file FILE] callers must send Authorization: Bearer <its content>
             [--client-ca FILE] callers must present a client certificate this CA signed
                               (either: anyone else gets 401; needs --metrics-port)
             [--metrics-port N] /healthz, /readyz, /metrics there (plain HTTP, no credentials)
                               and only the hooks on --port
             --reload-interval 10s  how often the credential files are read for a change
             [--admission] also run the admission checker in this process (its flags as below)
`,
  render: `  render     Print the labels and Kueue objects the chain derives from a node dump
             --nodes FILE|- (kubectl get nodes -o yaml|json, or an array of Nodes; - reads stdin)
             [--chain FILE|-] (the SchedulingChain named default)  [--namespaces default,team-a]
             [-o yaml|json]  [--objects-only] (the objects alone: a YAML stream, or a JSON List,
             for \`| kubectl apply --dry-run=server -f -\`)
`,
  agent: `  agent      Detect this node's accelerators every interval and publish the labels and
             ResourceSlices on change
             --node NAME (default $NODE_NAME)  --publish nodefeature|feature-file|node-labels
             --interval 60s  --namespace gpustack-system  --features-dir DIR  --health-port 8081
             [--kubeconfig FILE] [--manufacturers nvidia,amd] [--host-root DIR]  --log-level info
`,
  detect: `  detect     Print what the vendor libraries report and the labels the agent would publish
             (-o json also, for the node $NODE_NAME, who owns each manufacturer's cards — its
             device plugin or DRA, read from the API server — and the ResourceSlices)
             [-o json|text] [--manufacturers nvidia,amd] [--host-root DIR] [--kubeconfig FILE]
`,
  'kueue-config': `  kueue-config
             Print the Kueue manager configuration with ours merged in (our feature gates, device
             transformations and DeviceClass mappings set, every other key kept), valid for that
             Kueue version [--kueue-version 0.19] [--merge FILE|-] (a Configuration, the
             kueue-manager-config ConfigMap or the values of Kueue's Helm chart; printed back in the
             same shape) [--nodes FILE|-] (map the model classes gpustack-<aKey> of these nodes too)
             [-o yaml|json]
`,
  admission: `  admission  Run the per-card admission check: watch Workloads, ResourceFlavors, Nodes and Pods,
             write our entry of Workload.status.admissionChecks (Ready or Retry)
             [--kubeconfig FILE] (default $KUBECONFIG or in-cluster)  --health-port 8082
             --check-name gpustack-node-devices  --log-level info
`,
  cards: `  cards      Print every card of the cluster: node, index, model, memory, state (free, whole,
             shared (claims)), memory promised, holders (namespace/pod), cordon and health taints
             [--kubeconfig FILE] (default $KUBECONFIG)  [--node NAME] [--pool INSTANCETYPE]
             [-n|--namespace NS] (cards held by its claims)  [-o wide|json|yaml]
             (also \`kubectl gpustack cards\`; needs list on resourceslices, resourceclaims, nodes,
             instancetypes and devicetaintrules)
             cordon NODE/CARD --reason TEXT  keep new claims off one card through DRA device taints
                               (DeviceTaintRule: resource.k8s.io/v1 from Kubernetes 1.37, v1beta2
                               behind a gate in 1.36; NoSchedule: running pods stay); NODE alone:
                               every card of it; CARD: 3, card-3 or nvidia:card-3
                               [--drain --yes] NoExecute: evicts the pods holding it (listed first;
                               without --yes nothing is done)
             uncordon NODE/CARD | NODE  delete the card's (or node's) cordon rules
`,
};

const USAGE_FOOTER = `
Flags take \`--flag value\` or \`--flag=value\` (and \`-o json\`, \`-o=json\`, \`-ojson\`).
--host-root DIR: the host's filesystem is mounted at DIR (the DaemonSet: /host); vendor libraries
are looked up by full path in their install folders under it.
Vendor library overrides: GPUSTACK_<MFR>_LIBRARY=/path/lib.so (e.g. GPUSTACK_NVIDIA_LIBRARY), a path
in this process's filesystem, not under --host-root.
Logs: one JSON object per line; readable lines instead when stderr is a terminal.
`;

const USAGE = `Usage: gpustack-operator <command> [options]
       gpustack-operator <command> --help | --version

Commands:
${Object.values(COMMAND_HELP).join('')}${USAGE_FOOTER}`;

function commandUsage(command: string): string {
  return `Usage: gpustack-operator ${command} [options]\n\n${COMMAND_HELP[command] ?? ''}${USAGE_FOOTER}`;
}

function parseByteSize(text: string, flag: string): number {
  const bytes = parseQuantity(text);
  if (bytes === undefined || bytes < 1 || !Number.isSafeInteger(Math.floor(bytes)))
    throw new UsageError(`${flag}: "${text}" is not a size such as 256Mi`);
  return Math.floor(bytes);
}

/** The credential files of `serve`, checked to go together (a key needs its certificate). */
function serveCredentials(values: Record<string, string | boolean | undefined>): CredentialFiles {
  const file = (flag: string): string | undefined => {
    const value = values[flag];
    if (value === '') throw new UsageError(`--${flag}: empty; name a file`);
    return typeof value === 'string' ? value : undefined;
  };
  const files: CredentialFiles = {
    certFile: file('tls-cert'),
    keyFile: file('tls-key'),
    clientCaFile: file('client-ca'),
    tokenFile: file('token-file'),
  };
  try {
    checkCredentialFiles(files);
  } catch (error) {
    if (error instanceof CredentialError) throw new UsageError(error.message);
    throw error;
  }
  return files;
}

async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: process.env['PORT'] ?? String(DEFAULT_PORT) },
      host: { type: 'string', default: '0.0.0.0' },
      'max-body': { type: 'string', default: '256Mi' },
      'max-inflight-bytes': { type: 'string' },
      'drain-timeout': { type: 'string', default: '20s' },
      'log-level': { type: 'string', default: 'info' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'client-ca': { type: 'string' },
      'token-file': { type: 'string' },
      'metrics-port': { type: 'string' },
      'reload-interval': { type: 'string', default: '10s' },
      admission: { type: 'boolean', default: false },
      ...ADMISSION_FLAGS,
    },
  });
  const port = parsePort(values.port, '--port');
  const maxBodyBytes = parseByteSize(values['max-body'], '--max-body');
  const inflight = values['max-inflight-bytes'];
  const maxInflightBytes = inflight === undefined ? undefined : parseByteSize(inflight, '--max-inflight-bytes');
  const drainTimeoutMs = parseDuration(values['drain-timeout'], '--drain-timeout');
  const logLevel = parseLogLevel(values['log-level']);
  const credentials = serveCredentials(values);
  const metricsPort = values['metrics-port'];
  const healthPort = metricsPort === undefined ? undefined : parsePort(metricsPort, '--metrics-port');
  if ((credentials.tokenFile ?? credentials.clientCaFile) !== undefined && healthPort === undefined)
    throw new UsageError(
      '--token-file and --client-ca need --metrics-port: probes and Prometheus reach /healthz and /metrics there without credentials',
    );
  // Loaded on demand, like the agent: a plain `serve` never loads the Kubernetes client.
  const admission = values.admission
    ? await (
        await import('./admission.js')
      ).startAdmission({
        kubeconfig: values.kubeconfig,
        healthPort: values['health-port'],
        checkName: values['check-name'],
        logLevel,
        command: 'serve --admission',
      })
    : undefined;
  try {
    await runServer({
      port,
      host: values.host,
      maxBodyBytes,
      maxInflightBytes,
      drainTimeoutMs,
      logLevel,
      credentials,
      healthPort,
      credentialsPollMs: parseDuration(values['reload-interval'], '--reload-interval', { minMs: 100 }),
    });
  } finally {
    await admission?.stop();
  }
}

function renderCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      nodes: { type: 'string' },
      chain: { type: 'string' },
      namespaces: { type: 'string', default: 'default' },
      output: { type: 'string', short: 'o', default: 'yaml' },
      'objects-only': { type: 'boolean', default: false },
    },
  });
  if (!values.nodes) throw new UsageError('render: --nodes FILE is required (- reads stdin)');
  if (values.output !== 'yaml' && values.output !== 'json')
    throw new UsageError(`-o: "${values.output}" must be yaml or json`);
  if (values.nodes === '-' && values.chain === '-')
    throw new UsageError('render: --nodes and --chain cannot both read stdin');
  const namespaces = values.namespaces
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)
    .map((n) => parseNamespace(n, '--namespaces'));
  const nodes = parseNodes(readInput(values.nodes, '--nodes'), values.nodes === '-' ? 'stdin' : values.nodes);
  const chain =
    values.chain === undefined
      ? undefined
      : parseChain(readInput(values.chain, '--chain'), values.chain === '-' ? 'stdin' : values.chain);
  const now = rfc3339Seconds(new Date());
  const result = renderChain({ nodes, namespaces, chain }, { now });
  if (!result.ok) throw new InputError(`${result.error.code}: ${result.error.message}`);
  for (const skip of result.skipped)
    process.stderr.write(`warning: node ${skip.name} left out of a pool: ${skip.reason}: ${skip.message}\n`);
  for (const label of result.unreadable ?? [])
    process.stderr.write(`warning: node ${label.name} has a label we cannot read: ${label.reason}: ${label.message}\n`);
  process.stdout.write(
    values['objects-only']
      ? formatObjects(
          result.objects.map((object) => canonicalize(object)),
          values.output,
        )
      : formatDocument(
          canonicalize({ nodes: result.nodes, objects: result.objects }, { keepNull: true }),
          values.output,
        ),
  );
}

function formatDocument(document: unknown, output: 'yaml' | 'json'): string {
  return output === 'json' ? `${JSON.stringify(document, null, 2)}\n` : stringify(document, { lineWidth: 0 });
}

/** The objects alone, as `kubectl apply -f -` takes them: a YAML stream, or a JSON `List`. */
function formatObjects(objects: readonly unknown[], output: 'yaml' | 'json'): string {
  if (output === 'json') return formatDocument({ apiVersion: 'v1', kind: 'List', items: objects }, 'json');
  return objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join('');
}

/** `gpustack-operator <version>` from the package.json above this file (in the repository and the image). */
function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpustack-operator' && pkg.version) return pkg.version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

/** `-o=json` → `-o json`: parseArgs reads `=json` as the value of a short flag. */
function normalizeShortFlags(args: readonly string[]): string[] {
  return args.flatMap((arg) => {
    const match = /^-([A-Za-z])=(.*)$/.exec(arg);
    return match ? [`-${match[1]}`, match[2] as string] : [arg];
  });
}

/** A command's exit code, where it has one of its own (an unconfirmed `cards cordon --drain`: 1); else 0. */
type Command = (args: string[]) => Promise<number | void> | number | void;

// Loaded on demand: the Kubernetes client and the addon loader are not needed to serve or render.
const COMMANDS: Readonly<Record<string, Command>> = {
  serve: serveCommand,
  render: renderCommand,
  agent: async (args) => (await import('./agent.js')).agentCommand(args),
  detect: async (args) => (await import('./agent.js')).detectCommand(args),
  admission: async (args) => (await import('./admission.js')).admissionCommand(args),
  cards: async (args) => {
    const [verb, ...rest] = args;
    if (verb === 'cordon' || verb === 'uncordon') return (await import('./cordon.js')).cordonCommand(verb, rest);
    return (await import('./cards.js')).cardsCommand(args);
  },
  'kueue-config': async (args) => (await import('./kueue-config.js')).kueueConfigCommand(args),
};

/** One line for an error a person can act on; the stack of anything else only with GPUSTACK_DEBUG. */
function describeFailure(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (code === 'EADDRINUSE') {
    const { address, port } = error as { address?: string; port?: number };
    return `cannot listen on ${address ?? ''}:${port ?? ''}: the port is in use (choose another with --port)`;
  }
  if (code === 'EACCES' && (error as { syscall?: string }).syscall === 'listen')
    return `cannot listen: ${message} (ports below 1024 need privileges)`;
  return message;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...raw] = argv;
  const rest = normalizeShortFlags(raw);
  if (command === '--version' || command === 'version' || command === '-v') {
    process.stdout.write(`gpustack-operator ${packageVersion()}\n`);
    return 0;
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`error: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(commandUsage(command));
    return 0;
  }
  try {
    const code = await run(rest);
    return typeof code === 'number' ? code : 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`error: ${(error as Error).message}\n\n${commandUsage(command)}`);
      return 2;
    }
    process.stderr.write(`error: ${describeFailure(error)}\n`);
    if (process.env['GPUSTACK_DEBUG'] && error instanceof Error && error.stack)
      process.stderr.write(`${error.stack}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
