/** @module The `serve` subcommand: the Metacontroller hook server (and, with `--admission`, the checker). */
import { parseArgs } from 'node:util';
import { parseQuantity } from '../k8s/index.js';
import {
  CredentialError,
  DEFAULT_JOIN_PACING_SECONDS,
  PACED_HOOK_TIMEOUT_SECONDS,
  checkCredentialFiles,
  pacingProblem,
  runServer,
  type CredentialFiles,
} from '../server/index.js';
import { ADMISSION_FLAGS } from './admission-flags.js';
import { UsageError } from './errors.js';
import { parseDuration, parseLogLevel, parsePort } from './flags.js';

/**
 * The default port of `serve`: not 8080, where kubectl falls back to when it has no kubeconfig (a
 * hook server there answers kubectl's requests). The manifests and the chart pass their own.
 */
export const DEFAULT_PORT = 8090;

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
    previousTokenFile: file('previous-token-file'),
  };
  try {
    checkCredentialFiles(files);
  } catch (error) {
    if (error instanceof CredentialError) throw new UsageError(error.message);
    throw error;
  }
  return files;
}

/** `serve`: the hook server, and with `--admission` the admission checker beside it. */
export async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: process.env['PORT'] ?? String(DEFAULT_PORT) },
      host: { type: 'string', default: '0.0.0.0' },
      'max-body': { type: 'string', default: '256Mi' },
      'max-inflight-bytes': { type: 'string' },
      'drain-timeout': { type: 'string', default: '20s' },
      'join-pacing': { type: 'string', default: `${DEFAULT_JOIN_PACING_SECONDS}s` },
      'hook-timeout': { type: 'string', default: `${PACED_HOOK_TIMEOUT_SECONDS}s` },
      'log-level': { type: 'string', default: 'info' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'client-ca': { type: 'string' },
      'token-file': { type: 'string' },
      'previous-token-file': { type: 'string' },
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
  const joinPacingMs = parseDuration(values['join-pacing'], '--join-pacing');
  const hookTimeoutMs = parseDuration(values['hook-timeout'], '--hook-timeout');
  const pacing = pacingProblem(joinPacingMs / 1000, hookTimeoutMs / 1000);
  if (pacing !== undefined) throw new UsageError(pacing);
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
        leaderElect: values['leader-elect'],
        leaderElectionNamespace: values['leader-election-namespace'],
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
      joinPacingMs,
      hookTimeoutMs,
      logLevel,
      credentials,
      healthPort,
      credentialsPollMs: parseDuration(values['reload-interval'], '--reload-interval', { minMs: 100 }),
    });
  } finally {
    await admission?.stop();
  }
}
