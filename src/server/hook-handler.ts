/**
 * @module Answering one hook call: read, parse and check the body, run the pure sync function,
 * serialise the answer; a paced sync held in between (src/server/join-pacing.ts).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Context } from 'hono';
import { DNS_SUBDOMAIN_MAX, boundText, canonicalize, pathPastDepth } from '../k8s/index.js';
import { sendError, type AppEnv, type CallRecord } from './app-env.js';
import { errorBody, schemaErrorBody, tooDeepErrorBody } from './errors.js';
import type { HookDefinition, PreparedHook } from './hooks.js';
import type { JoinPacing } from './join-pacing.js';
import { MAX_BODY_DEPTH, SERIAL_ABOVE_CHARACTERS } from './limits.js';
import type { HookMetrics } from './metrics.js';
import type { RequestTime } from './request-time.js';
import type { Serial } from './serial.js';

function parentNameOf(body: unknown): string | undefined {
  const name = (body as { parent?: { metadata?: { name?: unknown } } } | null)?.parent?.metadata?.name;
  return typeof name === 'string' ? name : undefined;
}

function countChildren(response: object, record: CallRecord, metrics: HookMetrics | undefined): void {
  const list =
    (response as { children?: unknown[]; attachments?: unknown[] }).children ??
    (response as { attachments?: unknown[] }).attachments;
  if (!Array.isArray(list)) return;
  record.children = list.length;
  if (metrics === undefined) return;
  // One increment per kind, not per child: a counter hashes its labels on every call.
  const kinds = new Map<string, number>();
  for (const child of list) {
    const kind = String((child as { kind?: unknown }).kind);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  for (const [kind, count] of kinds) metrics.children.inc({ controller: record.controller, kind }, count);
}

/** What answering a hook takes besides the call: the hook, the request time, and a turn before each phase. */
interface HookRun {
  readonly definition: HookDefinition;
  readonly time: RequestTime;
  readonly metrics: HookMetrics | undefined;
  readonly turn: () => Promise<void>;
}

export type HookHandler = (c: Context<AppEnv>, call: CallRecord) => Promise<Response>;

export function handleHook(
  definition: HookDefinition,
  time: RequestTime,
  metrics: HookMetrics | undefined,
  processing: Serial,
  pacing: JoinPacing | undefined,
): HookHandler {
  /** Answers one call; what the log line reports of it (parent, children) goes into `call`. */
  return async function hookHandler(c: Context<AppEnv>, call: CallRecord): Promise<Response> {
    // When the hook timeout started counting, as near as this server can tell: a hold ends before it runs out.
    const received = pacing?.clock() ?? 0;
    let text: string;
    try {
      text = await c.req.text(); // I/O: bodies are read side by side
    } catch (error) {
      return sendError(
        c,
        'MalformedJson',
        errorBody('MalformedJson', `request body is unreadable: ${(error as Error).message}`),
      );
    }
    // A big body is handled one at a time, with a turn of the event loop before each phase
    // (/healthz and the other connections go first); a small one at once: it takes milliseconds.
    const big = text.length > SERIAL_ABOVE_CHARACTERS;
    const turn = big ? () => nextTurn() : async () => {};
    const run: HookRun = { definition, time, metrics, turn };
    const inTurn = <T>(task: () => Promise<T>): Promise<T> => (big ? processing.run(task) : task());
    const first = await inTurn(async () => {
      const prepared = await prepareHook(c, call, text, run);
      if (prepared instanceof Response) return prepared;
      const holdMs = pacing ? pacing.holdMs(prepared.pace(time.now(), pacing.maxHoldSeconds), received) : 0;
      if (pacing === undefined || holdMs === 0) return answerHook(c, call, prepared, run);
      return { prepared, holdMs, pacing };
    });
    if (first instanceof Response) return first;
    // A paced sync waits outside the one-at-a-time queue: the others go on meanwhile.
    call.heldMs = Math.round(await first.pacing.hold(first.holdMs));
    return inTurn(() => answerHook(c, call, first.prepared, run));
  };
}

/** Parses and checks one hook body: the hook's runner bound to it, or the error answer. */
async function prepareHook(
  c: Context<AppEnv>,
  call: CallRecord,
  text: string,
  run: HookRun,
): Promise<Response | Extract<PreparedHook, { ok: true }>> {
  await run.turn();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return sendError(
      c,
      'MalformedJson',
      errorBody('MalformedJson', `request body is not JSON: ${(error as Error).message}`),
    );
  }
  // Every part bounded at once, before anything walks it. JSON.parse is iterative: 100,000 levels
  // cost it about what a flat body of as many arrays does.
  const tooDeep = pathPastDepth(body, MAX_BODY_DEPTH);
  if (tooDeep !== undefined) return sendError(c, 'BadHookRequest', tooDeepErrorBody(tooDeep, MAX_BODY_DEPTH));
  const parent = parentNameOf(body);
  // Bounded: the log line must not grow with a hostile name (a real one is at most 253 characters).
  if (parent !== undefined) call.parent = boundText(parent, DNS_SUBDOMAIN_MAX);
  await run.turn();
  const prepared = run.definition.prepare(body);
  if (!prepared.ok) return sendError(c, 'BadHookRequest', schemaErrorBody(prepared.error));
  return prepared;
}

/** Runs a prepared hook and serialises its answer. */
async function answerHook(
  c: Context<AppEnv>,
  call: CallRecord,
  prepared: Extract<PreparedHook, { ok: true }>,
  run: HookRun,
): Promise<Response> {
  await run.turn();
  const outcome = prepared.run({ now: run.time.now() });
  if (!outcome.ok) {
    c.header('Retry-After', String(outcome.error.retryAfterSeconds));
    return sendError(c, outcome.error.code, errorBody(outcome.error.code, outcome.error.message));
  }
  countChildren(outcome.response, call, run.metrics);
  await run.turn();
  return c.body(JSON.stringify(canonicalize(outcome.response, { keepNull: run.definition.keepNull })), 200, {
    'content-type': 'application/json',
  });
}
