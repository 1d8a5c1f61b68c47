/**
 * @module Naming where a schema issue is, the way a user reads it, and bounding what of the
 * received text we repeat: a 4 MB map key in a bad body must not come back as an 8 MB answer
 * (or a status condition the API server refuses to store).
 */

/** The longest path segment or schema message we repeat (longer ones are cut, their length kept). */
export const MAX_ECHOED_TEXT = 256;
/** The longest whole path we repeat. */
export const MAX_ECHOED_PATH = 1024;
/** Issues named in a one-line summary; the rest are only counted. */
export const MAX_SUMMARIZED_ISSUES = 5;

/**
 * `text` itself, or its first `max` characters followed by `…` and its full length.
 * @example boundText('x'.repeat(300), 4) // 'xxxx… (300 characters)'
 */
export function boundText(text: string, max = MAX_ECHOED_TEXT): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/**
 * Renders a schema issue path the way a user reads it: `related.Node.v1.gpu-1.metadata.labels`,
 * `items[2].metadata`; each segment and the whole are bounded by {@link boundText}.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  const text = path
    .map((p) => (typeof p === 'number' ? `[${p}]` : boundText(String(p))))
    .join('.')
    .replace(/\.\[/g, '[');
  return boundText(text, MAX_ECHOED_PATH) || '(body)';
}

/** What {@link summarizeIssues} reads of a schema issue. */
export interface IssueLike {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/**
 * One line naming the first {@link MAX_SUMMARIZED_ISSUES} issues as `path: message` (paths under
 * `root`, both bounded) and counting the rest.
 * @example summarizeIssues([{ path: ['mixedOnNode'], message: 'expected boolean' }], ['spec']) // 'spec.mixedOnNode: expected boolean'
 */
export function summarizeIssues(issues: readonly IssueLike[], root: readonly PropertyKey[] = []): string {
  const named = issues
    .slice(0, MAX_SUMMARIZED_ISSUES)
    .map((issue) => `${formatPath([...root, ...issue.path])}: ${boundText(issue.message)}`)
    .join('; ');
  const more = issues.length - MAX_SUMMARIZED_ISSUES;
  return more > 0 ? `${named}; and ${more} more` : named;
}
