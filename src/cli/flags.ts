/** @module Flag values every command parses the same way; a bad one is a UsageError naming the flag. */
import { LOG_LEVELS, isLogLevel, type LogLevel } from '../runtime/index.js';
import { isDnsLabel, isDnsSubdomain } from '../k8s/index.js';
import { UsageError } from './errors.js';

/**
 * `60s`, `5m`, `500ms`, `1h` or plain seconds, in milliseconds, at least `minMs`.
 * @example parseDuration('5m', '--interval', { minMs: 1000 }) // 300000
 */
export function parseDuration(text: string, flag: string, options: { readonly minMs?: number } = {}): number {
  const minMs = options.minMs ?? 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match?.[2] ?? 's'] ?? 1000;
  const ms = match ? Number(match[1]) * unit : NaN;
  if (!(ms >= minMs)) {
    const what = minMs > 0 ? `a duration of at least ${minMs / 1000}s (e.g. 60s, 5m)` : 'a duration such as 20s';
    throw new UsageError(`${flag}: "${text}" is not ${what}`);
  }
  return ms;
}

export function parsePort(text: string, flag: string): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`${flag}: "${text}" is not a port number`);
  return port;
}

/** `--log-level` checked before any logger exists (pino would throw on an unknown level). */
export function parseLogLevel(text: string): LogLevel {
  if (!isLogLevel(text)) throw new UsageError(`--log-level: "${text}" must be one of ${LOG_LEVELS.join(', ')}`);
  return text;
}

/**
 * A namespace name (an RFC 1123 DNS label: lowercase alphanumerics and inner `-`, at most 63
 * characters); `flag` says where it came from.
 * @example parseNamespace('team-a', '--namespace') // 'team-a'
 */
export function parseNamespace(text: string, flag: string): string {
  if (!isDnsLabel(text))
    throw new UsageError(
      `${flag}: "${text}" is not a namespace name (lowercase letters, digits and inner '-', at most 63 characters)`,
    );
  return text;
}

/** An object name such as a Node's (an RFC 1123 DNS subdomain, at most 253 characters). */
export function parseObjectName(text: string, flag: string): string {
  if (!isDnsSubdomain(text))
    throw new UsageError(
      `${flag}: "${text}" is not a Kubernetes name (lowercase letters, digits, inner '-' and '.', at most 253 characters)`,
    );
  return text;
}
