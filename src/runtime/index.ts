/**
 * @module src/runtime: plumbing the long-running processes share (hook server, agent, admission
 * checker, API client): the logger surface, backoff and an abortable sleep. Imports nothing from
 * src/; the pure folders never import it.
 */
export { SILENT_LOGGER, type Logger } from './logger.js';
export { backoffMs, jittered, retryAfterMsOf, retryDelayMs, sleep, type BackoffOptions } from './backoff.js';
export { counterOn, createRegistry, secondsOn, sendMetrics } from './metrics.js';
export {
  LOG_LEVELS,
  createProcessLogger,
  isLogLevel,
  readableLine,
  type LogLevel,
  type ProcessLoggerOptions,
} from './process-logger.js';
