/**
 * @module Profiling aid: the hook server's own CPU time per request (read from /proc, user +
 * system, all its threads) under the load test's load (autocannon, one keep-alive connection), for
 * a hook and its floor route, and for several builds of the server side by side, round after
 * round. CPU per request is what a one-connection rps ratio is made of on the server side, and it
 * is steadier than rps on a shared machine. Linux only; `npm run build` first.
 * `tsx bench/hooks/server-cpu.ts [--hook=node-profile/sync] [--seconds=3] [--rounds=3] [--server=<server.mjs>…]`
 * (default: this tree's bench/shared/server.mjs; give another tree's to compare builds).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import autocannon from 'autocannon';

import { BENCH_DIR, SERVER_V8_FLAGS } from '../shared/child.js';
import { generateCluster, type HookName } from '../shared/cluster.js';
import { quantile } from '../shared/stats.js';

const args = process.argv.slice(2);
const option = (name: string): string[] =>
  args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
const hook = (option('hook')[0] ?? 'node-profile/sync') as HookName;
const seconds = Number(option('seconds')[0] ?? 3);
const rounds = Number(option('rounds')[0] ?? 3);
const servers = option('server');
if (servers.length === 0) servers.push(path.join(BENCH_DIR, 'shared', 'server.mjs'));
const env = Object.fromEntries(option('env').map((kv) => kv.split('=', 2) as [string, string]));
const body = generateCluster(100).bodies[hook];
const TICK_US = 1e6 / 100; // USER_HZ

function cpuUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

interface Running {
  readonly pid: number;
  readonly port: number;
  stop(): void;
}

async function start(script: string): Promise<Running> {
  const child = spawn(process.execPath, [...SERVER_V8_FLAGS, script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const port = await new Promise<number>((resolve) =>
    child.stdout.once('data', (line: Buffer) => resolve((JSON.parse(String(line)) as { port: number }).port)),
  );
  child.stdout.resume();
  return { pid: child.pid as number, port, stop: () => child.kill('SIGTERM') };
}

let current: Running | undefined;
async function hammer(port: number, route: string): Promise<{ rps: number; cpuPerRequestUs: number }> {
  const before = cpuUs((current as Running).pid);
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${route}`,
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
    connections: 1,
    duration: seconds,
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${route}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const used = cpuUs((current as Running).pid) - before;
  return { rps: result.requests.total / seconds, cpuPerRequestUs: used / result.requests.total };
}

const hookPath = `/hooks/${hook}`;
const results = servers.map(() => ({ hook: [] as number[], floor: [] as number[], ratio: [] as number[] }));
const running: Running[] = [];
try {
  for (const script of servers) {
    const server = await start(script);
    running.push(server);
    const answer = await fetch(`http://127.0.0.1:${server.port}${hookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await answer.text();
    // An older build may refuse a field this tree's request has: say so (and stop every server).
    if (answer.status !== 200) throw new Error(`${script}: ${answer.status} ${text.slice(0, 300)}`);
    await fetch(`http://127.0.0.1:${server.port}/bench/floor-response${hookPath}`, { method: 'PUT', body: text });
  }
  for (let round = 0; round <= rounds; round++) {
    for (const [i, server] of running.entries()) {
      current = server;
      const floor = await hammer(server.port, `/bench/floor${hookPath}`);
      const hooked = await hammer(server.port, hookPath);
      if (round === 0) continue; // warm-up
      const r = results[i] as (typeof results)[number];
      r.hook.push(hooked.cpuPerRequestUs);
      r.floor.push(floor.cpuPerRequestUs);
      r.ratio.push(hooked.rps / floor.rps);
    }
  }
} finally {
  for (const server of running) server.stop();
}
for (const [i, script] of servers.entries()) {
  const r = results[i] as (typeof results)[number];
  const m = (values: number[]) => quantile(values, 0.5).toFixed(1);
  process.stdout.write(
    `${script}: ${hook} server CPU per request: hook ${m(r.hook)} µs, floor route ${m(r.floor)} µs; ` +
      `rps hook / floor ${quantile(r.ratio, 0.5).toFixed(2)} (medians of ${rounds} rounds)\n`,
  );
}
