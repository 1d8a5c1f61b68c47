// The dashboard scenario's scrape targets come from the chart's monitors (harness/e2e/monitors.ts):
// a monitor resolves to the container port its selector and port name point at, or fails loudly.
import { describe, expect, it } from 'vitest';

import type { KubeObject } from '../../harness/e2e/apply.js';
import { monitorTargets } from '../../harness/e2e/monitors.js';
import { scrapeConfig } from '../../harness/e2e/prometheus.js';

const labels = (name: string) => ({ 'app.kubernetes.io/name': name, 'app.kubernetes.io/part-of': 'gpustack-operator' });

function workload(kind: string, name: string, ports: { name: string; containerPort: number }[], args: string[] = []) {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, labels: labels(name) },
    spec: { template: { metadata: { labels: labels(name) }, spec: { containers: [{ name: 'main', args, ports }] } } },
  } as unknown as KubeObject;
}

function podMonitor(name: string, port: string, path = '/metrics') {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: { name },
    spec: { selector: { matchLabels: labels(name) }, podMetricsEndpoints: [{ port, path, interval: '30s' }] },
  } as unknown as KubeObject;
}

const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'hooks', labels: { 'app.kubernetes.io/part-of': 'gpustack-operator', instance: 'r' } },
  spec: { selector: labels('hooks'), ports: [{ name: 'web', port: 80, targetPort: 'http' }] },
} as unknown as KubeObject;
const serviceMonitor = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'ServiceMonitor',
  metadata: { name: 'hooks' },
  spec: {
    selector: { matchLabels: { instance: 'r' } },
    endpoints: [{ port: 'web', path: '/metrics' }],
  },
} as unknown as KubeObject;

describe('monitorTargets', () => {
  const checker = workload('Deployment', 'checker', [{ name: 'health', containerPort: 8082 }], ['admission']);
  const hooks = workload('Deployment', 'hooks', [
    { name: 'https', containerPort: 8443 },
    { name: 'http', containerPort: 8080 },
  ]);

  it('resolves a PodMonitor to the selected workload container port of that name, with its args', () => {
    expect(monitorTargets([checker, podMonitor('checker', 'health')])).toEqual([
      {
        job: 'PodMonitor/checker',
        workload: 'Deployment/checker',
        portName: 'health',
        port: 8082,
        path: '/metrics',
        interval: '30s',
        args: ['admission'],
      },
    ]);
  });

  it('resolves a ServiceMonitor through the Service port to its targetPort on the backing workload', () => {
    expect(monitorTargets([hooks, service, serviceMonitor])).toMatchObject([
      { job: 'ServiceMonitor/hooks', workload: 'Deployment/hooks', portName: 'http', port: 8080 },
    ]);
  });

  it('fails on a port name the workload does not have, a selector that picks nothing, a Service port missing', () => {
    expect(() => monitorTargets([checker, podMonitor('checker', 'metrics')])).toThrow(/no container port metrics/);
    expect(() => monitorTargets([checker, podMonitor('agent', 'health')])).toThrow(/selects no workload/);
    const wrongPort = {
      ...serviceMonitor,
      spec: { ...(serviceMonitor['spec'] as object), endpoints: [{ port: 'x' }] },
    };
    expect(() => monitorTargets([hooks, service, wrongPort as KubeObject])).toThrow(/no port named x/);
  });
});

describe('scrapeConfig', () => {
  it('one job per target, at the given interval and path', () => {
    const config = JSON.parse(scrapeConfig([{ job: 'a', address: '127.0.0.1:1', path: '/m' }], 2)) as {
      global: { scrape_interval: string };
      scrape_configs: { job_name: string; metrics_path: string; static_configs: { targets: string[] }[] }[];
    };
    expect(config.global.scrape_interval).toBe('2s');
    expect(config.scrape_configs).toEqual([
      { job_name: 'a', metrics_path: '/m', static_configs: [{ targets: ['127.0.0.1:1'] }] },
    ]);
  });
});
