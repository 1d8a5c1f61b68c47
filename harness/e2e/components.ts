// Locates the upstream binaries the e2e suite runs (built and cached outside the
// repository by scripts/e2e/build-components.sh), building what is missing.
//
// Prebuilt binaries can be used instead of the cache with E2E_<NAME>_BIN (NAME: ETCD,
// KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, KUBECTL, METACONTROLLER, KUEUE, JOBSET, LWS, HELM,
// KUBELET, CONTAINERD, RUNC, PROMETHEUS) and the CRD folders with E2E_<NAME>_CRDS (METACONTROLLER, KUEUE,
// JOBSET, LWS: the webhook manifests are read from webhook/ beside the CRD folder); the
// version of a prebuilt binary is what it reports about itself. E2E_NO_BUILD=1 never builds: a
// component that is not cached is then reported as missing.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BUILD_SCRIPT = path.join(REPO_ROOT, 'scripts', 'e2e', 'build-components.sh');

export const COMPONENT_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'metacontroller',
  'kueue',
  // The workload controllers the workloads scenario runs Kueue's integrations with.
  'jobset',
  'lws',
  'helm',
  'kube-scheduler',
  'kubectl',
  // Only the node-side DRA scenario asks for these (build-components.sh kubelet containerd runc).
  'kubelet',
  'containerd',
  'runc',
  // The dashboard scenario's Prometheus (the distribution's package, unpacked).
  'prometheus',
] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

export interface Component {
  name: ComponentName;
  /** The version built, or the one a prebuilt binary reports; 'prebuilt' when it does not tell. */
  version: string;
  /** Absolute path of the binary. */
  binary: string;
  /** Folder with the component's CRD YAML files (Metacontroller, Kueue, JobSet, LeaderWorkerSet). */
  crds?: string;
  /** Go module (path@version) it was built from; 'prebuilt' for E2E_*_BIN. */
  module: string;
  buildSeconds?: number;
}

export class ComponentError extends Error {
  constructor(readonly failures: Partial<Record<ComponentName, string>>) {
    super(
      `e2e components unavailable:\n${Object.entries(failures)
        .map(([name, error]) => `  ${name}: ${error.split('\n').join('\n    ')}`)
        .join('\n')}`,
    );
    this.name = 'ComponentError';
  }
}

export function envName(name: ComponentName): string {
  return name.toUpperCase().replace(/-/g, '_');
}

function prebuilt(name: ComponentName): Component | undefined {
  const binary = process.env[`E2E_${envName(name)}_BIN`];
  if (!binary) return undefined;
  const crds = process.env[`E2E_${envName(name)}_CRDS`];
  const resolved = path.resolve(binary);
  return {
    name,
    version: reportedVersion(name, resolved) ?? 'prebuilt',
    binary: resolved,
    module: 'prebuilt',
    ...(crds ? { crds: path.resolve(crds) } : {}),
  };
}

/** How a binary reports its own version when not with --version. */
const VERSION_ARGS: Partial<Record<ComponentName, string[]>> = {
  helm: ['version', '--template', '{{.Version}}'],
  kubectl: ['version', '--client'],
};

/**
 * Kueue has no --version (the flag is refused, with a usage text full of version-like defaults): its
 * release build stamps the version into this variable, which the Go build info lists among the
 * -ldflags, or the build info names its module's version (a build as a dependency, like ours).
 */
const KUEUE_BUILD_INFO = { module: 'sigs.k8s.io/kueue', variable: 'sigs.k8s.io/kueue/pkg/version.GitVersion' };
/** JobSet and LeaderWorkerSet likewise: no version flag, the stamp their Makefiles set. */
const BUILD_INFO: Partial<Record<ComponentName, { module: string; variable: string }>> = {
  kueue: KUEUE_BUILD_INFO,
  jobset: { module: 'sigs.k8s.io/jobset', variable: 'sigs.k8s.io/jobset/pkg/version.GitVersion' },
  lws: { module: 'sigs.k8s.io/lws', variable: 'sigs.k8s.io/lws/pkg/version.GitVersion' },
};

const VERSION = /\bv?(\d+\.\d+\.\d+(?:[-+][\w.+-]*)?)/;

/** The version (`v` added) a binary reports about itself, or undefined when it does not say. */
export function reportedVersion(name: ComponentName, binary: string): string | undefined {
  if (!existsSync(binary)) return undefined;
  const buildInfo = BUILD_INFO[name];
  if (buildInfo) return buildInfoVersion(binary, buildInfo);
  const result = spawnSync(binary, VERSION_ARGS[name] ?? ['--version'], { encoding: 'utf8', timeout: 30_000 });
  // Only an answer: a refused flag prints usage text, whose defaults look like versions.
  if (result.status !== 0) return undefined;
  const match = VERSION.exec(`${result.stdout ?? ''}${result.stderr ?? ''}`);
  return match ? `v${match[1]}` : undefined;
}

/** The version in a Go binary's build info (`go version -m`): the stamped variable, else its module's version. */
function buildInfoVersion(binary: string, source: { module: string; variable: string }): string | undefined {
  const result = spawnSync('go', ['version', '-m', binary], { encoding: 'utf8', timeout: 30_000 });
  if (result.status !== 0) return undefined;
  const stamped = new RegExp(`${source.variable.replace(/[./]/g, '\\$&')}=['"]?(v?[^\\s'"]+)`).exec(result.stdout);
  const module = new RegExp(`^\\s+(?:mod|dep)\\s+${source.module.replace(/[./]/g, '\\$&')}\\s+(v\\S+)`, 'm').exec(
    result.stdout,
  );
  const version = VERSION.exec(stamped?.[1] ?? module?.[1] ?? '');
  return version ? `v${version[1]}` : undefined;
}

interface ComponentJson {
  component: ComponentName;
  version: string;
  binary: string;
  crds: string;
  module: string;
  buildSeconds: number | null;
  error: string;
}

/** Runs the build script for the given components and returns what it reported. */
function runBuild(names: readonly ComponentName[]): Map<string, ComponentJson> {
  const env = { ...process.env };
  let stdout: string;
  if (process.env.E2E_NO_BUILD === '1') {
    // Only report what the cache holds.
    const result = spawnSync('bash', [BUILD_SCRIPT, '--json', '--cached-only', ...names], { encoding: 'utf8', env });
    if (result.error) throw result.error;
    stdout = result.stdout;
  } else {
    const result = spawnSync('bash', [BUILD_SCRIPT, '--json', ...names], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 24,
    });
    if (result.error) throw result.error;
    stdout = result.stdout;
  }
  const found = new Map<string, ComponentJson>();
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const info = JSON.parse(line) as ComponentJson;
    found.set(info.component, info);
  }
  return found;
}

/**
 * Returns the requested components, building missing ones (this can take many minutes
 * on a cold cache: progress goes to stderr). Throws a ComponentError naming every
 * component that is unavailable, with the build's own error text (e.g. the module
 * proxy's refusal).
 */
export function ensureComponents<N extends ComponentName>(names: readonly N[]): Record<N, Component> {
  const out = {} as Record<N, Component>;
  const failures: Partial<Record<ComponentName, string>> = {};
  const toBuild: N[] = [];
  for (const name of names) {
    const given = prebuilt(name);
    if (given) {
      if (!existsSync(given.binary)) failures[name] = `E2E_${envName(name)}_BIN=${given.binary} does not exist`;
      else out[name] = given;
    } else {
      toBuild.push(name);
    }
  }
  if (toBuild.length > 0) {
    const found = runBuild(toBuild);
    for (const name of toBuild) {
      const info = found.get(name);
      if (!info) {
        failures[name] = 'build script reported nothing for it';
      } else if (info.error || !info.binary) {
        failures[name] = info.error || 'not built';
      } else {
        out[name] = {
          name,
          version: info.version,
          binary: info.binary,
          module: info.module,
          ...(info.crds ? { crds: info.crds } : {}),
          ...(info.buildSeconds === null ? {} : { buildSeconds: info.buildSeconds }),
        };
      }
    }
  }
  if (Object.keys(failures).length > 0) throw new ComponentError(failures);
  return out;
}

/**
 * The CRD folder of Kueue or Metacontroller and the version it came from, even when
 * the component's binary did not build (the CRDs are copied from the module first).
 */
export function ensureCrds(name: 'kueue' | 'metacontroller'): { dir: string; version: string } {
  const given = process.env[`E2E_${envName(name)}_CRDS`];
  if (given) return { dir: path.resolve(given), version: 'prebuilt' };
  const info = runBuild([name]).get(name);
  if (!info?.crds) throw new ComponentError({ [name]: info?.error || 'no CRDs' });
  return { dir: info.crds, version: info.version };
}

/** The `--help` text of a binary (flags differ between versions). */
export function helpText(binary: string): string {
  const result = spawnSync(binary, ['--help'], { encoding: 'utf8', timeout: 30_000 });
  return `${result.stdout ?? ''}${result.stderr ?? ''}`;
}

/** Whether the binary's --help lists `--flag` (or `-flag` for Go's flag package). */
export function hasFlag(help: string, flag: string): boolean {
  return new RegExp(`(^|\\s)--?${flag.replace(/[-]/g, '\\-')}[\\s=]`, 'm').test(help);
}

/** One line per component, for the run's output. */
export function describeComponents(components: Partial<Record<ComponentName, Component>>): string {
  return Object.values(components)
    .map((c) => `${c!.name} ${c!.version} (${c!.module}) ${c!.binary}`)
    .join('\n');
}

/** Reads a file a component ships (e.g. a CRD) as text. */
export function readComponentFile(component: Component, file: string): string {
  if (!component.crds) throw new Error(`${component.name} has no CRD folder`);
  return readFileSync(path.join(component.crds, file), 'utf8');
}
