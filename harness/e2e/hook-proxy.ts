/**
 * @module A pass-through HTTP proxy between Metacontroller and our server that records the body size
 * of every hook request per route (`/hooks/<controller>/<hook>`), and with `keepBodies` the last
 * body: what Metacontroller sends, measured the same way whatever release of the server is behind
 * it (bench:cluster's request sizes, the shards e2e's count of objects in the chain's request).
 */
import http from 'node:http';

export interface RequestSizes {
  readonly count: number;
  readonly totalBytes: number;
  readonly maxBytes: number;
}

export interface HookProxy {
  readonly url: string;
  /** Sizes per route since the proxy started (a copy). */
  sizes(): Record<string, RequestSizes>;
  /** The largest request per route since the last call (or the start), then starts a new window. */
  takeMax(): Record<string, number>;
  /** The last request body of a route, parsed (only with `keepBodies`). */
  lastBody(route: string): unknown;
  close(): Promise<void>;
}

/** Starts the proxy on 127.0.0.1 (`port`, or a free one), forwarding to `target` (`http://127.0.0.1:<port>`). */
export async function startHookProxy(
  target: string,
  options: { keepBodies?: boolean; port?: number } = {},
): Promise<HookProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const sizes = new Map<string, { count: number; totalBytes: number; maxBytes: number }>();
  let windowMax = new Map<string, number>();
  const bodies = new Map<string, Buffer>();
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '').replace(/^\/hooks\//, '').replace(/\?.*$/, '');
    let bytes = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (options.keepBodies) chunks.push(chunk);
    });
    req.on('end', () => {
      if (options.keepBodies) bodies.set(route, Buffer.concat(chunks));
      const entry = sizes.get(route) ?? { count: 0, totalBytes: 0, maxBytes: 0 };
      entry.count++;
      entry.totalBytes += bytes;
      entry.maxBytes = Math.max(entry.maxBytes, bytes);
      sizes.set(route, entry);
      windowMax.set(route, Math.max(windowMax.get(route) ?? 0, bytes));
    });
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(error));
    });
    req.pipe(forward);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    sizes: () => Object.fromEntries([...sizes].map(([route, entry]) => [route, { ...entry }])),
    lastBody: (route) => {
      const body = bodies.get(route);
      return body === undefined ? undefined : (JSON.parse(body.toString('utf8')) as unknown);
    },
    takeMax: () => {
      const out = Object.fromEntries(windowMax);
      windowMax = new Map();
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Per route: requests and the largest one in the window between two `sizes()` readings. */
export function sizesBetween(
  before: Record<string, RequestSizes>,
  after: Record<string, RequestSizes>,
): Record<string, { count: number; meanBytes: number }> {
  const out: Record<string, { count: number; meanBytes: number }> = {};
  for (const [route, entry] of Object.entries(after)) {
    const was = before[route] ?? { count: 0, totalBytes: 0, maxBytes: 0 };
    const count = entry.count - was.count;
    if (count > 0) out[route] = { count, meanBytes: Math.round((entry.totalBytes - was.totalBytes) / count) };
  }
  return out;
}
