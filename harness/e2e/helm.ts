// The real helm (built from the Go module proxy, see components.ts) on our chart: a runner with
// its own HELM_*_HOME folders (nothing of the user's helm set-up is read or written), the
// rendered objects parsed, and what the chart's objects differ from manifests/ by (Helm's
// standard labels) taken off for comparisons.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { parseManifests, type KubeObject } from './apply.js';
import { REPO_ROOT, type Component } from './components.js';

export const CHART = path.join(REPO_ROOT, 'charts', 'gpustack-operator');
export const MANIFESTS = path.join(REPO_ROOT, 'manifests');
export const RELEASE = 'gpustack-operator';
export const NAMESPACE = 'gpustack-system';

/** The labels every templated object carries beyond manifests/ (crds/ are not templated). */
export const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
] as const;

export interface TemplateOptions {
  readonly namespace?: string;
  /** `--set key=value` each. */
  readonly set?: Readonly<Record<string, string>>;
  /** `--set-json key=json` each. */
  readonly setJson?: Readonly<Record<string, unknown>>;
  /** Default true: the crds/ folder is part of what the chart installs. */
  readonly includeCrds?: boolean;
}

export class HelmError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly status: number | null,
    readonly stderr: string,
  ) {
    super(`helm ${args.join(' ')} → exit ${status}: ${stderr.trim()}`);
    this.name = 'HelmError';
  }
}

export interface Helm {
  readonly component: Component;
  /** Runs helm; returns stdout, throws HelmError (with helm's stderr) on a non-zero exit. */
  run(args: readonly string[], options?: { kubeconfig?: string; timeoutMs?: number }): string;
  /** The value flags of `options`: `--set`, `--set-json`. */
  valueArgs(options: TemplateOptions): string[];
  /** `helm template` of the chart as release gpustack-operator, parsed. */
  template(options?: TemplateOptions): KubeObject[];
  dispose(): void;
}

export function createHelm(component: Component): Helm {
  const home = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-helm-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    HELM_CACHE_HOME: path.join(home, 'cache'),
    HELM_CONFIG_HOME: path.join(home, 'config'),
    HELM_DATA_HOME: path.join(home, 'data'),
    // No kubeconfig unless a command is given one: template and lint never reach a cluster.
    KUBECONFIG: path.join(home, 'no-kubeconfig'),
  };
  const run = (args: readonly string[], options: { kubeconfig?: string; timeoutMs?: number } = {}): string => {
    const full = options.kubeconfig ? [...args, '--kubeconfig', options.kubeconfig] : [...args];
    const result = spawnSync(component.binary, full, {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 120_000,
      maxBuffer: 1 << 26,
    });
    if (result.error) throw result.error;
    if (result.status !== 0) throw new HelmError(full, result.status, result.stderr);
    return result.stdout;
  };
  const valueArgs = (options: TemplateOptions): string[] => [
    ...Object.entries(options.set ?? {}).flatMap(([key, value]) => ['--set', `${key}=${value}`]),
    ...Object.entries(options.setJson ?? {}).flatMap(([key, value]) => [
      '--set-json',
      `${key}=${JSON.stringify(value)}`,
    ]),
  ];
  return {
    component,
    run,
    valueArgs,
    template: (options = {}) =>
      parseManifests(
        run([
          'template',
          RELEASE,
          CHART,
          '--namespace',
          options.namespace ?? NAMESPACE,
          ...(options.includeCrds === false ? [] : ['--include-crds']),
          ...valueArgs(options),
        ]),
      ),
    dispose: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** `apiVersion kind namespace/name`: one key per object. */
export function objectId(o: {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string | undefined };
}): string {
  return `${o.apiVersion} ${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** Objects keyed by objectId (a duplicate id throws: it would hide an object). */
export function byId<T extends KubeObject>(objects: readonly T[]): Record<string, T> {
  const out: Record<string, T> = {};
  for (const o of objects) {
    const id = objectId(o);
    if (id in out) throw new Error(`two objects ${id}`);
    out[id] = o;
  }
  return out;
}

/** A copy without Helm's standard labels (and without `labels` if nothing else is left). */
export function withoutHelmLabels<T extends KubeObject>(object: T): T {
  const copy = structuredClone(object);
  const labels = copy.metadata.labels;
  if (labels) {
    for (const key of HELM_LABELS) delete labels[key];
    if (Object.keys(labels).length === 0) delete copy.metadata.labels;
  }
  return copy;
}

/** The image of every container and init container of the objects, by object id. */
export function imagesById(objects: readonly KubeObject[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const o of objects) {
    const images = [...JSON.stringify(o).matchAll(/"image":"([^"]*)"/g)].map((m) => m[1] as string);
    if (images.length > 0) out[objectId(o)] = images;
  }
  return out;
}

/** The pod template's first container of a workload. */
export function firstContainer(o: KubeObject): { args: string[]; image: string; imagePullPolicy?: string } {
  const spec = o['spec'] as { template: { spec: { containers: { args: string[]; image: string }[] } } };
  const container = spec.template.spec.containers[0];
  if (!container) throw new Error(`${objectId(o)} has no container`);
  return container;
}

/**
 * The ServiceMonitor and PodMonitor CRDs of prometheus-operator (monitoring.coreos.com/v1), from its
 * module in the Go module cache (downloaded through the module proxy on first use), or the files
 * E2E_SERVICEMONITOR_CRD and E2E_PODMONITOR_CRD.
 */
export function monitorCrds(): { files: string[]; source: string } {
  const given = [process.env.E2E_SERVICEMONITOR_CRD, process.env.E2E_PODMONITOR_CRD];
  if (given[0] && given[1]) return { files: given.map((f) => path.resolve(f as string)), source: given.join(', ') };
  const version = process.env.E2E_PROMETHEUS_OPERATOR_VERSION ?? 'v0.85.0';
  const module = `github.com/prometheus-operator/prometheus-operator@${version}`;
  const result = spawnSync('go', ['mod', 'download', '-json', module], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  if (result.error) throw result.error;
  const info = JSON.parse(result.stdout || '{}') as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${module}: ${info.Error ?? result.stderr}`);
  const files = ['servicemonitors', 'podmonitors'].map((kind) =>
    path.join(info.Dir as string, 'example', 'prometheus-operator-crd', `monitoring.coreos.com_${kind}.yaml`),
  );
  for (const file of files) if (!existsSync(file)) throw new Error(`${module} has no ${file}`);
  return { files, source: module };
}
