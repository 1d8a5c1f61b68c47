/**
 * The logging surface every process uses (hook server, agent, admission checker); pino's logger
 * satisfies it, tests pass a recording one. Fields first, then the message, as pino takes them.
 */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** Logs nothing: the default where a caller passes no logger. */
export const SILENT_LOGGER: Logger = { info: () => {}, warn: () => {}, error: () => {} };
