/**
 * @module A pass-through HTTP proxy between Metacontroller and our server that records the body size
 * of every hook request per route (`/hooks/<controller>/<hook>`), and with `keepBodies` the last
 * body: what Metacontroller sends, measured the same way whatever release of the server is behind
 * it (bench:cluster's request sizes, the shards e2e's count of objects in the chain's request).
 * Given several servers it sends each request to the next in turn (round robin), as the chart's
 * Service spreads Metacontroller's calls over the hook server's replicas (bench:cluster --replicas),
 * and counts which replica answered each route.
 */
import http from 'node:http';

export interface RequestSizes {
  readonly count: number;
  readonly totalBytes: number;
  readonly maxBytes: number;
}

/** One proxied call, as `onCall` sees it once the answer has been sent on. */
export interface ProxiedCall {
  /** `<controller>/<hook>` */
  readonly route: string;
  /** Which of the targets answered (its index). */
  readonly upstream: number;
  /** Wall-clock time the request came in, ms since the epoch. */
  readonly receivedMs: number;
  /** Until the last byte of the answer (or the failure), ms. */
  readonly durationMs: number;
  /** The answer's status: 502 when the target failed. */
  readonly status: number;
  /** The request body. */
  readonly body: Buffer;
}

export interface HookProxyOptions {
  /** Keep the last body per route for `lastBody`. */
  readonly keepBodies?: boolean;
  /** Where to listen; a free port by default. */
  readonly port?: number;
  /** Called after every call of a route it names (`onCallRoutes`), with its body. */
  readonly onCall?: (call: ProxiedCall) => void;
  readonly onCallRoutes?: readonly string[];
}

export interface HookProxy {
  readonly url: string;
  /** Per route, how many calls each target answered (index = the target's). */
  answeredBy(): Record<string, number[]>;
  /** Sizes per route since the proxy started (a copy). */
  sizes(): Record<string, RequestSizes>;
  /** The largest request per route since the last call (or the start), then starts a new window. */
  takeMax(): Record<string, number>;
  /** The last request body of a route, parsed (only with `keepBodies`). */
  lastBody(route: string): unknown;
  close(): Promise<void>;
}

/**
 * Starts the proxy on 127.0.0.1 (`port`, or a free one), forwarding each request to the next of
 * `targets` (`http://127.0.0.1:<port>`, one or several) in turn. A target that fails (refused,
 * reset before it answered) is answered 502 with the error, as a Service with no ready endpoint
 * would: Metacontroller retries.
 */
export async function startHookProxy(
  targets: string | readonly string[],
  options: HookProxyOptions = {},
): Promise<HookProxy> {
  const upstreams = (typeof targets === 'string' ? [targets] : targets).map((target) => new URL(target));
  if (upstreams.length === 0) throw new Error('the hook proxy needs at least one target');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const sizes = new Map<string, { count: number; totalBytes: number; maxBytes: number }>();
  const answered = new Map<string, number[]>();
  let windowMax = new Map<string, number>();
  const bodies = new Map<string, Buffer>();
  const observed = new Set(options.onCallRoutes ?? []);
  let turn = 0;
  const server = http.createServer((req, res) => {
    const route = (req.url ?? '').replace(/^\/hooks\//, '').replace(/\?.*$/, '');
    const index = turn;
    turn = (turn + 1) % upstreams.length;
    const upstream = upstreams[index] as URL;
    const receivedMs = Date.now();
    const started = performance.now();
    const keep = options.keepBodies === true || observed.has(route);
    let bytes = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (keep) chunks.push(chunk);
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
    // Once the answer is sent on, or the connection to Metacontroller is gone: every call counts once.
    res.on('close', () => {
      const status = res.statusCode;
      const counts = answered.get(route) ?? upstreams.map(() => 0);
      counts[index] = (counts[index] ?? 0) + 1;
      answered.set(route, counts);
      if (options.onCall && observed.has(route))
        options.onCall({
          route,
          upstream: index,
          receivedMs,
          durationMs: performance.now() - started,
          status,
          body: Buffer.concat(chunks),
        });
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
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`hook proxy: ${upstream.host} failed: ${error.message}`);
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
    answeredBy: () => Object.fromEntries([...answered].map(([route, counts]) => [route, [...counts]])),
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
