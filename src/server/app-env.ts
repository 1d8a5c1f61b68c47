/** @module What the app's parts share: the hono environment, a call's log record, an error answer. */
import type { Context } from 'hono';
import { statusOf, errorBody, type ErrorBody, type ErrorCode } from './errors.js';

/** The error a call answered with, for its log line. */
export type AppEnv = { Variables: { problem: { readonly code: ErrorCode; readonly message: string } } };

/** What a hook call's log line reports besides its status and duration. */
export interface CallRecord {
  readonly controller: string;
  readonly hook: string;
  parent?: string;
  children?: number;
  /** How long a paced sync (a shard's, the chain's) was held before it was answered. */
  heldMs?: number;
}

/** An error answer; its code and (bounded) message also go to the call's log line, so a 400 says why. */
export function sendError(c: Context<AppEnv>, code: ErrorCode, body: ErrorBody = errorBody(code, code)): Response {
  c.set('problem', { code: body.error.code, message: body.error.message });
  return c.json(body, statusOf(code));
}
