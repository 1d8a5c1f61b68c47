import { Writable } from 'node:stream';
import { pino, type Logger as PinoLogger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(text: string): text is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(text);
}

const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as a person reads it: `12:00:01 INFO  hook controller=node-profile status=200`. */
export function readableLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { level, time, msg, ...fields } = record;
  const clock = typeof time === 'number' ? new Date(time).toISOString().slice(11, 19) : '--:--:--';
  const name = (LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5);
  const rest = Object.entries(fields).map(([key, value]) =>
    typeof value === 'string' && !/\s/.test(value) ? `${key}=${value}` : `${key}=${JSON.stringify(value)}`,
  );
  return [clock, name, String(msg ?? ''), ...rest].join(' ');
}

function readableStream(target: NodeJS.WritableStream): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) target.write(`${readableLine(line)}\n`);
      done();
    },
  });
}

export interface ProcessLoggerOptions {
  readonly level: LogLevel;
  /** Warnings and errors to stderr, the rest to stdout (the checker: verdicts on stdout). @default everything to stdout */
  readonly splitErrors?: boolean;
  /** @default process.stderr.isTTY */
  readonly readable?: boolean;
}

/**
 * Bytes of JSON lines gathered before one write to stdout. The hook server logs a line per call,
 * and every write goes through libuv's thread pool: a write per line would cost a small call a
 * good part of its CPU. Gathered, many lines share one write.
 */
export const LOG_BUFFER_BYTES = 4096;
/** Longest a gathered line waits when traffic is low; a warning or an error is written at once. */
export const LOG_FLUSH_MS = 1000;
const WARN_LEVEL = 40;

/**
 * The logger of a long-running process: one JSON object per line (for a log pipeline), or readable
 * lines on stderr when a person is watching (stderr is a terminal).
 */
export function createProcessLogger(options: ProcessLoggerOptions): PinoLogger {
  const base = { level: options.level, base: null };
  if (options.readable ?? process.stderr.isTTY === true) return pino(base, readableStream(process.stderr));
  if (!options.splitErrors) {
    // pino flushes what is gathered when the process exits (its own exit handler).
    const destination = pino.destination({ dest: 1, minLength: LOG_BUFFER_BYTES });
    setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
    return pino(
      {
        ...base,
        hooks: {
          logMethod(args, method, level) {
            method.apply(this, args);
            if (level >= WARN_LEVEL) destination.flush();
          },
        },
      },
      destination,
    );
  }
  const streams = pino.multistream(
    [
      { level: 'trace', stream: process.stdout },
      { level: 'warn', stream: process.stderr },
    ],
    { dedupe: true },
  );
  return pino(base, streams);
}
