// A small dependency-free Kubernetes client for the e2e suite: bearer token over
// HTTPS (node:https, so the API server's own CA can be trusted per request),
// discovery-based kind → resource mapping, server-side apply, get/list/delete and a
// polling helper. Only what the scenarios need; no watches, no retries on writes.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';

import { parse as parseYaml, parseAllDocuments } from 'yaml';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: Array<Record<string, unknown>>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface KubeConnection {
  server: string;
  token: string;
  /** PEM bundle to trust; undefined = skip verification (insecure-skip-tls-verify). */
  ca?: string;
}

export interface ResourceInfo {
  /** Path prefix up to and excluding `namespaces/…` or the resource: `/api/v1`, `/apis/g/v`. */
  base: string;
  resource: string;
  namespaced: boolean;
}

export class KubeError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    const detail =
      typeof body === 'object' && body !== null && 'message' in body
        ? String((body as { message: unknown }).message)
        : typeof body === 'string'
          ? body.slice(0, 2000)
          : JSON.stringify(body);
    super(`${method} ${url} → ${status}: ${detail}`);
    this.name = 'KubeError';
  }
}

export interface ApplyOptions {
  fieldManager?: string;
  /** Take over fields owned by other managers (default true). */
  force?: boolean;
  /** Server-side dry-run (`dryRun=All`): validated and defaulted, not persisted. */
  dryRun?: boolean;
  /** Apply to a subresource, e.g. `status` (node capacity, parent status). */
  subresource?: string;
}

export interface DeleteOptions {
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** 0 deletes at once: without a kubelet a bound Pod would otherwise stay Terminating. */
  readonly gracePeriodSeconds?: number;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Parses a multi-document YAML text into objects (empty documents dropped). */
export function parseManifests(text: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors[0]?.message ?? ''}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error('a manifest document is not an object');
    const obj = value as KubeObject;
    if (obj.kind === 'List' && Array.isArray(obj.items)) {
      out.push(...(obj.items as KubeObject[]));
    } else {
      out.push(obj);
    }
  }
  return out;
}

export class KubeClient {
  private readonly agent: https.Agent;
  private readonly resources = new Map<string, ResourceInfo>();

  constructor(readonly connection: KubeConnection) {
    this.agent = new https.Agent({
      keepAlive: true,
      maxSockets: 16,
      ...(connection.ca === undefined ? { rejectUnauthorized: false } : { ca: connection.ca }),
    });
  }

  /** Reads a kubeconfig of the shape the control plane writes (token auth, one context). */
  static fromKubeconfig(file: string): KubeClient {
    const config = parseYaml(readFileSync(file, 'utf8')) as {
      'current-context'?: string;
      contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
      clusters?: Array<{ name: string; cluster: Record<string, unknown> }>;
      users?: Array<{ name: string; user: Record<string, unknown> }>;
    };
    const context = config.contexts?.find((c) => c.name === config['current-context']) ?? config.contexts?.[0];
    if (!context) throw new Error(`${file}: no context`);
    const cluster = config.clusters?.find((c) => c.name === context.context.cluster)?.cluster;
    const user = config.users?.find((u) => u.name === context.context.user)?.user;
    if (!cluster || typeof cluster.server !== 'string') throw new Error(`${file}: no cluster server`);
    if (!user || typeof user.token !== 'string') throw new Error(`${file}: only token users are supported`);
    let ca: string | undefined;
    if (typeof cluster['certificate-authority-data'] === 'string') {
      ca = Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8');
    } else if (typeof cluster['certificate-authority'] === 'string') {
      ca = readFileSync(path.resolve(path.dirname(file), cluster['certificate-authority']), 'utf8');
    }
    return new KubeClient({ server: cluster.server, token: user.token, ...(ca === undefined ? {} : { ca }) });
  }

  close(): void {
    this.agent.destroy();
  }

  /** One HTTP request; resolves with status and parsed body (JSON when it parses). */
  raw(
    method: string,
    urlPath: string,
    body?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(urlPath, this.connection.server);
    return new Promise((resolve, reject) => {
      const request = https.request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            authorization: `Bearer ${this.connection.token}`,
            accept: 'application/json',
            ...(body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) }),
          },
          timeout: 30_000,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = text;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              // not JSON (e.g. /readyz): keep the text
            }
            resolve({ status: response.statusCode ?? 0, body: parsed });
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`${method} ${url.href}: timed out`)));
      request.on('error', reject);
      if (body !== undefined) request.write(body);
      request.end();
    });
  }

  /** Like raw() but throws KubeError on a non-2xx status. */
  async request<T = unknown>(method: string, urlPath: string, body?: string, contentType?: string): Promise<T> {
    const response = await this.raw(method, urlPath, body, contentType);
    if (response.status < 200 || response.status >= 300) {
      throw new KubeError(method, urlPath, response.status, response.body);
    }
    return response.body as T;
  }

  /** Maps apiVersion + kind to its resource through discovery (cached; refreshed on a miss). */
  async resource(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const key = `${apiVersion}/${kind}`;
    const cached = this.resources.get(key);
    if (cached) return cached;
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const response = await this.raw('GET', base);
    if (response.status === 200) {
      const list = response.body as { resources: Array<{ name: string; kind: string; namespaced: boolean }> };
      for (const r of list.resources) {
        if (r.name.includes('/')) continue;
        this.resources.set(`${apiVersion}/${r.kind}`, { base, resource: r.name, namespaced: r.namespaced });
      }
    }
    const found = this.resources.get(key);
    if (!found) throw new Error(`the API server does not serve ${kind} in ${apiVersion} (yet?)`);
    return found;
  }

  private async objectPath(apiVersion: string, kind: string, name?: string, namespace?: string): Promise<string> {
    const info = await this.resource(apiVersion, kind);
    let p = info.base;
    if (info.namespaced) {
      if (namespace === undefined && name !== undefined)
        throw new Error(`${kind} ${name}: namespaced, no namespace given`);
      if (namespace !== undefined) p += `/namespaces/${encodeURIComponent(namespace)}`;
    }
    p += `/${info.resource}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    return p;
  }

  /** Server-side apply of one object; returns the object the server now has. */
  async applyObject<T extends KubeObject = KubeObject>(obj: KubeObject, options: ApplyOptions = {}): Promise<T> {
    const { apiVersion, kind, metadata } = obj;
    if (!apiVersion || !kind || !metadata?.name)
      throw new Error('apply: apiVersion, kind and metadata.name are required');
    let p = await this.objectPath(apiVersion, kind, metadata.name, metadata.namespace);
    if (options.subresource) p += `/${options.subresource}`;
    const query = new URLSearchParams({ fieldManager: options.fieldManager ?? 'gpustack-e2e' });
    if (options.force ?? true) query.set('force', 'true');
    if (options.dryRun) query.set('dryRun', 'All');
    return this.request<T>('PATCH', `${p}?${query.toString()}`, JSON.stringify(obj), 'application/apply-patch+yaml');
  }

  /** Server-side apply of every document of a YAML text (or of the given objects), in order. */
  async apply(manifests: string | readonly KubeObject[], options: ApplyOptions = {}): Promise<KubeObject[]> {
    const objects = typeof manifests === 'string' ? parseManifests(manifests) : manifests;
    const out: KubeObject[] = [];
    for (const obj of objects) out.push(await this.applyObject(obj, options));
    return out;
  }

  async applyFile(file: string, options: ApplyOptions = {}): Promise<KubeObject[]> {
    return this.apply(readFileSync(file, 'utf8'), options);
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
  ): Promise<T | undefined> {
    const p = await this.objectPath(apiVersion, kind, name, namespace);
    const response = await this.raw('GET', p);
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw new KubeError('GET', p, response.status, response.body);
    return response.body as T;
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    options: ListOptions = {},
  ): Promise<T[]> {
    let p = await this.objectPath(apiVersion, kind, undefined, options.namespace);
    const query = new URLSearchParams();
    if (options.labelSelector) query.set('labelSelector', options.labelSelector);
    if (options.fieldSelector) query.set('fieldSelector', options.fieldSelector);
    if (query.size > 0) p += `?${query.toString()}`;
    const list = await this.request<{ items: T[] }>('GET', p);
    return list.items.map((item) => ({ ...item, apiVersion, kind }));
  }

  /** Deletes; returns false when it was already gone. Background propagation by default. */
  async delete(
    apiVersion: string,
    kind: string,
    name: string,
    namespace?: string,
    options: DeleteOptions = {},
  ): Promise<boolean> {
    const p = await this.objectPath(apiVersion, kind, name, namespace);
    const { propagationPolicy = 'Background', gracePeriodSeconds } = options;
    const response = await this.raw(
      'DELETE',
      p,
      JSON.stringify({ propagationPolicy, ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}) }),
    );
    if (response.status === 404) return false;
    if (response.status < 200 || response.status >= 300)
      throw new KubeError('DELETE', p, response.status, response.body);
    return true;
  }

  /** JSON merge patch (e.g. to remove a label: `{metadata:{labels:{k:null}}}`). */
  async mergePatch<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    name: string,
    patch: unknown,
    namespace?: string,
    subresource?: string,
  ): Promise<T> {
    let p = await this.objectPath(apiVersion, kind, name, namespace);
    if (subresource) p += `/${subresource}`;
    return this.request<T>('PATCH', p, JSON.stringify(patch), 'application/merge-patch+json');
  }

  /** Waits until every named CustomResourceDefinition reports Established=True. */
  async waitForCrds(names: readonly string[], timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        for (const name of names) {
          const crd = await this.get<
            KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } }
          >('apiextensions.k8s.io/v1', 'CustomResourceDefinition', name);
          if (!crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) {
            return undefined;
          }
        }
        return true;
      },
      timeoutMs,
      `CRDs not Established: ${names.join(', ')}`,
    );
    // New kinds: forget cached discovery misses.
    this.resources.clear();
  }

  /** Applies every CRD in the given YAML texts/files and waits until all are Established. */
  async installCrds(files: readonly string[], timeoutMs = 60_000): Promise<string[]> {
    const names: string[] = [];
    for (const file of files) {
      for (const obj of parseManifests(readFileSync(file, 'utf8'))) {
        if (obj.kind !== 'CustomResourceDefinition') continue;
        await this.applyObject(obj);
        names.push(obj.metadata.name);
      }
    }
    await this.waitForCrds(names, timeoutMs);
    return names;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `fn` (every `intervalMs`) until it returns something other than undefined,
 * false or null, and returns that. Errors thrown by `fn` count as "not yet". On
 * timeout throws an Error with `message`, the elapsed time and the last error.
 */
export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs: number,
  message: string,
  intervalMs = 250,
): Promise<T> {
  const start = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined && value !== null && value !== false) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - start >= timeoutMs) {
      const detail =
        lastError === undefined
          ? ''
          : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms: ${message}${detail}`);
    }
    await sleep(intervalMs);
  }
}

/** Waits (2 minutes by default) until `check` returns no differences; fails with the last list of them. */
export async function converge(what: string, check: () => Promise<string[]>, timeoutMs = 120_000): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      async () => {
        last = await check();
        return last.length === 0;
      },
      timeoutMs,
      what,
      1000,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\nstill different:\n  ${last.slice(0, 40).join('\n  ')}`, {
      cause: error,
    });
  }
}
