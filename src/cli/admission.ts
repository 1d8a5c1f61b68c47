/**
 * @module The `admission` subcommand (and `serve --admission`), loaded only when one of them
 * runs: the Kubernetes client is not needed to serve hooks or render.
 */
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { createAdmissionMetrics, serveHealth, startChecker } from '../admission/index.js';
import { ADMISSION_FLAGS } from './admission-flags.js';
import { UsageError } from './errors.js';
import { parseLogLevel, parsePort } from './flags.js';
import { requireKubeClient } from './kube-client.js';
import { createProcessLogger } from '../runtime/index.js';
import { isDnsSubdomain } from '../k8s/index.js';
import { createKubeApi, loadKubeConfig } from '../api-client/index.js';

export interface AdmissionSettings {
  readonly kubeconfig?: string | undefined;
  readonly healthPort: string;
  readonly checkName: string;
  readonly logLevel: string;
  /** How the user started it, for the one-line refusal on a Node.js the client does not load on. @default 'admission' */
  readonly command?: string;
}

export interface RunningAdmission {
  stop(): Promise<void>;
}

/** Starts the checker and its health endpoint; `stop` ends both. */
export async function startAdmission(settings: AdmissionSettings): Promise<RunningAdmission> {
  const healthPort = parsePort(settings.healthPort, '--health-port');
  // The check name is also the apply's field manager (at most 128 characters).
  if (!isDnsSubdomain(settings.checkName) || settings.checkName.length > 128) {
    throw new UsageError(`--check-name: "${settings.checkName}" must be a DNS subdomain of at most 128 characters`);
  }
  const level = parseLogLevel(settings.logLevel);
  requireKubeClient(settings.command ?? 'admission');
  // No usable kubeconfig is an error now; an API server that does not answer is retried by the
  // watches (with a backoff) and shown by /healthz.
  const api = createKubeApi(await loadKubeConfig(settings.kubeconfig));
  const logger = createProcessLogger({ level, splitErrors: true });
  const metrics = createAdmissionMetrics({ defaultMetrics: true });
  const checker = startChecker({ api, logger, checkName: settings.checkName, recorder: metrics });
  let health: Server;
  try {
    health = await serveHealth({ report: () => checker.health(), port: healthPort, metrics: metrics.registry });
  } catch (error) {
    await checker.stop();
    throw error;
  }
  logger.info({ checkName: settings.checkName, healthPort }, 'admission checker started');
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
  });
  await untilSignal();
  await running.stop();
}
