// A real Prometheus (the distribution's package, build-components.sh prometheus) scraping processes
// of the e2e cluster on 127.0.0.1, and its HTTP API: instant queries and the targets' health.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { waitFor } from './apply.js';
import { ensureComponents, type Component } from './components.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';

export interface ScrapeJob {
  job: string;
  /** host:port */
  address: string;
  path: string;
}

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface Prometheus {
  readonly url: string;
  readonly component: Component;
  readonly process: ManagedProcess;
  readonly scrapeIntervalSeconds: number;
  /** An instant query's vector (or scalar as one sample); throws with Prometheus' error. */
  query(expr: string): Promise<Sample[]>;
  /** Waits until every target has been scraped successfully at least once. */
  waitTargetsUp(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The scrape configuration: one job per target, every `scrapeIntervalSeconds`. */
export function scrapeConfig(jobs: readonly ScrapeJob[], scrapeIntervalSeconds: number): string {
  const config = {
    global: { scrape_interval: `${scrapeIntervalSeconds}s`, evaluation_interval: `${scrapeIntervalSeconds}s` },
    scrape_configs: jobs.map((j) => ({
      job_name: j.job,
      metrics_path: j.path,
      static_configs: [{ targets: [j.address] }],
    })),
  };
  // JSON is YAML.
  return JSON.stringify(config, null, 2);
}

export async function startPrometheus(options: {
  logsDir: string;
  jobs: readonly ScrapeJob[];
  scrapeIntervalSeconds?: number;
}): Promise<Prometheus> {
  const { prometheus: component } = ensureComponents(['prometheus']);
  const interval = options.scrapeIntervalSeconds ?? 2;
  const dir = path.join(options.logsDir, 'prometheus');
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  const configFile = path.join(dir, 'prometheus.yml');
  writeFileSync(configFile, scrapeConfig(options.jobs, interval));
  const [port] = (await freePorts(1)) as [number];
  const url = `http://127.0.0.1:${port}`;
  const process = startProcess(
    'prometheus',
    component.binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // A series that stops being exposed is gone from instant queries at the next scrape, not after 5 minutes.
      '--query.lookback-delta=30s',
    ],
    options.logsDir,
  );
  await waitFor(
    async () => {
      if (!process.running()) throw new Error(`prometheus exited; see ${process.logFile}\n${process.tail(20)}`);
      return (await fetch(`${url}/-/ready`)
        .then((r) => r.ok)
        .catch(() => false))
        ? true
        : undefined;
    },
    60_000,
    `prometheus ready on ${url}`,
    250,
  );

  async function api<T>(pathAndQuery: string): Promise<T> {
    const response = await fetch(`${url}${pathAndQuery}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${pathAndQuery}: ${body.error ?? response.status}`);
    return body.data;
  }

  return {
    url,
    component,
    process,
    scrapeIntervalSeconds: interval,
    async query(expr) {
      const data = await api<{ resultType: string; result: unknown }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      if (data.resultType === 'scalar') {
        const [, value] = data.result as [number, string];
        return [{ metric: {}, value: Number(value) }];
      }
      return (data.result as { metric: Record<string, string>; value: [number, string] }[]).map((r) => ({
        metric: r.metric,
        value: Number(r.value[1]),
      }));
    },
    async waitTargetsUp(timeoutMs = 60_000) {
      await waitFor(
        async () => {
          const data = await api<{ activeTargets: { scrapePool: string; health: string; lastError: string }[] }>(
            '/api/v1/targets',
          );
          const down = data.activeTargets.filter((t) => t.health !== 'up');
          return data.activeTargets.length === options.jobs.length && down.length === 0 ? true : undefined;
        },
        timeoutMs,
        `every prometheus target up (${options.jobs.map((j) => `${j.job} ${j.address}${j.path}`).join(', ')})`,
        500,
      );
    },
    stop: () => process.stop(),
  };
}
