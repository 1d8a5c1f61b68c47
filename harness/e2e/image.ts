// The image as shipped, on the real kubelet (test/e2e/image.e2e.test.ts): the image built from the
// Dockerfile by scripts/e2e/build-image.sh, a node "host" whose driver folders hold the fake vendor
// library, Pod networking from Debian's CNI plugins, and the two hops kube-proxy would give a real
// cluster (no kube-proxy or cluster DNS is built here).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { waitFor } from './apply.js';
import { REPO_ROOT } from './components.js';
import { assertRunning, startProcess, type ManagedProcess } from './processes.js';

export const IMAGE_SCRIPT = path.join(REPO_ROOT, 'scripts', 'e2e', 'build-image.sh');
/** Debian's containernetworking-plugins (build-image.sh installs it with buildah). */
export const CNI_BIN_DIR = '/usr/lib/cni';

/** What build-image.sh records about the image it built (image.json). */
export interface ImageRecord {
  /** docker.io/library/gpustack-operator:<chart appVersion>: what the chart runs by default. */
  ref: string;
  /** sha256:… of the image manifest, as containerd lists it. */
  digest: string;
  /** sha256:… of the image config: the Pods' imageID (an image from no registry has no repo digest). */
  id: string;
  /** OCI archive to import. */
  archive: string;
  /** Uncompressed, as buildah reports it ("321 MB"). */
  size: string;
  /** The OCI archive: gzip'd layers. */
  archiveBytes: number;
  layers: number;
  baseLayers: number;
  buildSeconds: number;
  baseSeconds: number;
  node: string;
}

/** Builds the image (or finds it cached); the script's progress goes to stderr. */
export function ensureImage(): ImageRecord {
  const run = spawnSync('bash', [IMAGE_SCRIPT, '--json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 3_000_000,
  });
  if (run.status !== 0) throw new Error(`${IMAGE_SCRIPT} failed (exit ${run.status}); its output is above`);
  return JSON.parse(run.stdout) as ImageRecord;
}

export interface HostNamespace {
  /** The process holding the mount namespace: nsenter --target=<pid> --mount. */
  pid: number;
  process: ManagedProcess;
}

/**
 * A mount namespace whose /usr/local also shows `overlay` (a folder laid out like /usr/local): the
 * node's "host" for containerd and the kubelet, so that hostPath volumes (the agent's /host/usr/local)
 * find the fake driver where a real one would be, while this shared machine's /usr/local stays as it
 * is. Everything else is the machine's own; the mounts go when the holder does.
 */
export async function startHostNamespace(logsDir: string, overlay: string): Promise<HostNamespace> {
  const holder = startProcess(
    'host-namespace',
    'unshare',
    ['--mount', '--propagation', 'private', '--', 'sleep', 'infinity'],
    logsDir,
  );
  const own = readlinkSync('/proc/self/ns/mnt');
  await waitFor(
    async () => {
      assertRunning(holder);
      try {
        return readlinkSync(`/proc/${holder.pid}/ns/mnt`) !== own;
      } catch {
        return false;
      }
    },
    10_000,
    `unshare --mount did not start; see ${holder.logFile}`,
    50,
  );
  execFileSync('nsenter', [
    `--target=${holder.pid}`,
    '--mount',
    '--',
    'mount',
    '-t',
    'overlay',
    'overlay',
    '-o',
    `lowerdir=${overlay}:/usr/local`,
    '/usr/local',
  ]);
  return { pid: holder.pid, process: holder };
}

/**
 * A tmpfs at `folder` in the host namespace: containerd's root there, since its metadata database
 * syncs every transaction to disk, and on a shared, busy disk the image's unpack and the kubelet's
 * CreateContainer calls then outlast the kubelet's deadline (bbolt fdatasync in every goroutine dump).
 */
export function mountTmpfs(host: HostNamespace, folder: string): void {
  mkdirSync(folder, { recursive: true });
  execFileSync('nsenter', [`--target=${host.pid}`, '--mount', '--', 'mount', '-t', 'tmpfs', 'tmpfs', folder]);
}

/** Puts the fake NVML where the NVIDIA driver's container toolkit puts libnvidia-ml.so.1, with its machine file beside it. */
export function placeFakeDriver(overlay: string, library: string, machineFile: string): string {
  const lib64 = path.join(overlay, 'nvidia', 'lib64');
  mkdirSync(lib64, { recursive: true });
  copyFileSync(library, path.join(lib64, 'libnvidia-ml.so.1'));
  copyFileSync(machineFile, path.join(lib64, 'fake-devices'));
  return lib64;
}

export interface PodNetwork {
  bridge: string;
  /** 10.<n>.1.0/24: the Pods' addresses. */
  subnet: string;
  confDir: string;
  /**
   * Adds an address of the host (the VIP of a Service), so Pods (through their gateway) and the host
   * reach it: on a second, port-less bridge (no dummy links on these kernels), since the CNI bridge
   * plugin refuses a bridge with another
   * address than its gateway.
   */
  addAddress(ip: string): void;
  remove(): void;
}

/**
 * A Linux bridge for the Pods (CNI bridge + host-local, Debian's plugins): the host reaches each Pod
 * by its IP (the kubelet's probes, our forwarders), a Pod reaches the host through its gateway.
 * No NAT, no iptables.
 */
export function createPodNetwork(dir: string, octet: number): PodNetwork {
  const bridge = `gpe2e${octet}`;
  const vips = `gpe2e${octet}vip`;
  const subnet = `10.${octet}.1.0/24`;
  const confDir = path.join(dir, 'cni', 'net.d');
  mkdirSync(confDir, { recursive: true });
  for (const link of [bridge, vips]) spawnSync('ip', ['link', 'del', link]);
  execFileSync('ip', ['link', 'add', bridge, 'type', 'bridge']);
  execFileSync('ip', ['link', 'set', bridge, 'up']);
  execFileSync('ip', ['link', 'add', vips, 'type', 'bridge']);
  execFileSync('ip', ['link', 'set', vips, 'up']);
  writeFileSync(
    path.join(confDir, '10-gpustack-e2e.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'gpustack-e2e',
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          // The Pods' default route: in-cluster clients dial the kubernetes Service's VIP through it.
          isDefaultGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet }]], dataDir: path.join(dir, 'cni', 'ipam') },
        },
      ],
    }),
  );
  return {
    bridge,
    subnet,
    confDir,
    addAddress: (ip) => execFileSync('ip', ['addr', 'add', `${ip}/32`, 'dev', vips]),
    remove: () => {
      for (const link of [bridge, vips]) spawnSync('ip', ['link', 'del', link]);
    },
  };
}

export interface Forwarder {
  url: string;
  port: number;
  connections: number;
  close(): Promise<void>;
}

/**
 * A TCP forwarder, kube-proxy's part for one Service: each connection to host:port goes to the
 * address `target` gives at that moment (undefined: refused).
 */
export async function forward(
  host: string,
  port: number,
  target: () => Promise<{ host: string; port: number } | undefined>,
): Promise<Forwarder> {
  const sockets = new Set<net.Socket>();
  const state = { connections: 0 };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    target().then(
      (to) => {
        if (!to) return void client.destroy();
        state.connections++;
        const upstream = net.connect(to.port, to.host);
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        client.pipe(upstream).pipe(client);
        client.resume();
      },
      () => client.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as net.AddressInfo).port;
  return {
    url: `http://${host}:${bound}`,
    port: bound,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
