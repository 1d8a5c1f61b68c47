/**
 * @module The hook server as its own process, for the load test and the memory probe:
 * `node --import tsx bench/server.ts` prints `{"port":N}` and serves until killed.
 * `GET /bench/memory` answers the peak RSS of this process (what the hook server needed).
 */
import v8 from 'node:v8';

import { createBenchApp, listen } from './http.js';

const app = createBenchApp();
app.get('/bench/memory', (c) => c.json({
  maxRssBytes: process.resourceUsage().maxRSS * 1024,
  rssBytes: process.memoryUsage().rss,
  heapUsedBytes: v8.getHeapStatistics().used_heap_size,
}));
const running = await listen(app);
process.stdout.write(`${JSON.stringify({ port: running.port })}\n`);
process.on('SIGTERM', () => void running.close().then(() => process.exit(0)));
