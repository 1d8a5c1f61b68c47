// A real node on loopback for the node-side DRA scenario: containerd (+ runc) and a kubelet built
// from k8s.io/kubernetes (scripts/e2e/build-components.sh kubelet containerd runc), joined to the e2e
// control plane. No registry is reachable, so the pause image is built here from the kubernetes
// module's own build/pause/linux/pause.c (gcc -static) and imported into containerd.
//
// containerd is built from github.com/containerd/containerd/v2 (E2E_CONTAINERD_BIN overrides;
// its runc shim and ctr are taken from the same folder): Debian 12's containerd 1.6 cannot inject
// CDI devices. runc is built from github.com/opencontainers/runc too (E2E_RUNC_BIN: another one, e.g.
// a wrapper adding --debug) and given to the runc shim as its BinaryName, never looked up on PATH.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { waitFor } from './apply.js';
import { ensureComponents, type Component } from './components.js';
import { assertRunning, freePorts, startProcess, type ManagedProcess } from './processes.js';

export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** Where `go` keeps k8s.io/kubernetes@<version> (downloaded by the kubelet build). */
function kubernetesModuleDir(version: string): string {
  const out = spawnSync('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod' },
    cwd: '/',
  });
  const dir = /"Dir":\s*"([^"]+)"/.exec(out.stdout ?? '')?.[1];
  if (!dir) throw new Error(`cannot locate k8s.io/kubernetes@${version}: ${out.stderr}`);
  return dir;
}

/** An OCI image layout tar holding one static `/pause` binary, named PAUSE_IMAGE. */
export function buildPauseImage(dir: string, kubernetesVersion: string): string {
  const work = path.join(dir, 'pause-image');
  const rootfs = path.join(work, 'rootfs');
  const layout = path.join(work, 'layout');
  const blobs = path.join(layout, 'blobs', 'sha256');
  mkdirSync(rootfs, { recursive: true });
  mkdirSync(blobs, { recursive: true });
  const source = path.join(kubernetesModuleDir(kubernetesVersion), 'build', 'pause', 'linux', 'pause.c');
  execFileSync('gcc', [
    '-Os',
    '-static',
    `-DVERSION=${kubernetesVersion}-e2e`,
    '-o',
    path.join(rootfs, 'pause'),
    source,
  ]);
  const layer = path.join(work, 'layer.tar');
  execFileSync('tar', ['--owner=0', '--group=0', '--numeric-owner', '-C', rootfs, '-cf', layer, 'pause']);
  const layerDigest = sha256(layer);
  copyFileSync(layer, path.join(blobs, layerDigest));
  const blob = (object: unknown): { digest: string; size: number } => {
    const text = JSON.stringify(object);
    const digest = createHash('sha256').update(text).digest('hex');
    writeFileSync(path.join(blobs, digest), text);
    return { digest: `sha256:${digest}`, size: Buffer.byteLength(text) };
  };
  const config = blob({
    architecture: 'amd64',
    os: 'linux',
    config: { Entrypoint: ['/pause'], User: '65535:65535' },
    rootfs: { type: 'layers', diff_ids: [`sha256:${layerDigest}`] },
  });
  const manifest = blob({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
    layers: [
      {
        mediaType: 'application/vnd.oci.image.layer.v1.tar',
        digest: `sha256:${layerDigest}`,
        size: readFileSync(layer).length,
      },
    ],
  });
  writeFileSync(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  writeFileSync(
    path.join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'io.containerd.image.name': PAUSE_IMAGE, 'org.opencontainers.image.ref.name': '3.10' },
        },
      ],
    }),
  );
  const image = path.join(work, 'pause.tar');
  execFileSync('tar', ['-C', layout, '-cf', image, 'oci-layout', 'index.json', 'blobs']);
  return image;
}

// The build machines refuse a lower oom_score_adj than the caller's ("failed to update
// /proc/self/oom_score_adj: Permission denied" from runc for the sandbox's -998): containerd then
// keeps every container at or above its own.
const RESTRICT_OOM = 'restrict_oom_score_adj = true';

export interface Containerd {
  process: ManagedProcess;
  socket: string;
  version: string;
  /** `ctr` against this containerd, in the k8s.io namespace. */
  ctr(args: readonly string[]): string;
  /** Kills and deletes every task left (a Pod the kubelet had no time to tear down), so no shim outlives the test. */
  killTasks(): void;
}

/** Unmounts everything mounted under `dir` (deepest first): sandbox shm and rootfs mounts, the kubelet's bind mount. */
export function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((target) => target === dir || target.startsWith(`${dir}/`))
    .sort()
    .reverse();
  for (const target of mounts) spawnSync('umount', [target]);
}

/** Pod networking for containerd: a CNI config folder and the plugins' folder (Debian's containernetworking-plugins). */
export interface CniOptions {
  confDir: string;
  binDir: string;
}

export interface NodeProcessOptions {
  /** A process whose mount namespace containerd and the kubelet run in (the node's "host", see image.ts). */
  mountNamespaceOf?: number;
  /** Without it Pods need hostNetwork (containerd reports no network). */
  cni?: CniOptions;
  /**
   * Default "native" (a full copy per container: fine for the pause image). "overlayfs" for large
   * images: the native copy of a 360 MB image per container outlasts the kubelet's CreateContainer
   * timeout on two busy cores.
   */
  snapshotter?: 'native' | 'overlayfs';
}

/** `binary args`, or the same run by nsenter in the mount namespace of `pid`. */
function inNamespace(binary: string, args: readonly string[], pid: number | undefined): [string, string[]] {
  if (pid === undefined) return [binary, [...args]];
  return ['nsenter', [`--target=${pid}`, '--mount', '--', binary, ...args]];
}

export async function startContainerd(
  dir: string,
  logsDir: string,
  cdiDir: string,
  options: NodeProcessOptions = {},
): Promise<Containerd> {
  const { containerd: component, runc } = ensureComponents(['containerd', 'runc'] as const);
  const binary = component.binary;
  const bin = path.dirname(binary);
  const ctrBinary = path.join(bin, 'ctr');
  const version = component.version;
  const root = path.join(dir, 'containerd');
  const socket = path.join(root, 'containerd.sock');
  mkdirSync(root, { recursive: true });
  // containerd 2.x (config version 3) reads CDI specs always; cdi_spec_dirs says where.
  const config = [
    'version = 3',
    `root = "${root}/root"`,
    `state = "${root}/state"`,
    `[grpc]\n  address = "${socket}"`,
    `[plugins.'io.containerd.cri.v1.images']\n  snapshotter = "${options.snapshotter ?? 'native'}"`,
    `[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = "${PAUSE_IMAGE}"`,
    `[plugins.'io.containerd.cri.v1.runtime']\n  cdi_spec_dirs = ["${cdiDir}"]\n  ${RESTRICT_OOM}`,
    `[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"`,
    ...(options.cni
      ? [
          `[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ["${options.cni.binDir}"]\n  conf_dir = "${options.cni.confDir}"`,
        ]
      : []),
    `[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]\n  BinaryName = "${runc.binary}"`,
  ];
  const configFile = path.join(root, 'config.toml');
  writeFileSync(configFile, `${config.join('\n')}\n`);
  // The runc shim is looked up on PATH.
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
  const proc = startProcess(
    'containerd',
    ...inNamespace(binary, ['--config', configFile, '--log-level', 'info'], options.mountNamespaceOf),
    logsDir,
    { env },
  );
  await waitFor(
    async () => {
      assertRunning(proc);
      return existsSync(socket);
    },
    60_000,
    `containerd did not open ${socket}; see ${proc.logFile}`,
  );
  const ctr = (args: readonly string[]) =>
    execFileSync(ctrBinary, ['--address', socket, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', env });
  const killTasks = () => {
    let tasks: string[];
    try {
      tasks = ctr(['tasks', 'list', '-q']).split('\n').filter(Boolean);
    } catch {
      return;
    }
    for (const id of tasks) {
      spawnSync(
        ctrBinary,
        ['--address', socket, '--namespace', 'k8s.io', 'tasks', 'kill', '--all', '--signal', 'SIGKILL', id],
        { env },
      );
      spawnSync(ctrBinary, ['--address', socket, '--namespace', 'k8s.io', 'tasks', 'delete', '--force', id], { env });
    }
  };
  return { process: proc, socket, version, ctr, killTasks };
}

export interface Kubelet {
  process: ManagedProcess;
  component: Component;
  rootDir: string;
  /** `<root dir>/plugins_registry`, `<root dir>/plugins`. */
  registryDir: string;
  pluginsDir: string;
}

export async function startKubelet(options: {
  dir: string;
  logsDir: string;
  kubeconfig: string;
  nodeName: string;
  containerdSocket: string;
  mountNamespaceOf?: number;
}): Promise<Kubelet> {
  const component = ensureComponents(['kubelet'] as const).kubelet;
  const rootDir = path.join(options.dir, 'kubelet');
  mkdirSync(rootDir, { recursive: true });
  const [port] = (await freePorts(1)) as [number];
  const config = path.join(rootDir, 'config.yaml');
  writeFileSync(
    config,
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      `port: ${port}`,
      'readOnlyPort: 0',
      'healthzPort: 0',
      'address: 127.0.0.1',
      'failSwapOn: false',
      // The build machines mount cgroup v1; 1.35+ refuses it unless told otherwise.
      'failCgroupV1: false',
      'cgroupDriver: cgroupfs',
      'cgroupsPerQOS: false',
      'enforceNodeAllocatable: []',
      'authentication: { anonymous: { enabled: true }, webhook: { enabled: false } }',
      'authorization: { mode: AlwaysAllow }',
      'evictionHard: { memory.available: "1Ki", nodefs.available: "1%", imagefs.available: "1%" }',
      'imageGCHighThresholdPercent: 100',
      'imageGCLowThresholdPercent: 99',
      'resolvConf: ""',
      'registerNode: true',
      'syncFrequency: 5s',
      'fileCheckFrequency: 5s',
      '',
    ].join('\n'),
  );
  const proc = startProcess(
    'kubelet',
    ...inNamespace(
      component.binary,
      [
        `--config=${config}`,
        `--kubeconfig=${options.kubeconfig}`,
        `--root-dir=${rootDir}`,
        `--hostname-override=${options.nodeName}`,
        `--container-runtime-endpoint=unix://${options.containerdSocket}`,
        '--v=4',
      ],
      options.mountNamespaceOf,
    ),
    options.logsDir,
  );
  return {
    process: proc,
    component,
    rootDir,
    registryDir: path.join(rootDir, 'plugins_registry'),
    pluginsDir: path.join(rootDir, 'plugins'),
  };
}
