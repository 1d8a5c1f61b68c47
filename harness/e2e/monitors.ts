// The scrape targets the chart's prometheus-operator monitors describe, resolved against the chart's
// own workloads: monitor → selector → the workload whose Pod template carries those labels (through
// the Service for a ServiceMonitor) → the container port of the monitor's port name → its number and
// the monitor's path. The e2e Prometheus scrapes our processes at exactly those ports and paths, so a
// monitor whose selector, port name or path no longer matches what the chart ships fails the test.
import type { KubeObject } from './apply.js';

export interface MonitorTarget {
  /** `<kind>/<name>` of the monitor, used as Prometheus' job name. */
  job: string;
  /** The workload (`Deployment/gpustack-admission`, `DaemonSet/gpustack-agent`, …) it scrapes. */
  workload: string;
  /** The container port's name and number in the chart's Pod template. */
  portName: string;
  port: number;
  path: string;
  interval?: string;
  /** The container's args as the chart renders them. */
  args: string[];
}

type Labels = Record<string, string>;
interface ContainerPort {
  name?: string;
  containerPort: number;
}
interface Container {
  name: string;
  args?: string[];
  ports?: ContainerPort[];
}
type Workload = KubeObject & {
  spec: { template: { metadata?: { labels?: Labels }; spec: { containers: Container[] } } };
};
type Service = KubeObject & {
  spec: { selector?: Labels; ports?: { name?: string; port: number; targetPort?: number | string }[] };
};
interface Endpoint {
  port?: string;
  path?: string;
  interval?: string;
}
type Monitor = KubeObject & {
  spec: {
    selector?: { matchLabels?: Labels };
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
};

const WORKLOAD_KINDS = ['Deployment', 'DaemonSet', 'StatefulSet'];
const matches = (selector: Labels, labels: Labels | undefined): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** Every target of every ServiceMonitor and PodMonitor in `objects` (a rendered chart). */
export function monitorTargets(objects: readonly KubeObject[]): MonitorTarget[] {
  const workloads = objects.filter((o): o is Workload => WORKLOAD_KINDS.includes(o.kind));
  const services = objects.filter((o): o is Service => o.kind === 'Service');
  const targets: MonitorTarget[] = [];
  for (const monitor of objects.filter((o): o is Monitor => o.kind === 'ServiceMonitor' || o.kind === 'PodMonitor')) {
    const job = `${monitor.kind}/${monitor.metadata.name}`;
    const selector = monitor.spec.selector?.matchLabels ?? {};
    if (Object.keys(selector).length === 0) throw new Error(`${job}: no selector.matchLabels`);
    if (monitor.kind === 'PodMonitor') {
      const selected = workloads.filter((w) => matches(selector, w.spec.template.metadata?.labels));
      for (const endpoint of monitor.spec.podMetricsEndpoints ?? [])
        for (const workload of selected) targets.push(resolve(job, workload, endpoint.port, endpoint));
      if (selected.length === 0) throw new Error(`${job}: selects no workload of the chart`);
      continue;
    }
    const selectedServices = services.filter((s) => matches(selector, s.metadata.labels));
    if (selectedServices.length === 0) throw new Error(`${job}: selects no Service of the chart`);
    for (const service of selectedServices) {
      const backends = workloads.filter((w) => matches(service.spec.selector ?? {}, w.spec.template.metadata?.labels));
      for (const endpoint of monitor.spec.endpoints ?? []) {
        const servicePort = service.spec.ports?.find((p) => p.name === endpoint.port);
        if (!servicePort)
          throw new Error(`${job}: Service ${service.metadata.name} has no port named ${endpoint.port}`);
        const target = servicePort.targetPort ?? servicePort.port;
        for (const workload of backends) targets.push(resolve(job, workload, target, endpoint));
      }
    }
  }
  return targets;
}

function resolve(
  job: string,
  workload: Workload,
  port: string | number | undefined,
  endpoint: Endpoint,
): MonitorTarget {
  const where = `${workload.kind}/${workload.metadata.name}`;
  for (const container of workload.spec.template.spec.containers) {
    const found = container.ports?.find((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port));
    if (!found) continue;
    return {
      job,
      workload: where,
      portName: found.name ?? String(found.containerPort),
      port: found.containerPort,
      path: endpoint.path ?? '/metrics',
      ...(endpoint.interval ? { interval: endpoint.interval } : {}),
      args: container.args ?? [],
    };
  }
  throw new Error(`${job}: ${where} has no container port ${String(port)}`);
}
