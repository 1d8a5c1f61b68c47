/**
 * @module The `admission` subcommand (and `serve --admission`), loaded only when one of them
 * runs: the Kubernetes client is not needed to serve hooks or render.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createAdmissionMetrics, serveHealth, startChecker } from '../admission/index.js';
import { ADMISSION_FLAGS } from './admission-flags.js';
import { UsageError } from './errors.js';
import { parseLogLevel, parseNamespace, parsePort } from './flags.js';
import { requireKubeClient } from './kube-client.js';
import { createProcessLogger } from '../runtime/index.js';
import { isDnsSubdomain } from '../k8s/index.js';
import { createKubeApi, loadKubeConfig } from '../api-client/index.js';

export interface AdmissionSettings {
  readonly kubeconfig?: string | undefined;
  readonly healthPort: string;
  readonly checkName: string;
  readonly logLevel: string;
  /** `true` or `false` (`--leader-elect`). @default 'true' */
  readonly leaderElect?: string | undefined;
  readonly leaderElectionNamespace?: string | undefined;
  /** How the user started it, for the one-line refusal on a Node.js the client does not load on. @default 'admission' */
  readonly command?: string;
}

export interface RunningAdmission {
  stop(): Promise<void>;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The Lease's namespace: the flag, `$POD_NAMESPACE`, the Pod's own (its service account's), else `default`. */
function leaseNamespace(flag: string | undefined): string {
  if (flag !== undefined) return parseNamespace(flag, '--leader-election-namespace');
  const fromEnv = process.env['POD_NAMESPACE'];
  if (fromEnv) return parseNamespace(fromEnv, '$POD_NAMESPACE');
  try {
    return parseNamespace(readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim(), SERVICE_ACCOUNT_NAMESPACE);
  } catch {
    return 'default';
  }
}

/** The Lease settings, or undefined with `--leader-elect false`. */
function leaderElectionOf(settings: AdmissionSettings) {
  const elect = settings.leaderElect ?? 'true';
  if (elect !== 'true' && elect !== 'false') throw new UsageError(`--leader-elect: "${elect}" must be true or false`);
  if (elect === 'false') return undefined;
  // Unique per process: a restarted Pod (same name) must not take its predecessor's Lease as its own.
  const identity = `${process.env['POD_NAME'] || os.hostname()}_${randomUUID().slice(0, 8)}`;
  return { namespace: leaseNamespace(settings.leaderElectionNamespace), name: settings.checkName, identity };
}

/** Starts the checker and its health endpoint; `stop` ends both. */
export async function startAdmission(settings: AdmissionSettings): Promise<RunningAdmission> {
  const healthPort = parsePort(settings.healthPort, '--health-port');
  // The check name is also the apply's field manager (at most 128 characters).
  if (!isDnsSubdomain(settings.checkName) || settings.checkName.length > 128) {
    throw new UsageError(`--check-name: "${settings.checkName}" must be a DNS subdomain of at most 128 characters`);
  }
  const level = parseLogLevel(settings.logLevel);
  const leaderElection = leaderElectionOf(settings);
  requireKubeClient(settings.command ?? 'admission');
  // No usable kubeconfig is an error now; an API server that does not answer is retried by the
  // watches (with a backoff) and shown by /healthz.
  const api = createKubeApi(await loadKubeConfig(settings.kubeconfig));
  const logger = createProcessLogger({ level, splitErrors: true });
  const metrics = createAdmissionMetrics({ defaultMetrics: true });
  const checker = startChecker({
    api,
    logger,
    checkName: settings.checkName,
    recorder: metrics,
    ...(leaderElection ? { leaderElection } : {}),
  });
  let health: Server;
  try {
    health = await serveHealth({ report: () => checker.health(), port: healthPort, metrics: metrics.registry });
  } catch (error) {
    await checker.stop();
    throw error;
  }
  logger.info(
    { checkName: settings.checkName, healthPort, lease: leaderElection ?? 'none (--leader-elect false)' },
    'admission checker started',
  );
  return {
    async stop() {
      await checker.stop();
      health.closeAllConnections();
      await new Promise((resolve) => health.close(resolve));
      logger.info({}, 'admission checker stopped');
    },
  };
}

function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => resolve(signal));
  });
}

export async function admissionCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { ...ADMISSION_FLAGS, 'log-level': { type: 'string', default: 'info' } },
  });
  const running = await startAdmission({
    kubeconfig: values.kubeconfig,
    healthPort: values['health-port'],
    checkName: values['check-name'],
    logLevel: values['log-level'],
    leaderElect: values['leader-elect'],
    leaderElectionNamespace: values['leader-election-namespace'],
  });
  await untilSignal();
  await running.stop();
}
