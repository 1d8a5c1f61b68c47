/** @module What a bench's results file starts with: the date, the commit measured, the run's length and the machine. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';

import { ROOT } from './child.js';

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly node: string;
  readonly platform: string;
  readonly memoryBytes: number;
  readonly loadAverageStart: readonly number[];
  readonly loadAverageEnd: readonly number[];
}

export interface ResultsHeader {
  readonly date: string;
  readonly commit: string;
  readonly durationSeconds: number;
  readonly machine: Machine;
}

/** The short commit, with `+dirty` when `paths` (what the bench measures) have uncommitted changes. */
export function commitOf(paths: readonly string[]): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', ...paths], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return 'unknown';
  }
}

/**
 * The header of a run that began at `started` (`performance.now()`) with the load average
 * `loadAverageStart`; `+dirty` when `paths` have uncommitted changes.
 */
export function resultsHeader(
  started: number,
  loadAverageStart: readonly number[],
  paths: readonly string[],
): ResultsHeader {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString().slice(0, 10),
    commit: commitOf(paths),
    durationSeconds: Math.round((performance.now() - started) / 1000),
    machine: {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model.trim() ?? 'unknown',
      node: process.version,
      platform: `${os.platform()} ${os.arch()}`,
      memoryBytes: os.totalmem(),
      loadAverageStart,
      loadAverageEnd: os.loadavg(),
    },
  };
}
