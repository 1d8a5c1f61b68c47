import { LOG_LEVELS, isLogLevel, type LogLevel } from '../runtime/index.js';

/** A command line that cannot be run as given: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** `--log-level` checked before any logger exists (pino would throw on an unknown level). */
export function parseLogLevel(text: string): LogLevel {
  if (!isLogLevel(text)) throw new UsageError(`--log-level: "${text}" must be one of ${LOG_LEVELS.join(', ')}`);
  return text;
}
