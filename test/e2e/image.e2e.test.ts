// The image as shipped (docs/development.md#e2e-image): built from the repository's Dockerfile by
// scripts/e2e/build-image.sh (locally made bases as build arguments, no registry), imported into the
// e2e containerd, and the chart installed with helm on a control plane with one real node (kubelet
// of the lane + containerd). The kubelet runs the hook server, the admission checker and the agent
// DaemonSet from the image with the chart's own securityContext, mounts and probes; Metacontroller
// (a host process) converges the chain through the containerised server; the agent publishes the
// node's labels and ResourceSlices from its container and its kubelet plugin registers from the
// DaemonSet's socket folders; a Pod with a claim runs with the CDI variables injected.
//
// What a real cluster has and this one lacks, and what stands in for it:
// - Pod networking: a Linux bridge from Debian's CNI plugins (bridge + host-local), no NAT.
// - kube-proxy: two forwarders in this process. The `kubernetes` Service's ClusterIP (on the bridge)
//   forwards to the API server, so in-cluster clients connect as they would anywhere
//   (KUBERNETES_SERVICE_HOST, the token volume, kube-root-ca.crt). Metacontroller runs on the host,
//   where no cluster DNS resolves gpustack-operator.<ns>.svc: the chart's controllers.hookBaseURL
//   (the value users set for a hook server outside the cluster) points it at https://127.0.0.1:<port>
//   (hooks.tls.extraIPAddresses puts the address into the chart's certificate), which forwards to
//   a ready endpoint of the chart's Service's hook port (its EndpointSlices), as kube-proxy would.
//   The agent writes with its Pod-bound token, through the chart's node restriction policy.
// - A driver on the host: the fake NVML (one H200) in /usr/local/nvidia/lib64 of a mount namespace
//   that containerd and the kubelet run in (this machine's /usr/local stays untouched).
// - The kubelet's folders are under a temp --root-dir: agent.kubeletPlugin.{registryDir,pluginsDir,
//   cdiDir} say where, as a user with another --root-dir would.
// Needs root, gcc, go, tar, ip, unshare, nsenter; without them it fails with the reason, unless
// E2E_ALLOW_SKIP=image skips it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { FAKE_LIBRARIES, machineFile } from '../../harness/native/fake-machine.js';
import { cdiSpecProblems } from '../support/cdi-spec.js';
import { nvidiaMachine } from '../../harness/e2e/agent.js';
import { waitFor, type KubeClient, type KubeObject } from '../../harness/e2e/apply.js';
import { waitForRender } from '../../harness/e2e/chain.js';
import { claimCdiSpecFile } from '../../harness/e2e/scheduling.js';
import type { Component } from '../../harness/e2e/components.js';
import { CHART, createHelm, NAMESPACE, RELEASE, type Helm } from '../../harness/e2e/helm.js';
import {
  createPodNetwork,
  CNI_BIN_DIR,
  ensureImage,
  forward,
  mountTmpfs,
  placeFakeDriver,
  startHostNamespace,
  type Forwarder,
  type ImageRecord,
  type PodNetwork,
} from '../../harness/e2e/image.js';
import { log } from '../../harness/e2e/log.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import {
  buildPauseImage,
  startContainerd,
  startKubelet,
  unmountUnder,
  type Containerd,
  type Kubelet,
} from '../../harness/e2e/node.js';
import { assertPrerequisite, skipScenario } from '../../harness/e2e/skip.js';

const NODE = 'e2e-image';
const WORKLOADS_NS = 'image-claims';
const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const CONVERGE_MS = 180_000;

function missingPrerequisite(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: buildah, the kubelet and containerd need root';
  for (const tool of ['gcc', 'go', 'tar', 'ip', 'unshare', 'nsenter', 'apt-get']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  return undefined;
}

const missing = missingPrerequisite();

type Pod = KubeObject & {
  spec: { containers: { name: string; image: string }[]; nodeName?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; imageID?: string; restartCount: number; state?: unknown }[];
  };
};

const ready = (pod: Pod): boolean =>
  pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

describe.skipIf(skipScenario('image', missing))(
  'the image built from the Dockerfile, run by the real kubelet from the chart',
  () => {
    let client: KubeClient;
    let helm: Helm;
    let image: ImageRecord;
    let containerd: Containerd;
    let kubelet: Kubelet;
    let network: PodNetwork | undefined;
    let hooks: Forwarder;
    let apiserverVip: Forwarder;
    let dir: string;
    let cdiDir: string;
    let kubeconfig: string;
    /** Every Pod run from the image, by namespace/name: its last phase seen and its uid (for its logs). */
    const ran = new Map<string, { phase: string; uid: string }>();
    const seen = (pod: Pod): void =>
      void ran.set(`${pod.metadata.namespace}/${pod.metadata.name}`, {
        phase: pod.status?.phase ?? 'Unknown',
        uid: String(pod.metadata['uid']),
      });

    const podsOf = async (app: string): Promise<Pod[]> =>
      client.list<Pod>('v1', 'Pod', { namespace: NAMESPACE, labelSelector: `app.kubernetes.io/name=${app}` });
    const describePods = async (): Promise<string> =>
      (await client.list<Pod>('v1', 'Pod'))
        .map(
          (p) =>
            `${p.metadata.namespace}/${p.metadata.name} ${p.status?.phase}: ${JSON.stringify(p.status?.containerStatuses?.map((c) => c.state) ?? p.status?.conditions)}`,
        )
        .join('\n  ');

    // 10.<n>.0.0/24 Services, 10.<n>.1.0/24 Pods: another run's leftovers never collide.
    const octet = 200 + Math.floor(Math.random() * 50);
    useCluster({
      scheduler: true,
      serviceAccountTokens: true,
      controllers: [
        'deployment',
        'replicaset',
        'daemonset',
        'endpointslice',
        'serviceaccount',
        'root-ca-cert-publisher',
        // Lifts the not-ready taint the kubelet registers the node with.
        'nodelifecycle',
      ],
      apiserverArgs: [`--service-cluster-ip-range=10.${octet}.0.0/24`],
      kueue: 'crds',
      metacontroller: true,
      components: ['kubelet', 'containerd', 'runc', 'helm'],
      setup: async (c) => {
        assertPrerequisite('image', missing);
        const started = Date.now();
        image = ensureImage();
        log(
          `image ${image.ref} ${image.digest}: ${image.size} (${(image.archiveBytes / 1e6).toFixed(0)} MB compressed), ${image.layers} layers ` +
            `(${image.baseLayers} of the base), built in ${image.buildSeconds} s (bases ${image.baseSeconds} s); ` +
            `ready after ${((Date.now() - started) / 1000).toFixed(0)} s here`,
        );
        client = c.client;
        kubeconfig = c.kubeconfig;
        helm = createHelm(c.components.helm as Component);

        dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-e2e-image-'));
        cdiDir = path.join(dir, 'cdi');
        mkdirSync(cdiDir);
        // The node's host: the fake driver (two H200: one held whole and one shared across the upgrade)
        // where the NVIDIA container toolkit puts NVML.
        const overlay = path.join(dir, 'host-usr-local');
        placeFakeDriver(overlay, FAKE_LIBRARIES.nvidia, machineFile(nvidiaMachine('NVIDIA H200', 2), dir));
        const host = await startHostNamespace(c.logsDir, overlay);
        c.onStop('host-namespace', () => host.process.stop());
        mountTmpfs(host, path.join(dir, 'containerd', 'root'));
        network = createPodNetwork(dir, octet);
        const pods = network;
        c.onStop('pod-network', async () => pods.remove());

        containerd = await startContainerd(dir, c.logsDir, cdiDir, {
          mountNamespaceOf: host.pid,
          cni: { confDir: network.confDir, binDir: CNI_BIN_DIR },
          snapshotter: 'overlayfs',
        });
        c.manage(containerd.process, async () => {
          containerd.killTasks();
          await containerd.process.stop(20_000);
        });
        containerd.ctr(['images', 'import', '--all-platforms', buildPauseImage(dir, c.versions.kubernetes)]);
        // Unpacked here, into the CRI's snapshotter: through the transfer service (ctr's default) the
        // image is stored but not unpacked (buildah's index names no platform), and the kubelet's first
        // CreateContainer calls, unpacking it concurrently, outlast their deadline on two busy cores.
        containerd.ctr(['images', 'import', '--local', '--snapshotter', 'overlayfs', image.archive]);
        kubelet = await startKubelet({
          dir,
          logsDir: c.logsDir,
          kubeconfig: c.kubeconfig,
          nodeName: NODE,
          containerdSocket: containerd.socket,
          mountNamespaceOf: host.pid,
        });
        c.manage(kubelet.process, () => kubelet.process.stop(20_000));

        // kube-proxy's part. The `kubernetes` Service's ClusterIP → the API server.
        const kubernetes = await waitFor(
          async () =>
            client.get<KubeObject & { spec: { clusterIP: string } }>('v1', 'Service', 'kubernetes', 'default'),
          60_000,
          'the API server created no `kubernetes` Service',
        );
        network.addAddress(kubernetes.spec.clusterIP);
        const apiserverPort = Number(new URL(c.plane.server).port);
        apiserverVip = await forward(kubernetes.spec.clusterIP, 443, async () => ({
          host: '127.0.0.1',
          port: apiserverPort,
        }));
        c.onStop('apiserver-vip', () => apiserverVip.close());
        // Metacontroller → a ready endpoint of the chart's Service.
        let turn = 0;
        hooks = await forward('127.0.0.1', 0, async () => {
          const slices = await client.list<
            KubeObject & {
              endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[];
              ports?: { name?: string; port: number }[];
            }
          >('discovery.k8s.io/v1', 'EndpointSlice', {
            namespace: NAMESPACE,
            labelSelector: 'kubernetes.io/service-name=gpustack-operator',
          });
          const targets = slices.flatMap((s) => {
            // The hook port (HTTPS): the forwarder passes TLS through, Metacontroller verifies the chart's CA.
            const port = s.ports?.find((p) => p.name === 'hooks')?.port;
            return port === undefined
              ? []
              : (s.endpoints ?? [])
                  .filter((e) => e.conditions?.ready !== false)
                  .map((e) => ({ host: e.addresses[0] as string, port }));
          });
          return targets.length === 0 ? undefined : targets[turn++ % targets.length];
        });
        c.onStop('hook-forwarder', () => hooks.close());

        await waitFor(
          async () => {
            const node = await client.get<
              KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
            >('v1', 'Node', NODE);
            return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          },
          120_000,
          `node ${NODE} did not turn Ready (CNI?); see ${kubelet.process.logFile} and ${containerd.process.logFile}`,
          1000,
        );

        const out = helm.run(
          [
            'install',
            RELEASE,
            CHART,
            '--namespace',
            NAMESPACE,
            '--create-namespace',
            ...helm.valueArgs({
              set: {
                // https to the forwarder's address, which the chart's serving certificate then holds.
                'controllers.hookBaseURL': hooks.url.replace(/^http:/, 'https:'),
                'hooks.tls.extraIPAddresses[0]': '127.0.0.1',
                // The Node's own labels: no NFD here.
                'agent.publish': 'node-labels',
                'agent.interval': '10s',
                'agent.kubeletPlugin.registryDir': kubelet.registryDir,
                'agent.kubeletPlugin.pluginsDir': kubelet.pluginsDir,
                'agent.kubeletPlugin.cdiDir': cdiDir,
              },
            }),
          ],
          { kubeconfig: c.kubeconfig, timeoutMs: 180_000 },
        );
        expect(out).toMatch(/STATUS: deployed/);
      },
      teardown: async () => {
        if (client && image) {
          // What ran from the image: every Pod seen running it, with its phase now (or when last seen).
          for (const pod of await client.list<Pod>('v1', 'Pod').catch(() => [] as Pod[]))
            if (pod.spec.containers.some((c) => c.image === 'gpustack-operator:0.1.0')) seen(pod);
          log(`image ${image.ref} digest ${image.digest} (id ${image.id}); Pods run from it:`);
          for (const [name, { phase }] of ran) log(`  ${name} ${phase}`);
        }
        helm?.dispose();
      },
      cleanup: () => {
        if (dir) {
          unmountUnder(dir);
          rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
        }
        // The kubelet writes container logs to the machine's /var/log/pods: leave none of ours there.
        for (const [name, { uid }] of ran) {
          const [namespace, pod] = name.split('/') as [string, string];
          rmSync(path.join('/var/log/pods', `${namespace}_${pod}_${uid}`), { recursive: true, force: true });
        }
      },
    });

    it('the kubelet runs every Pod of the chart from the image (its digest) and each turns Ready through its probes', async () => {
      const apps = ['gpustack-operator', 'gpustack-admission', 'gpustack-agent'];
      const want = { 'gpustack-operator': 2, 'gpustack-admission': 1, 'gpustack-agent': 1 } as Record<string, number>;
      await waitFor(
        async () => {
          for (const app of apps) {
            const pods = await podsOf(app);
            if (pods.filter(ready).length !== want[app]) return false;
          }
          return true;
        },
        CONVERGE_MS,
        'every Pod of the chart Ready',
        2000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n  ${await describePods()}`);
      });
      for (const app of apps) {
        for (const pod of await podsOf(app)) {
          expect(pod.spec.nodeName).toBe(NODE);
          expect(pod.spec.containers[0]?.image).toBe('gpustack-operator:0.1.0');
          // The image the kubelet started is the one built here: its ID (from no registry, no repo digest).
          expect(pod.status?.containerStatuses?.[0]?.imageID, pod.metadata.name).toBe(image.id);
          seen(pod);
          expect(pod.status?.containerStatuses?.[0]?.restartCount, pod.metadata.name).toBe(0);
        }
      }
    });

    it('Metacontroller converges the chain through the containerised hook server (its Service), from the labels the agent published from its container', async () => {
      const managed = await waitForRender(
        client,
        async () => {
          const node = await client.get('v1', 'Node', NODE);
          const labels = node?.metadata.labels ?? {};
          if (
            labels['acceleratable.feature.gpustack.ai/nvidia'] === undefined &&
            !Object.keys(labels).some((k) => k.startsWith('acceleratable.feature.gpustack.ai/'))
          )
            return undefined;
          return [node as never];
        },
        'the live chain matches render for the real node',
        CONVERGE_MS,
        2000,
      );
      expect(managed).toBe(1);
      const instanceTypes = (await client.list(GPUSTACK, 'InstanceType')).map((o) => o.metadata.name);
      expect(
        instanceTypes.some((n) => n.includes('h200')),
        instanceTypes.join(', '),
      ).toBe(true);
      // The agent published those labels with its Pod-bound token, under the chart's node restriction.
      for (const kind of ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'])
        expect(
          await client.get('admissionregistration.k8s.io/v1', kind, 'gpustack-agent-node-restriction'),
          kind,
        ).toBeDefined();
      // Every hook call went through the Service's endpoints, i.e. to a Pod.
      expect(hooks.connections).toBeGreaterThan(0);
      expect(apiserverVip.connections).toBeGreaterThan(0);
    });

    it("the agent's kubelet plugin registers from the DaemonSet's socket folders and its ResourceSlice lists the card", async () => {
      await waitFor(
        async () => /Registered DRA plugin.*nvidia\.gpustack\.ai/.test(readFileSync(kubelet.process.logFile, 'utf8')),
        120_000,
        `the kubelet did not register nvidia.gpustack.ai; see ${kubelet.process.logFile}`,
        1000,
      );
      const [agent] = await podsOf('gpustack-agent');
      const health = (await (await fetch(`http://${agent?.status?.podIP}:8081/healthz`)).json()) as {
        kubeletPlugins?: { driver: string; registered?: boolean; serving: boolean }[];
      };
      expect(health.kubeletPlugins).toEqual([
        expect.objectContaining({ driver: 'nvidia.gpustack.ai', serving: true, registered: true }),
      ]);
      // The sockets are in the kubelet's folders on the host, created by uid 0 inside the container.
      expect(readdirSync(kubelet.registryDir).some((f) => f.startsWith('nvidia.gpustack.ai'))).toBe(true);
      const slices = await waitFor(
        async () => {
          const list = (
            await client.list<
              KubeObject & { spec: { nodeName?: string; driver: string; devices?: { name: string }[] } }
            >('resource.k8s.io/v1', 'ResourceSlice')
          ).filter((s) => s.spec.nodeName === NODE);
          return list.length > 0 ? list : undefined;
        },
        60_000,
        `the agent published no ResourceSlice for ${NODE}`,
        1000,
      );
      expect(slices.flatMap((s) => (s.spec.devices ?? []).map((d) => d.name))).toContain('card-0');
    });

    it('a Pod with a claim runs with the CDI variables the plugin prepared (seen by the process in the container)', async () => {
      await client.applyObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: WORKLOADS_NS } });
      const classes = (await client.list('resource.k8s.io/v1', 'DeviceClass')).map((c) => c.metadata.name);
      expect(classes).toContain('gpustack-nvidia');
      await client.applyObject({
        apiVersion: 'resource.k8s.io/v1',
        kind: 'ResourceClaim',
        metadata: { name: 'one-gpu', namespace: WORKLOADS_NS },
        spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpustack-nvidia' } }] } },
      } as KubeObject);
      await client.applyObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'uses-gpu', namespace: WORKLOADS_NS },
        spec: {
          terminationGracePeriodSeconds: 1,
          tolerations: [{ operator: 'Exists' }],
          resourceClaims: [{ name: 'gpu', resourceClaimName: 'one-gpu' }],
          containers: [
            {
              name: 'main',
              // Our image: it has a shell-free node to print what the process sees.
              image: 'gpustack-operator:0.1.0',
              command: [
                'node',
                '-e',
                'console.log("visible=" + process.env.NVIDIA_VISIBLE_DEVICES); setInterval(() => {}, 1 << 30)',
              ],
              resources: { claims: [{ name: 'gpu' }] },
            },
          ],
        },
      } as KubeObject);
      const pod = await waitFor(
        async () => {
          const p = await client.get<Pod>('v1', 'Pod', 'uses-gpu', WORKLOADS_NS);
          return p?.status?.phase === 'Running' ? p : undefined;
        },
        180_000,
        `Pod uses-gpu did not run; see ${kubelet.process.logFile}`,
        1000,
      ).catch(async (error: Error) => {
        throw new Error(`${error.message}\n  ${await describePods()}`);
      });
      seen(pod);
      const { file: specFile } = await claimCdiSpecFile(client, cdiDir, 'one-gpu', WORKLOADS_NS);
      expect(existsSync(specFile)).toBe(true);
      expect(cdiSpecProblems(JSON.parse(readFileSync(specFile, 'utf8')))).toEqual([]);
      // The container's own output (the kubelet's log file of it): the variable reached the process.
      const logDir = path.join('/var/log/pods', `${WORKLOADS_NS}_uses-gpu_${pod.metadata['uid'] as string}`, 'main');
      const output = await waitFor(
        async () => {
          const files = existsSync(logDir) ? readdirSync(logDir) : [];
          const text = files.map((f) => readFileSync(path.join(logDir, f), 'utf8')).join('');
          return text.includes('visible=') ? text : undefined;
        },
        60_000,
        `no output of uses-gpu in ${logDir}`,
        1000,
      );
      // The card the scheduler allocated (card-<i>: the fake driver's GPU-e2e-<i>).
      const allocated = await client.get<
        KubeObject & { status?: { allocation?: { devices?: { results?: { device: string }[] } } } }
      >('resource.k8s.io/v1', 'ResourceClaim', 'one-gpu', WORKLOADS_NS);
      const card = allocated?.status?.allocation?.devices?.results?.[0]?.device ?? '';
      expect(card).toMatch(/^card-[01]$/);
      expect(output).toContain(`visible=GPU-e2e-${card.slice('card-'.length)}`);
      await client.delete('v1', 'Pod', 'uses-gpu', WORKLOADS_NS, { gracePeriodSeconds: 0 });
      await waitFor(async () => !existsSync(specFile), 120_000, 'the kubelet did not unprepare the claim', 1000);
    });

    it('8. helm upgrade to a second image tag while Pods hold a whole card and a share: nothing evicted, they keep their cards and CDI specs, the new agent serves a new claim; helm rollback likewise', async () => {
      const UPGRADE_TAG = '0.1.0-upgrade';
      /** A claim on one device of `deviceClass` and a Pod of our image that holds it. */
      const holder = async (name: string, deviceClass: string): Promise<void> => {
        await client.applyObject({
          apiVersion: 'resource.k8s.io/v1',
          kind: 'ResourceClaim',
          metadata: { name, namespace: WORKLOADS_NS },
          spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: deviceClass } }] } },
        } as KubeObject);
        await client.applyObject({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: WORKLOADS_NS },
          spec: {
            terminationGracePeriodSeconds: 1,
            tolerations: [{ operator: 'Exists' }],
            resourceClaims: [{ name: 'gpu', resourceClaimName: name }],
            containers: [
              {
                name: 'main',
                image: 'gpustack-operator:0.1.0',
                command: ['node', '-e', 'setInterval(() => {}, 1 << 30)'],
                resources: { claims: [{ name: 'gpu' }] },
              },
            ],
          },
        } as KubeObject);
      };
      const runningPod = (name: string) =>
        waitFor(
          async () => {
            const p = await client.get<Pod>('v1', 'Pod', name, WORKLOADS_NS);
            return p?.status?.phase === 'Running' ? p : undefined;
          },
          180_000,
          `Pod ${name} did not run; see ${kubelet.process.logFile}`,
          1000,
        ).catch(async (error: Error) => {
          throw new Error(`${error.message}\n  ${await describePods()}`);
        });
      /** Every Pod of the chart on `image`, as many as the chart runs, each Ready; none left on another. */
      const chartOn = async (imageRef: string, what: string): Promise<void> => {
        const want: Record<string, number> = { 'gpustack-operator': 2, 'gpustack-admission': 1, 'gpustack-agent': 1 };
        await waitFor(
          async () => {
            for (const [app, count] of Object.entries(want)) {
              const pods = (await podsOf(app)).filter((p) => p.metadata.deletionTimestamp === undefined);
              if (pods.length !== count || !pods.every((p) => ready(p) && p.spec.containers[0]?.image === imageRef))
                return false;
              pods.forEach(seen);
            }
            return true;
          },
          CONVERGE_MS,
          what,
          2000,
        ).catch(async (error: Error) => {
          throw new Error(`${error.message}\n  ${await describePods()}`);
        });
      };
      const registrations = () =>
        (readFileSync(kubelet.process.logFile, 'utf8').match(/Registered DRA plugin.*nvidia\.gpustack\.ai/g) ?? [])
          .length;

      const names = ['holds-whole', 'holds-share'];
      await holder('holds-whole', 'gpustack-nvidia');
      await holder('holds-share', 'gpustack-nvidia-shared');
      const held = new Map<string, { uid: string; spec: string }>();
      for (const name of names) {
        const pod = await runningPod(name);
        seen(pod);
        const { file } = await claimCdiSpecFile(client, cdiDir, name, WORKLOADS_NS);
        held.set(name, { uid: String(pod.metadata['uid']), spec: readFileSync(file, 'utf8') });
      }
      /** The holders: the same Pods (uid), running, never restarted, their CDI specs unchanged. */
      const kept = async (when: string): Promise<void> => {
        for (const name of names) {
          const pod = await client.get<Pod>('v1', 'Pod', name, WORKLOADS_NS);
          expect(pod?.metadata['uid'], `${name} ${when}`).toBe(held.get(name)?.uid);
          expect(pod?.status?.phase, `${name} ${when}`).toBe('Running');
          expect(pod?.status?.containerStatuses?.[0]?.restartCount, `${name} ${when}`).toBe(0);
          const { file } = await claimCdiSpecFile(client, cdiDir, name, WORKLOADS_NS);
          expect(readFileSync(file, 'utf8'), `${name}'s CDI spec ${when}`).toBe(held.get(name)?.spec);
        }
      };

      // The second tag: the same image under a new name, as a release built from the same Dockerfile.
      const source = containerd
        .ctr(['images', 'ls', '-q'])
        .split('\n')
        .find((ref) => ref.endsWith('gpustack-operator:0.1.0'));
      expect(source, 'the imported image').toBeDefined();
      containerd.ctr(['images', 'tag', source as string, (source as string).replace(/:0\.1\.0$/, `:${UPGRADE_TAG}`)]);

      const before = registrations();
      const upgradeAt = Date.now();
      const upgraded = helm.run(
        ['upgrade', RELEASE, CHART, '--namespace', NAMESPACE, '--reuse-values', '--set', `image.tag=${UPGRADE_TAG}`],
        { kubeconfig, timeoutMs: 180_000 },
      );
      expect(upgraded).toMatch(/STATUS: deployed/);
      await chartOn(`gpustack-operator:${UPGRADE_TAG}`, 'every Pod of the chart on the new tag and Ready');
      await waitFor(async () => registrations() > before, 120_000, 'the new agent re-registers its plugin', 1000);
      const upgradeSeconds = (Date.now() - upgradeAt) / 1000;
      await kept('after the upgrade');

      // A new claim is prepared by the new agent's plugin: a second share of the shared card.
      await holder('new-share', 'gpustack-nvidia-shared');
      seen(await runningPod('new-share'));
      const { file: newSpec } = await claimCdiSpecFile(client, cdiDir, 'new-share', WORKLOADS_NS);
      expect(cdiSpecProblems(JSON.parse(readFileSync(newSpec, 'utf8')))).toEqual([]);

      const rollbackAt = Date.now();
      helm.run(['rollback', RELEASE, '1', '--namespace', NAMESPACE], { kubeconfig, timeoutMs: 180_000 });
      await chartOn('gpustack-operator:0.1.0', 'every Pod of the chart back on the first tag and Ready');
      const rollbackSeconds = (Date.now() - rollbackAt) / 1000;
      await kept('after the rollback');

      // Released through the rolled-back plugin: every claim unprepared, its CDI spec gone.
      for (const name of [...names, 'new-share'])
        await client.delete('v1', 'Pod', name, WORKLOADS_NS, { gracePeriodSeconds: 0 });
      await waitFor(
        async () => readdirSync(cdiDir).filter((f) => f.endsWith('.json')).length === 0,
        120_000,
        'the kubelet did not unprepare every claim',
        1000,
      );
      for (const name of [...names, 'new-share'])
        await client.delete('resource.k8s.io/v1', 'ResourceClaim', name, WORKLOADS_NS);
      log(
        `fault: helm upgrade to ${UPGRADE_TAG}, then rollback, with a whole card and a share held | upgraded in ${upgradeSeconds.toFixed(1)} s, rolled back in ${rollbackSeconds.toFixed(1)} s | checks: holders kept (uid, Running, 0 restarts, CDI specs unchanged) after both, plugin re-registered, new share prepared by the new agent, every claim unprepared after`,
      );
    });
  },
);
