/**
 * Test support for the agent: device builders, a recording logger, and a small `node:http`
 * server on 127.0.0.1 standing in for the API server (Nodes and NFD NodeFeatures only).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach } from 'vitest';
import { failure as sendFailure, json, readBody } from '../support/fake-http.js';
import {
  type DetectResult,
  type Device,
  type DeviceErrorCode,
  type DeviceErrorEntry,
  type ManufacturerName,
} from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import type { Labels } from '../../src/agent/index.js';
import { createKubeApi, type KubeApi } from '../../src/api-client/index.js';
import type { Logger } from '../../src/runtime/index.js';

export const A = 'acceleratable.feature.gpustack.ai/';
export const ACCELERATABLE = 'feature.gpustack.ai/acceleratable';
export const TOKEN = 'test-token-1234';

export function h100(index: number, overrides: Partial<Device> = {}): Device {
  return {
    manufacturer: 'nvidia',
    index,
    uuid: `GPU-0000000${index}`,
    product: 'NVIDIA H100 80GB HBM3',
    memoryMiB: 81559,
    cores: 16896,
    computeCapability: '9.0',
    family: 'Hopper',
    driverVersion: '570.124.06',
    runtimeVersion: '12.8',
    ...overrides,
  };
}

export function mi300x(index: number): Device {
  return {
    manufacturer: 'amd',
    index,
    uuid: `AMD-${index}`,
    product: 'AMD Instinct MI300X',
    memoryMiB: 196592,
    cores: 304,
    computeCapability: 'gfx942',
    family: 'CDNA3',
    driverVersion: '6.10.5',
    runtimeVersion: '6.3',
  };
}

export function times(n: number, make: (index: number) => Device): Device[] {
  return Array.from({ length: n }, (_, i) => make(i));
}

/** A DetectResult: the given devices, `LibraryNotFound` for every other manufacturer unless `errors` names it. */
export function detection(
  devices: readonly Device[],
  errors: Partial<Record<ManufacturerName, DeviceErrorCode>> = {},
): DetectResult {
  const found = new Set(devices.map((d) => d.manufacturer));
  const entries: DeviceErrorEntry[] = [];
  for (const manufacturer of MANUFACTURER_NAMES) {
    const code = errors[manufacturer] ?? (found.has(manufacturer) ? undefined : 'LibraryNotFound');
    if (code !== undefined) entries.push({ manufacturer, code, message: `${manufacturer}: ${code}` });
  }
  return { devices, errors: entries };
}

/** The labels the modelled Go project writes for 8 × NVIDIA H100 80GB HBM3. */
export const H100_LABELS: Labels = {
  [ACCELERATABLE]: 'true',
  [`${A}nvidia`]: 'true',
  [`${A}nvidia.driver-version`]: '570.124.06',
  [`${A}nvidia.runtime-version`]: '12.8',
  [`${A}nvidia-h100-80gb-hbm3`]: 'true',
  [`${A}nvidia-h100-80gb-hbm3.product`]: 'NVIDIA-H100-80GB-HBM3',
  [`${A}nvidia-h100-80gb-hbm3.memory`]: '80Gi',
  [`${A}nvidia-h100-80gb-hbm3.cores`]: '16896',
  [`${A}nvidia-h100-80gb-hbm3.count`]: '8',
  [`${A}nvidia-h100-80gb-hbm3.family`]: 'Hopper',
  [`${A}nvidia-h100-80gb-hbm3.comcap`]: '9.0',
};

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  fields: object;
  message: string;
}

export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  return {
    entries,
    info: (fields, message) => {
      entries.push({ level: 'info', fields, message });
    },
    warn: (fields, message) => {
      entries.push({ level: 'warn', fields, message });
    },
    error: (fields, message) => {
      entries.push({ level: 'error', fields, message });
    },
  };
}

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly contentType: string | undefined;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

interface NodeObject {
  metadata: { name: string; labels: Labels; annotations?: Labels };
}
interface NodeFeatureObject {
  metadata: { name: string; namespace: string; labels?: Labels };
  spec: { labels: Labels };
}

/** How the stand-in answers the next requests: normally, with an HTTP status, or by closing the socket. */
export type Failure = { status: number } | 'close' | undefined;

export interface FakeApiServer {
  readonly server: Server;
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly nodes: Map<string, NodeObject>;
  /** Keyed `<namespace>/<name>`. */
  readonly nodeFeatures: Map<string, NodeFeatureObject>;
  failure: Failure;
  patches(): RecordedRequest[];
  close(): Promise<void>;
}

const NODE_PATH = /^\/api\/v1\/nodes\/([^/?]+)$/;
const NODE_FEATURE_PATH = /^\/apis\/nfd\.k8s-sigs\.io\/v1alpha1\/namespaces\/([^/?]+)\/nodefeatures\/([^/?]+)$/;

/** Starts the stand-in on 127.0.0.1 (a free port) with the given nodes (name → labels). */
export async function startFakeApiServer(nodes: Record<string, Labels> = {}, prefix = ''): Promise<FakeApiServer> {
  const requests: RecordedRequest[] = [];
  const nodeMap = new Map<string, NodeObject>(
    Object.entries(nodes).map(([name, labels]) => [name, { metadata: { name, labels: { ...labels } } }]),
  );
  const nodeFeatures = new Map<string, NodeFeatureObject>();
  const fake = { failure: undefined as Failure };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const url = req.url ?? '';
    requests.push({
      method: req.method ?? '',
      path: url,
      contentType: req.headers['content-type'],
      authorization: req.headers.authorization,
      body,
    });
    const failure = fake.failure;
    if (failure === 'close') {
      req.socket.destroy();
      return;
    }
    if (failure !== undefined) return sendFailure(res, failure.status, 'injected failure');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return sendFailure(res, 401, 'Unauthorized');
    if (!url.startsWith(prefix)) return sendFailure(res, 404, 'outside the prefix');
    const { pathname, searchParams } = new URL(url.slice(prefix.length), 'http://stand-in');
    const nodeMatch = NODE_PATH.exec(pathname);
    if (nodeMatch) {
      const name = decodeURIComponent(nodeMatch[1] as string);
      const node = nodeMap.get(name);
      if (!node) return sendFailure(res, 404, `nodes "${name}" not found`);
      if (req.method === 'GET') return json(res, 200, node);
      if (req.method !== 'PATCH') return sendFailure(res, 405, 'method not allowed');
      if (req.headers['content-type'] !== 'application/merge-patch+json')
        return sendFailure(res, 415, 'unsupported media type');
      const metadata = (body as { metadata?: Record<string, Record<string, string | null> | undefined> }).metadata;
      for (const field of ['labels', 'annotations'] as const) {
        const current = (node.metadata[field] ??= {});
        for (const [key, value] of Object.entries(metadata?.[field] ?? {})) {
          if (value === null) delete current[key];
          else current[key] = value;
        }
      }
      return json(res, 200, node);
    }
    const nfMatch = NODE_FEATURE_PATH.exec(pathname);
    if (nfMatch) {
      const key = `${decodeURIComponent(nfMatch[1] as string)}/${decodeURIComponent(nfMatch[2] as string)}`;
      if (req.method === 'GET') {
        const object = nodeFeatures.get(key);
        return object ? json(res, 200, object) : sendFailure(res, 404, `nodefeatures "${key}" not found`);
      }
      if (req.method !== 'PATCH') return sendFailure(res, 405, 'method not allowed');
      if (req.headers['content-type'] !== 'application/apply-patch+yaml')
        return sendFailure(res, 415, 'unsupported media type');
      if (searchParams.get('fieldManager') === null)
        return sendFailure(res, 422, 'fieldManager is required for apply patch');
      const applied = body as NodeFeatureObject;
      const object: NodeFeatureObject = {
        metadata: { ...applied.metadata },
        spec: { labels: { ...applied.spec.labels } },
      };
      nodeFeatures.set(key, object);
      return json(res, 200, object);
    }
    return sendFailure(res, 404, `no route for ${pathname}`);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendFailure(res, 500, String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    server,
    url: `http://127.0.0.1:${port}${prefix}`,
    requests,
    nodes: nodeMap,
    nodeFeatures,
    patches: () => requests.filter((r) => r.method === 'PATCH'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** The stand-in of the running test, and clients of it. */
export interface FakeApiServerFixture {
  readonly api: FakeApiServer;
  /** A client of the stand-in; without `skipTlsVerify` client-node refuses its `http:` URL. */
  client(skipTlsVerify?: boolean): KubeApi;
}

/**
 * A stand-in holding `nodes` (name → labels) for each test of the enclosing `describe`: started
 * before the test, closed after it.
 */
export function useFakeApiServer(nodes: Record<string, Labels>, prefix = ''): FakeApiServerFixture {
  let current: FakeApiServer | undefined;
  beforeEach(async () => {
    current = await startFakeApiServer(nodes, prefix);
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  const fixture: FakeApiServerFixture = {
    get api() {
      if (current === undefined) throw new Error('the stand-in API server runs only during a test');
      return current;
    },
    client: (skipTlsVerify = true) => createKubeApi(kubeConfigFor(fixture.api.url, skipTlsVerify)),
  };
  return fixture;
}

/**
 * A KubeConfig loaded from a kubeconfig text pointing at `server` with a bearer token.
 * client-node (2.x, as 1.x) refuses an `http:` server unless `insecure-skip-tls-verify` is set.
 */
export function kubeConfigFor(server: string, skipTlsVerify = true): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(`
apiVersion: v1
kind: Config
clusters:
- name: stand-in
  cluster:
    server: ${server}
    insecure-skip-tls-verify: ${skipTlsVerify}
users:
- name: agent
  user:
    token: ${TOKEN}
contexts:
- name: stand-in
  context:
    cluster: stand-in
    user: agent
current-context: stand-in
`);
  return kc;
}
