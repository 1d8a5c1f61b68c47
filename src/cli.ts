#!/usr/bin/env node
/**
 * @module `gpustack-operator`: one binary — `serve` (the hook server), `render` (the whole chain
 * offline for a node dump), `agent` (the node agent), `detect` (one detection, by hand) and
 * `admission` (the per-card admission check; also inside `serve --admission`).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { ADMISSION_FLAGS } from './cli-admission-flags.js';
import { UsageError } from './cli-errors.js';
import { canonicalize, parseQuantity, rfc3339Seconds } from './k8s/index.js';
import { InputError, parseChain, parseNodes } from './render-input.js';
import { runServer } from './server/index.js';
import { renderChain } from './render/index.js';

const USAGE = `Usage: gpustack-operator <command> [options]

Commands:
  serve      Run the Metacontroller hook server
             --port 8080  --host 0.0.0.0  --max-body 256Mi  --log-level info
             [--admission] also run the admission checker in this process (flags as below)
  render     Print the labels and Kueue objects the chain derives from a node dump
             --nodes FILE (kubectl get nodes -o yaml|json, or an array of Nodes)
             [--chain FILE] [--namespaces default,team-a] [-o yaml|json]
  agent      Detect this node's accelerators every interval and publish the labels on change
             --node NAME (default $NODE_NAME)  --publish nodefeature|feature-file|node-labels
             --interval 60s  --namespace gpustack-system  --features-dir DIR  --health-port 8081
             [--kubeconfig FILE] [--manufacturers nvidia,amd]
  detect     Print what the vendor libraries report and the labels the agent would publish
             [-o json|text] [--manufacturers nvidia,amd]
  admission  Run the per-card admission check: watch Workloads, ResourceFlavors, Nodes and Pods,
             write our entry of Workload.status.admissionChecks (Ready or Retry)
             [--kubeconfig FILE] (default $KUBECONFIG or in-cluster)  --health-port 8082
             --check-name gpustack-node-devices  --log-level info

Vendor library overrides: GPUSTACK_<MFR>_LIBRARY=/path/lib.so (e.g. GPUSTACK_NVIDIA_LIBRARY).
`;

function parseByteSize(text: string): number {
  const bytes = parseQuantity(text);
  if (bytes === undefined || bytes <= 0 || !Number.isSafeInteger(Math.floor(bytes)))
    throw new UsageError(`--max-body: "${text}" is not a size such as 256Mi`);
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
      admission: { type: 'boolean', default: false },
      ...ADMISSION_FLAGS,
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port: "${values.port}" is not a port number`);
  const maxBodyBytes = parseByteSize(values['max-body']);
  // Loaded on demand, like the agent: a plain `serve` never loads the Kubernetes client.
  const admission = values.admission
    ? await (
        await import('./cli-admission.js')
      ).startAdmission({
        kubeconfig: values.kubeconfig,
        healthPort: values['health-port'],
        checkName: values['check-name'],
        logLevel: values['log-level'],
      })
    : undefined;
  try {
    await runServer({ port, host: values.host, maxBodyBytes, logLevel: values['log-level'] });
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
    },
  });
  if (!values.nodes) throw new UsageError('render: --nodes FILE is required');
  if (values.output !== 'yaml' && values.output !== 'json')
    throw new UsageError(`-o: "${values.output}" must be yaml or json`);
  const nodes = parseNodes(readFileSync(values.nodes, 'utf8'), values.nodes);
  const chain = values.chain ? parseChain(readFileSync(values.chain, 'utf8'), values.chain) : undefined;
  const namespaces = values.namespaces
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const now = rfc3339Seconds(new Date());
  const result = renderChain({ nodes, namespaces, ...(chain ? { chain } : {}) }, { now });
  if (!result.ok) throw new InputError(`${result.error.code}: ${result.error.message}`);
  for (const skip of result.skipped)
    process.stderr.write(`warning: node ${skip.name} left out of a pool: ${skip.reason}: ${skip.message}\n`);
  for (const label of result.unreadable ?? [])
    process.stderr.write(`warning: node ${label.name} has a label we cannot read: ${label.reason}: ${label.message}\n`);
  const output = canonicalize({ nodes: result.nodes, objects: result.objects }, true);
  process.stdout.write(
    values.output === 'json' ? `${JSON.stringify(output, null, 2)}\n` : stringify(output, { lineWidth: 0 }),
  );
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        await serveCommand(rest);
        return 0;
      case 'render':
        renderCommand(rest);
        return 0;
      // Loaded on demand: the Kubernetes client and the addon loader are not needed to serve or render.
      case 'agent':
        await (await import('./cli-agent.js')).agentCommand(rest);
        return 0;
      case 'detect':
        await (await import('./cli-agent.js')).detectCommand(rest);
        return 0;
      case 'admission':
        await (await import('./cli-admission.js')).admissionCommand(rest);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
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
