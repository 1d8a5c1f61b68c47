/**
 * @module One error envelope for every non-200 answer: `{"error":{"code","message","issues"?}}`.
 * Codes form a closed set mapped to HTTP statuses by an exhaustive switch.
 */
import type { z } from 'zod';
import { MAX_ECHOED_TEXT as MAX_ECHOED_MESSAGE, boundText, formatPath, summarizeIssues } from '../k8s/index.js';

export type ErrorCode =
  | 'MalformedJson'
  | 'BadHookRequest'
  | 'PayloadTooLarge'
  | 'UnsupportedMediaType'
  | 'Unauthorized'
  | 'NotFound'
  | 'MissingRelated'
  | 'InvalidSettings'
  | 'ServerBusy'
  | 'Internal';

export interface ErrorIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

export interface ErrorBody {
  readonly error: { readonly code: ErrorCode; readonly message: string; readonly issues?: readonly ErrorIssue[] };
}

/** The HTTP status of an error code. */
export function statusOf(code: ErrorCode): 400 | 401 | 404 | 413 | 415 | 429 | 500 {
  switch (code) {
    case 'MalformedJson':
    case 'BadHookRequest':
      return 400;
    case 'Unauthorized':
      return 401;
    case 'NotFound':
      return 404;
    case 'PayloadTooLarge':
      return 413;
    case 'UnsupportedMediaType':
      return 415;
    case 'MissingRelated':
    case 'InvalidSettings':
    case 'ServerBusy':
      return 429;
    case 'Internal':
      return 500;
  }
}

/** Issues listed in a 400 body; the message counts them all. */
export const MAX_LISTED_ISSUES = 20;

/**
 * A 400 body naming the failing fields: the message names the first five and counts the rest, the
 * list holds the first {@link MAX_LISTED_ISSUES}; paths and messages are bounded, so the answer
 * stays a few KB whatever the body held.
 */
export function schemaErrorBody(error: z.ZodError): ErrorBody {
  const issues = error.issues.slice(0, MAX_LISTED_ISSUES).map((issue) => ({
    path: formatPath(issue.path),
    code: issue.code,
    message: boundText(issue.message),
  }));
  return { error: { code: 'BadHookRequest', message: summarizeIssues(error.issues), issues } };
}

/** Levels of a too-deep value's path a 400 names; the rest are `…`. */
export const MAX_NAMED_LEVELS = 12;

/**
 * The 400 body of a request nested past `limit` levels, naming where: the path of the first value
 * too deep, its first {@link MAX_NAMED_LEVELS} levels (`parent.spec.x[0][0]…`).
 */
export function tooDeepErrorBody(path: readonly PropertyKey[], limit: number): ErrorBody {
  const named = formatPath(path.slice(0, MAX_NAMED_LEVELS)) + (path.length > MAX_NAMED_LEVELS ? '…' : '');
  const message = `request nests deeper than ${limit} levels`;
  return {
    error: {
      code: 'BadHookRequest',
      message: `${named}: ${message}`,
      issues: [{ path: named, code: 'too_deep', message }],
    },
  };
}

/** An error body; the message is bounded (it may quote the request, e.g. a JSON syntax error). */
export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message: boundText(message, 4 * MAX_ECHOED_MESSAGE) } };
}
