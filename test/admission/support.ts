/**
 * Test support for the admission checker: a small `node:http` API server on 127.0.0.1 that lists
 * and watches (newline-delimited JSON) the ten collections the checker reads (and discovery of
 * resource.k8s.io/v1, which serves DeviceTaintRules), applies our
 * status patch and echoes it as a MODIFIED event, and can answer `410 Gone`, drop its watch
 * connections or fail its lists on demand; it also keeps Leases (get, create, replace with the
 * resourceVersion precondition: 409 on a stale one) for leader election. Plus a recording logger
 * and a kubeconfig for it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { failure, json, readBody } from '../support/fake-http.js';
import type { Logger } from '../../src/runtime/index.js';

export const TOKEN = 'admission-token';

export const COLLECTIONS = {
  workloads: '/apis/kueue.x-k8s.io/v1beta2/workloads',
  resourceflavors: '/apis/kueue.x-k8s.io/v1beta2/resourceflavors',
  nodes: '/api/v1/nodes',
  pods: '/api/v1/pods',
  // Listed whole: the checker's field selector (name `default`) is not applied here.
  schedulingchains: '/apis/worker.gpustack.ai/v1alpha1/schedulingchains',
  resourceslices: '/apis/resource.k8s.io/v1/resourceslices',
  resourceclaims: '/apis/resource.k8s.io/v1/resourceclaims',
  resourceclaimtemplates: '/apis/resource.k8s.io/v1/resourceclaimtemplates',
  instancetypes: '/apis/worker.gpustack.ai/v1alpha1/instancetypes',
  // Served at v1 as Kubernetes 1.37 does; discovery of resource.k8s.io/v1 lists it.
  devicetaintrules: '/apis/resource.k8s.io/v1/devicetaintrules',
} as const;
export type Collection = keyof typeof COLLECTIONS;

type Json = Record<string, unknown>;
interface Meta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
}

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly contentType: string | undefined;
  readonly body: unknown;
}

export interface FakeKube {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Creates or replaces an object and tells the watchers (ADDED or MODIFIED). */
  upsert(collection: Collection, object: Json): void;
  /** Changes an object without telling anyone, as if the events were compacted away. */
  upsertSilently(collection: Collection, object: Json): void;
  remove(collection: Collection, key: string): void;
  get(collection: Collection, key: string): Json | undefined;
  /** The Lease `namespace/name`, as last written. */
  lease(key: string): Json | undefined;
  /** Every Lease request answers 403 from now on (an account without the Role). */
  forbidLeases(): void;
  /** Sends raw text to every open watch of a collection (a line, or part of one with `newline` false). */
  sendRaw(collection: Collection, text: string, newline?: boolean): void;
  /** The next watch of each named collection answers with an ERROR event carrying 410 and ends. */
  goneOnce(...collections: Collection[]): void;
  /** The next watch of each named collection answers HTTP 410 (no stream at all). */
  goneStatusOnce(...collections: Collection[]): void;
  /** The next `n` list requests of a collection answer 500. */
  failLists(collection: Collection, n: number): void;
  /** The next `n` status patches answer `status`. */
  failPatches(status: number, n: number): void;
  /** Destroys every open watch connection (a broken network, not a clean end). */
  dropWatches(): void;
  openWatches(collection: Collection): number;
  lists(collection: Collection): number;
  patches(): RecordedRequest[];
  close(): Promise<void>;
}

function keyOf(object: Json): string {
  const meta = object['metadata'] as Meta;
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

function collectionOf(pathname: string): Collection | undefined {
  return (Object.keys(COLLECTIONS) as Collection[]).find((c) => COLLECTIONS[c] === pathname);
}

const INSTANCE_TYPE_PATH = /^\/apis\/worker\.gpustack\.ai\/v1alpha1\/instancetypes\/([^/]+)$/;
const STATUS_PATH = /^\/apis\/kueue\.x-k8s\.io\/v1beta2\/namespaces\/([^/]+)\/workloads\/([^/]+)\/status$/;
const LEASE_PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/;

/** `servesTaintRules: false`: discovery of resource.k8s.io/v1 leaves DeviceTaintRule out (Kubernetes 1.36 by default). */
export async function startFakeKube(options: { servesTaintRules?: boolean } = {}): Promise<FakeKube> {
  let version = 100;
  const stores = new Map<Collection, Map<string, Json>>(
    (Object.keys(COLLECTIONS) as Collection[]).map((c) => [c, new Map()]),
  );
  const watchers = new Map<Collection, Set<ServerResponse>>(
    (Object.keys(COLLECTIONS) as Collection[]).map((c) => [c, new Set()]),
  );
  const gone = new Set<Collection>();
  const goneStatus = new Set<Collection>();
  const listFailures = new Map<Collection, number>();
  const listCounts = new Map<Collection, number>();
  const patchFailures = { status: 0, left: 0 };
  const requests: RecordedRequest[] = [];
  const leases = new Map<string, Json>();
  let leasesForbidden = false;

  const store = (c: Collection) => stores.get(c) as Map<string, Json>;
  const watching = (c: Collection) => watchers.get(c) as Set<ServerResponse>;
  const send = (c: Collection, type: string, object: Json) => {
    for (const res of watching(c)) res.write(`${JSON.stringify({ type, object })}\n`);
  };
  function put(c: Collection, object: Json, notify: boolean): void {
    const copy = structuredClone(object);
    (copy['metadata'] as Meta).resourceVersion = String(++version);
    const key = keyOf(copy);
    const type = store(c).has(key) ? 'MODIFIED' : 'ADDED';
    store(c).set(key, copy);
    if (notify) send(c, type, copy);
  }

  function list(c: Collection, searchParams: URLSearchParams, res: ServerResponse): void {
    listCounts.set(c, (listCounts.get(c) ?? 0) + 1);
    const left = listFailures.get(c) ?? 0;
    if (left > 0) {
      listFailures.set(c, left - 1);
      return failure(res, 500, 'injected list failure');
    }
    // Pages as the API server does: `limit`, and a `continue` token (here: the offset) while more are left.
    const items = [...store(c).values()];
    const offset = Number(searchParams.get('continue') ?? '0');
    const limit = Number(searchParams.get('limit') ?? String(items.length)) || items.length;
    const page = items.slice(offset, offset + limit);
    const more = offset + limit < items.length;
    json(res, 200, {
      kind: 'List',
      apiVersion: 'v1',
      metadata: { resourceVersion: String(version), ...(more ? { continue: String(offset + limit) } : {}) },
      items: page,
    });
  }

  function watch(c: Collection, res: ServerResponse): void {
    if (goneStatus.delete(c)) return failure(res, 410, 'too old resource version');
    res.writeHead(200, { 'content-type': 'application/json' });
    if (gone.delete(c)) {
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' } })}\n`,
      );
      return;
    }
    res.flushHeaders();
    watching(c).add(res);
    // The response, not the request: a request's 'close' fires once its body is read.
    res.on('close', () => watching(c).delete(res));
  }

  function patchStatus(
    namespace: string,
    name: string,
    req: IncomingMessage,
    body: unknown,
    res: ServerResponse,
  ): void {
    if (req.headers['content-type'] !== 'application/apply-patch+yaml')
      return failure(res, 415, 'unsupported media type');
    if (patchFailures.left > 0) {
      patchFailures.left--;
      return failure(res, patchFailures.status, 'injected patch failure');
    }
    const key = `${namespace}/${name}`;
    const current = store('workloads').get(key);
    if (!current) return failure(res, 404, `workloads "${name}" not found`);
    const applied = (body as { status?: { admissionChecks?: Json[] } }).status?.admissionChecks ?? [];
    const next = structuredClone(current);
    const status = (next['status'] ??= {}) as { admissionChecks?: Json[] };
    const checks = status.admissionChecks ?? [];
    for (const entry of applied) {
      const at = checks.findIndex((c) => c['name'] === entry['name']);
      if (at >= 0) checks[at] = entry;
      else checks.push(entry);
    }
    status.admissionChecks = checks;
    put('workloads', next, true);
    json(res, 200, store('workloads').get(key));
  }

  /** Server-side apply of metadata.annotations on an InstanceType: merged, echoed as MODIFIED. */
  function patchInstanceType(name: string, req: IncomingMessage, body: unknown, res: ServerResponse): void {
    if (req.headers['content-type'] !== 'application/apply-patch+yaml')
      return failure(res, 415, 'unsupported media type');
    const current = store('instancetypes').get(name);
    if (!current) return failure(res, 404, `instancetypes "${name}" not found`);
    const next = structuredClone(current);
    const metadata = next['metadata'] as Meta & { annotations?: Record<string, string> };
    const applied = (body as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
    metadata.annotations = { ...metadata.annotations, ...applied };
    put('instancetypes', next, true);
    json(res, 200, store('instancetypes').get(name));
  }

  /** GET, POST (409 when it exists) and PUT (409 unless the resourceVersion is the stored one) of a Lease. */
  function handleLease(method: string, namespace: string, name: string | undefined, body: Json, res: ServerResponse) {
    if (leasesForbidden) return failure(res, 403, `leases is forbidden: User cannot ${method} leases in ${namespace}`);
    const key = `${namespace}/${name ?? (body['metadata'] as Meta | undefined)?.name ?? ''}`;
    const current = leases.get(key);
    const save = (status: number) => {
      const copy = structuredClone(body);
      (copy['metadata'] as Meta).resourceVersion = String(++version);
      leases.set(key, copy);
      json(res, status, copy);
    };
    if (method === 'GET' && name !== undefined)
      return current ? json(res, 200, current) : failure(res, 404, `leases "${name}" not found`);
    if (method === 'POST' && name === undefined)
      return current ? failure(res, 409, `leases "${key}" already exists`) : save(201);
    if (method === 'PUT' && name !== undefined) {
      if (!current) return failure(res, 404, `leases "${name}" not found`);
      const sent = (body['metadata'] as Meta | undefined)?.resourceVersion;
      if (sent !== (current['metadata'] as Meta).resourceVersion)
        return failure(res, 409, `Operation cannot be fulfilled on leases "${name}": the object has been modified`);
      return save(200);
    }
    return failure(res, 405, `${method} not allowed on leases`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', contentType: req.headers['content-type'], body });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return failure(res, 401, 'Unauthorized');
    const { pathname, searchParams } = new URL(req.url ?? '', 'http://fake');
    const lease = LEASE_PATH.exec(pathname);
    if (lease)
      return handleLease(
        req.method ?? '',
        decodeURIComponent(lease[1] as string),
        lease[2] === undefined ? undefined : decodeURIComponent(lease[2]),
        (body ?? {}) as Json,
        res,
      );
    const status = STATUS_PATH.exec(pathname);
    if (status && req.method === 'PATCH') {
      if (!searchParams.get('fieldManager')) return failure(res, 422, 'fieldManager is required for apply patch');
      return patchStatus(
        decodeURIComponent(status[1] as string),
        decodeURIComponent(status[2] as string),
        req,
        body,
        res,
      );
    }
    const instanceType = INSTANCE_TYPE_PATH.exec(pathname);
    if (instanceType && req.method === 'PATCH') {
      if (!searchParams.get('fieldManager')) return failure(res, 422, 'fieldManager is required for apply patch');
      return patchInstanceType(decodeURIComponent(instanceType[1] as string), req, body, res);
    }
    if (pathname === '/apis/resource.k8s.io/v1' && req.method === 'GET') {
      const names = ['resourceslices', 'resourceclaims', 'resourceclaimtemplates'];
      if (options.servesTaintRules !== false) names.push('devicetaintrules');
      return json(res, 200, {
        kind: 'APIResourceList',
        groupVersion: 'resource.k8s.io/v1',
        resources: names.map((name) => ({ name })),
      });
    }
    const collection = collectionOf(pathname);
    if (!collection || req.method !== 'GET') return failure(res, 404, `no route for ${req.method} ${pathname}`);
    return searchParams.get('watch') ? watch(collection, res) : list(collection, searchParams, res);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => failure(res, 500, String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    upsert: (c, object) => put(c, object, true),
    upsertSilently: (c, object) => put(c, object, false),
    remove(c, key) {
      const object = store(c).get(key);
      if (!object) return;
      store(c).delete(key);
      (object['metadata'] as Meta).resourceVersion = String(++version);
      send(c, 'DELETED', object);
    },
    get: (c, key) => store(c).get(key),
    lease: (key) => leases.get(key),
    forbidLeases: () => {
      leasesForbidden = true;
    },
    sendRaw(c, text, newline = true) {
      for (const res of watching(c)) res.write(newline ? `${text}\n` : text);
    },
    goneOnce(...collections) {
      for (const c of collections) gone.add(c);
    },
    goneStatusOnce(...collections) {
      for (const c of collections) goneStatus.add(c);
    },
    failLists(c, n) {
      listFailures.set(c, n);
    },
    failPatches(status, n) {
      patchFailures.status = status;
      patchFailures.left = n;
    },
    dropWatches() {
      for (const set of watchers.values()) {
        for (const res of set) res.socket?.destroy();
        set.clear();
      }
    },
    openWatches: (c) => watching(c).size,
    lists: (c) => listCounts.get(c) ?? 0,
    patches: () => requests.filter((r) => r.method === 'PATCH'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: LogEntry['level']) => (fields: object, message: string) => {
    entries.push({ level, fields: fields as Record<string, unknown>, message });
  };
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}

/** The kubeconfig text for the fake; client-node (2.x, as 1.x) refuses an `http:` server unless TLS verification is skipped. */
export function kubeConfigText(server: string): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
users:
- name: checker
  user:
    token: ${TOKEN}
contexts:
- name: fake
  context:
    cluster: fake
    user: checker
current-context: fake
`;
}

export function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeConfigText(server));
  return kc;
}

/**
 * Polls `check` until it returns true (no timing asserted: only that it happens). `timeoutMs` is a
 * hang guard, below the tests' own (vitest.config.ts) so that its message names what never came.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
