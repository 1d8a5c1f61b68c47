/** @module The bench driver's command line and what it reads of other processes (/proc). */
import { readFileSync } from 'node:fs';

/** `--name=value` of the command line, or `fallback`. */
export function option(name: string, fallback: string): string {
  const prefix = `--${name}=`;
  return (
    process.argv
      .slice(2)
      .find((a) => a.startsWith(prefix))
      ?.slice(prefix.length) ?? fallback
  );
}

/** `--name value` or `--name=value` of the command line; undefined when absent. */
export function argument(name: string): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (at < 0) return undefined;
  const arg = args[at] as string;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : args[at + 1];
}

/** A log function that writes `[bench:<tag> hh:mm:ss] message` to stderr (stdout is the result). */
export function logger(tag: string): (message: string) => void {
  return (message) => process.stderr.write(`[bench:${tag} ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export interface ProcessUse {
  /** User + system, all threads. */
  readonly cpuSeconds: number;
  readonly rssMB: number;
  /** VmHWM: the largest RSS of the process's life. */
  readonly peakRssMB: number;
}

/** CPU seconds, RSS and peak RSS of a live process, from /proc; throws when there is no such process. */
export function processUse(pid: number): ProcessUse {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5) (utime, stime), counted from the state field (3).
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { cpuSeconds: ticks / 100, rssMB: kb('VmRSS') / 1024, peakRssMB: kb('VmHWM') / 1024 };
}
