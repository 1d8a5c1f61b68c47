// The hook server as its own process, built from dist/ the way the image runs it (no TypeScript
// loader in the process, so its memory is the server's own): for the load test and the memory
// probe. Prints {"port":N} and serves on 127.0.0.1 until SIGTERM. `npm run build` first.
// Built as `serve` builds it: the process logger at info (one JSON line per hook call on stdout) and
// the metrics with Node's default ones; BENCH_SERVER_LOG=<level> and BENCH_SERVER_METRICS=0 change
// that, to measure what each costs.
//   POST /bench/bare        answers {} without reading the body (the framework's ceiling)
//   PUT  /bench/floor-response/<hook path>  stores the answer the floor route gives for that hook
//   POST /bench/floor/<hook path>  reads and JSON.parses the body, answers JSON.stringify of that
//                           stored answer (the hook's floor: same body in, same response out)
//   GET  /bench/memory      peak RSS of this process so far
import process from 'node:process';
import v8 from 'node:v8';

import { serve } from '@hono/node-server';

import { createProcessLogger } from '../../dist/src/runtime/index.js';
import { createApp, createMetrics } from '../../dist/src/server/index.js';

const app = createApp({
  logger: createProcessLogger({ level: process.env.BENCH_SERVER_LOG ?? 'info', readable: false }),
  ...(process.env.BENCH_SERVER_METRICS === '0' ? {} : { metrics: createMetrics({ defaultMetrics: true }) }),
});
app.post('/bench/bare', (c) => c.json({}));
const floorResponses = new Map();
app.put('/bench/floor-response/*', async (c) => {
  floorResponses.set(c.req.path.slice('/bench/floor-response'.length), JSON.parse(await c.req.text()));
  return c.body(null, 204);
});
app.post('/bench/floor/*', async (c) => {
  const body = JSON.parse(await c.req.text());
  const response = floorResponses.get(c.req.path.slice('/bench/floor'.length));
  return c.body(JSON.stringify(body ? response : undefined), 200, { 'content-type': 'application/json' });
});
app.get('/bench/memory', (c) =>
  c.json({
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    rssBytes: process.memoryUsage().rss,
    heapUsedBytes: v8.getHeapStatistics().used_heap_size,
  }),
);
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  // Samples of the big sizes are seconds apart; the default 5 s keep-alive would race the next request.
  server.keepAliveTimeout = 10 * 60 * 1000;
  process.stdout.write(`${JSON.stringify({ port: info.port })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
