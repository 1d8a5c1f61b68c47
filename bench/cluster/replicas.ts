/**
 * @module `bench:cluster --replicas`: how many hook server replicas the chart runs, and what each
 * replica held of the paced syncs (node-shard, scheduling-chain; docs/architecture.md#join-pacing).
 * Join pacing is a pure function of the request and its second, so any replica must hold a request
 * as the pure pace says; the proxy records each paced call with the hold that pace gives it
 * (`pacedCall`), each replica's log says what it held (`heldMs`), and `pacingReport` lines them up.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { parse } from 'yaml';

import { rfc3339Seconds } from '../../src/k8s/index.js';
import { DEFAULT_JOIN_PACING_SECONDS, HOOKS } from '../../src/server/index.js';
import type { ProxiedCall } from '../../harness/e2e/hook-proxy.js';
import { ROOT } from '../shared/child.js';

/** The chart's values, whose `server.replicas` is `--replicas`' default. */
export const CHART_VALUES = path.join(ROOT, 'charts', 'gpustack-operator', 'values.yaml');

/** The hook server replicas the chart runs (`server.replicas` of its values). */
export function chartReplicas(valuesFile = CHART_VALUES): number {
  const values = parse(readFileSync(valuesFile, 'utf8')) as { server?: { replicas?: unknown } } | null;
  const replicas = values?.server?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 1)
    throw new Error(`${valuesFile}: server.replicas is not a positive integer: ${String(replicas)}`);
  return replicas;
}

/** The paced routes, whose calls the proxy records. */
export const PACED_ROUTES = ['node-shard/sync', 'scheduling-chain/sync'] as const;

/** One paced call as the proxy saw it (a line of its `--calls` file). */
export interface PacedCall {
  readonly route: string;
  readonly parent: string;
  /** The replica that answered (index into the proxy's targets). */
  readonly upstream: number;
  /** When the proxy received the request (ISO, ms). */
  readonly received: string;
  readonly durationMs: number;
  readonly status: number;
  /**
   * The holds the pure pace gives the request at the second it came and at the next (the server
   * reads its `now` after the body: a second boundary may fall in between), seconds; 0: none.
   */
  readonly expectedHoldSeconds: readonly [number, number];
  /** The arrival that first hold is for, seconds. */
  readonly arrivalSeconds: number;
  /** Chain only: its NodeShards with an arrival, and the joining Nodes it relates. */
  readonly shardsWithArrival?: number;
  readonly joiningNodes?: number;
}

interface PacedBody {
  readonly parent?: { metadata?: { name?: string } };
  readonly children?: Record<string, Record<string, { status?: { arrival?: unknown } }>>;
  readonly related?: Record<string, Record<string, unknown>>;
}

/** A paced call as the proxy records it: its expected holds from the server's own hook table. */
export function pacedCall(call: ProxiedCall, maxHoldSeconds = DEFAULT_JOIN_PACING_SECONDS): PacedCall {
  const [controller, hook] = call.route.split('/') as ['node-shard' | 'scheduling-chain', 'sync'];
  const body = JSON.parse(call.body.toString('utf8')) as PacedBody;
  const prepared = HOOKS[controller][hook].prepare(body);
  const second = Math.floor(call.receivedMs / 1000) * 1000;
  const paceAt = (ms: number) =>
    prepared.ok ? prepared.pace(rfc3339Seconds(new Date(ms)), maxHoldSeconds) : undefined;
  const [now, next] = [paceAt(second), paceAt(second + 1000)];
  const chain =
    controller === 'scheduling-chain'
      ? {
          shardsWithArrival: Object.values(body.children ?? {})
            .flatMap((byName) => Object.values(byName))
            .filter((child) => child.status?.arrival !== undefined).length,
          joiningNodes: Object.keys(body.related?.['Node.v1'] ?? {}).length,
        }
      : {};
  return {
    route: call.route,
    parent: body.parent?.metadata?.name ?? '',
    upstream: call.upstream,
    received: new Date(call.receivedMs).toISOString(),
    durationMs: Math.round(call.durationMs),
    status: call.status,
    expectedHoldSeconds: [now?.holdSeconds ?? 0, next?.holdSeconds ?? 0],
    arrivalSeconds: now?.arrivalSeconds ?? 0,
    ...chain,
  };
}

/** A hook call as a replica logged it (its `hook` log line). */
export interface LoggedCall {
  readonly route: string;
  readonly parent: string;
  readonly heldMs: number;
  readonly status: number;
}

/** The paced calls of one replica's log (pino JSON lines, `msg: 'hook'`), in the order it answered them. */
export function loggedPacedCalls(log: string): LoggedCall[] {
  const calls: LoggedCall[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"msg":"hook"')) continue;
    const entry = JSON.parse(line) as {
      controller?: string;
      hook?: string;
      parent?: string;
      heldMs?: number;
      status?: number;
    };
    const route = `${entry.controller}/${entry.hook}`;
    if (!(PACED_ROUTES as readonly string[]).includes(route)) continue;
    calls.push({ route, parent: entry.parent ?? '', heldMs: entry.heldMs ?? 0, status: entry.status ?? 0 });
  }
  return calls;
}

/** A paced call with what its replica held. */
export interface MatchedCall extends PacedCall {
  /** What the replica held, seconds (its log line); undefined when the log has no line for it. */
  readonly heldSeconds: number | undefined;
  /** The replica held it otherwise than the pure pace says (beyond `HOLD_TOLERANCE_SECONDS`). */
  readonly disagrees: boolean;
}

/** How far a hold may be from the pure pace's and still agree: the timer, and the wait before it is set. */
export const HOLD_TOLERANCE_SECONDS = 0.5;

/**
 * Lines up the proxy's paced calls with the replicas' logs: Metacontroller never syncs one parent
 * twice at a time, so the calls of one parent on one replica come in the same order in both.
 */
export function matchCalls(calls: readonly PacedCall[], logs: readonly (readonly LoggedCall[])[]): MatchedCall[] {
  const queues = new Map<string, LoggedCall[]>();
  logs.forEach((log, replica) => {
    for (const call of log) {
      const key = `${replica} ${call.route} ${call.parent}`;
      queues.set(key, [...(queues.get(key) ?? []), call]);
    }
  });
  return calls.map((call) => {
    const logged = queues.get(`${call.upstream} ${call.route} ${call.parent}`)?.shift();
    const heldSeconds = logged === undefined ? undefined : logged.heldMs / 1000;
    const [low, high] = [Math.min(...call.expectedHoldSeconds), Math.max(...call.expectedHoldSeconds)];
    const disagrees =
      heldSeconds !== undefined &&
      call.status === 200 &&
      (heldSeconds < low - HOLD_TOLERANCE_SECONDS || heldSeconds > high + HOLD_TOLERANCE_SECONDS);
    return { ...call, heldSeconds, disagrees };
  });
}

/** Per paced route: calls, held calls and disagreements, in all and per replica. */
export interface PacingSummary {
  readonly calls: number;
  readonly held: number;
  readonly disagreements: number;
  readonly byReplica: readonly { readonly calls: number; readonly held: number }[];
}

export function pacingSummary(matched: readonly MatchedCall[], replicas: number): Record<string, PacingSummary> {
  const out: Record<string, PacingSummary> = {};
  for (const route of PACED_ROUTES) {
    const of = matched.filter((call) => call.route === route);
    const isHeld = (call: MatchedCall): boolean => (call.heldSeconds ?? 0) > 0;
    out[route] = {
      calls: of.length,
      held: of.filter(isHeld).length,
      disagreements: of.filter((call) => call.disagrees).length,
      byReplica: Array.from({ length: replicas }, (_, replica) => {
        const mine = of.filter((call) => call.upstream === replica);
        return { calls: mine.length, held: mine.filter(isHeld).length };
      }),
    };
  }
  return out;
}

/** One chain sync of an install, as `--replicas` reports it. */
export interface ChainCall {
  /** When the proxy received it, seconds after the manifests were applied. */
  readonly atSeconds: number;
  readonly replica: number;
  /** What the replica held; undefined when its log has no line for the call. */
  readonly heldSeconds: number | undefined;
  readonly expectedHoldSeconds: readonly [number, number];
  readonly durationSeconds: number;
  readonly shardsWithArrival: number;
  readonly joiningNodes: number;
  readonly disagrees: boolean;
}

/** What the replicas held of an install's paced syncs. */
export interface InstallPacing {
  readonly replicas: number;
  /** Per paced route, the calls received until convergence. */
  readonly routes: Record<string, PacingSummary>;
  /** Per paced route, the calls received after convergence, until the hooks were quiet. */
  readonly afterConvergence: Record<string, number>;
  /** Every chain sync until the hooks were quiet. */
  readonly chain: readonly ChainCall[];
}

/**
 * The install's pacing from the proxy's paced calls and each replica's log (index = replica),
 * `startMs` (manifests applied) and `convergedMs` (the poll that saw convergence), wall clock.
 */
export function installPacing(
  calls: readonly PacedCall[],
  logs: readonly string[],
  startMs: number,
  convergedMs: number,
): InstallPacing {
  const matched = matchCalls(calls, logs.map(loggedPacedCalls));
  const at = (call: PacedCall): number => Date.parse(call.received);
  const after = matched.filter((call) => at(call) > convergedMs);
  return {
    replicas: logs.length,
    routes: pacingSummary(
      matched.filter((call) => at(call) <= convergedMs),
      logs.length,
    ),
    afterConvergence: Object.fromEntries(
      PACED_ROUTES.map((route) => [route, after.filter((call) => call.route === route).length]),
    ),
    chain: matched
      .filter((call) => call.route === 'scheduling-chain/sync')
      .map((call) => ({
        atSeconds: Math.round((at(call) - startMs) / 100) / 10,
        replica: call.upstream,
        heldSeconds: call.heldSeconds,
        expectedHoldSeconds: call.expectedHoldSeconds,
        durationSeconds: Math.round(call.durationMs / 100) / 10,
        shardsWithArrival: call.shardsWithArrival ?? 0,
        joiningNodes: call.joiningNodes ?? 0,
        disagrees: call.disagrees,
      })),
  };
}

/** The table `--install` prints after its main one: the replicas, and what each held. */
export function pacingTable(
  runs: readonly { nodes: number; installSeconds: number; pacing?: InstallPacing }[],
): string {
  const lines = [
    '| Nodes | replicas | install | shard syncs (held) | chain syncs (held) | per replica: shard / chain (held) | disagreeing holds | after convergence: shard / chain |',
    '|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  for (const run of runs) {
    const pacing = run.pacing;
    if (pacing === undefined) continue;
    const shard = pacing.routes['node-shard/sync'];
    const chain = pacing.routes['scheduling-chain/sync'];
    const replicas = (shard?.byReplica ?? [])
      .map((s, i) => {
        const c = chain?.byReplica[i];
        return `#${i}: ${s.calls} (${s.held}) / ${c?.calls ?? 0} (${c?.held ?? 0})`;
      })
      .join('; ');
    lines.push(
      `| ${run.nodes.toLocaleString('en-US')} | ${pacing.replicas} | ${run.installSeconds.toFixed(1)} s | ` +
        `${shard?.calls ?? 0} (${shard?.held ?? 0}) | ${chain?.calls ?? 0} (${chain?.held ?? 0}) | ${replicas} | ` +
        `${(shard?.disagreements ?? 0) + (chain?.disagreements ?? 0)} | ` +
        `${pacing.afterConvergence['node-shard/sync'] ?? 0} / ${pacing.afterConvergence['scheduling-chain/sync'] ?? 0} |`,
    );
  }
  return lines.join('\n');
}
