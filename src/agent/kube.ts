/**
 * @module The agent's API-server access: credentials from @kubernetes/client-node's KubeConfig
 * (in-cluster or KUBECONFIG), requests made here so every patch carries an explicit content
 * type (client-node's generated patch calls fail with 415 without one).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(readonly status: number, readonly method: string, readonly path: string, body: string) {
    super(`${method} ${path}: HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

export type PatchType = 'application/merge-patch+json' | 'application/apply-patch+yaml';

export interface KubeApi {
  /** GET a path; `undefined` on 404. */
  get(path: string): Promise<unknown>;
  patch(path: string, body: unknown, contentType: PatchType): Promise<unknown>;
}

/** Loads the kube config: an explicit file, else KUBECONFIG / ~/.kube/config / in-cluster. */
export function loadKubeConfig(file?: string): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error('no Kubernetes cluster configured: set KUBECONFIG or run in a Pod');
  return kc;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** A small client over the current cluster of `kc`. */
export function createKubeApi(kc: KubeConfig): KubeApi {
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  async function call(method: string, path: string, body?: string, contentType?: string): Promise<unknown> {
    const options: RequestOptions = { method, headers: { accept: 'application/json' }, timeout: REQUEST_TIMEOUT_MS };
    await kc.applyToHTTPSOptions(options);
    if (contentType) options.headers = { ...options.headers, 'content-type': contentType };
    // Keep a path prefix of the server URL (`https://rancher/k8s/clusters/c-1`): `new URL('/api/…', server)` would drop it.
    const url = new URL(`${server.pathname.replace(/\/+$/, '')}${path}`, server);
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    if (url.protocol === 'http:') delete options.agent;
    return new Promise((resolve, reject) => {
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (method === 'GET' && status === 404) return resolve(undefined);
          if (status < 200 || status >= 300) return reject(new ApiError(status, method, path, text));
          try { resolve(text ? JSON.parse(text) : undefined); } catch { reject(new ApiError(status, method, path, `not JSON: ${text}`)); }
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timed out after ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
  return {
    get: (path) => call('GET', path),
    patch: (path, body, contentType) => call('PATCH', path, JSON.stringify(body), contentType),
  };
}
