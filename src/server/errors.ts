/**
 * @module One error envelope for every non-200 answer: `{"error":{"code","message","issues"?}}`.
 * Codes form a closed set mapped to HTTP statuses by an exhaustive switch.
 */
import type { z } from 'zod';
import { formatPath } from '../k8s/index.js';

export type ErrorCode =
  | 'MalformedJson'
  | 'BadHookRequest'
  | 'PayloadTooLarge'
  | 'NotFound'
  | 'MissingRelated'
  | 'InvalidSettings'
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
export function statusOf(code: ErrorCode): 400 | 404 | 413 | 429 | 500 {
  switch (code) {
    case 'MalformedJson':
    case 'BadHookRequest':
      return 400;
    case 'NotFound':
      return 404;
    case 'PayloadTooLarge':
      return 413;
    case 'MissingRelated':
    case 'InvalidSettings':
      return 429;
    case 'Internal':
      return 500;
  }
}

/** A 400 body naming every failing field. */
export function schemaErrorBody(error: z.ZodError): ErrorBody {
  const issues = error.issues.map((issue) => ({
    path: formatPath(issue.path),
    code: issue.code,
    message: issue.message,
  }));
  const message =
    issues
      .slice(0, 5)
      .map((i) => `${i.path}: ${i.message}`)
      .join('; ') + (issues.length > 5 ? `; and ${issues.length - 5} more` : '');
  return { error: { code: 'BadHookRequest', message, issues } };
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}
