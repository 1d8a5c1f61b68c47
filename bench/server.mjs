// The hook server as its own process, built from dist/ the way the image runs it (no TypeScript
// loader in the process, so its memory is the server's own): for the load test and the memory
// probe. Prints {"port":N} and serves on 127.0.0.1 until SIGTERM. `npm run build` first.
//   POST /bench/bare        answers {} without reading the body (the framework's ceiling)
//   POST /bench/bare-parse  reads and JSON.parses the body, answers {} (ceiling of any JSON hook)
//   GET  /bench/memory      peak RSS of this process so far
import process from 'node:process';
import v8 from 'node:v8';

import { serve } from '@hono/node-server';

import { createApp } from '../dist/src/server/index.js';

const app = createApp();
app.post('/bench/bare', (c) => c.json({}));
app.post('/bench/bare-parse', async (c) => c.json(JSON.parse(await c.req.text()) ? {} : {}));
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
