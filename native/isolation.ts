/**
 * @module Detection in a child process, so that a vendor library that kills the process costs
 * its manufacturer an error entry, not the caller. The CheckSharedObject test catches cut files;
 * a full-length library with garbage inside passes it and can still crash the loader or its
 * first call (SIGSEGV), call exit() or hang. The agent is the one process on every GPU node: a
 * broken driver install must cost that vendor's cards, not the agent.
 *
 * One child detects the manufacturers one after another (native/detect-child.ts) and reports
 * on its fd 3, in NUL-terminated records: `L<library>` just before each dlopen() (written by the
 * addon, unbuffered, so it is out before a crash) and `R<DetectResult JSON>` after each
 * manufacturer. When the child dies or stops answering, the manufacturer it was on gets an
 * entry naming the library it was loading or using, and a new child goes on with the rest: one
 * child per detection normally, one more per failing manufacturer.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

import type { DetectResult, Device, DeviceErrorEntry, ManufacturerName } from './types.js';

export interface IsolatedRun {
  /** Detected in this order; each child is given the ones still to do. */
  readonly manufacturers: readonly ManufacturerName[];
  readonly hostRoot: string;
  /** Node's arguments that start the child (its entry file, a loader); the request is appended as JSON. */
  readonly command: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** How long the child may go without a record: from a library load or a result to the next (the first: at least START_MS). */
  readonly timeoutMs: number;
  /** Validates one manufacturer's result; throws on a malformed one. */
  readonly check: (raw: unknown) => DetectResult;
}

/** Node's start and the addon's load come before the first record: on a busy node, seconds. */
const START_MS = 30_000;
/** After the child's exit, what it wrote is read for this long; a process it left behind may hold the pipe. */
const DRAIN_MS = 1000;
const REPORT_FD = 3;

type End = { readonly code: number | null; readonly signal: NodeJS.Signals | null } | 'timeout';

interface ChildOutcome {
  readonly results: readonly DetectResult[];
  /** The last library announced after the last result: what the child was loading or using. */
  readonly library: string | undefined;
  readonly end: End;
}

function runChild(run: IsolatedRun, manufacturers: readonly ManufacturerName[]): Promise<ChildOutcome> {
  const request = JSON.stringify({ manufacturers, hostRoot: run.hostRoot });
  // The child's stdout goes to this process's stderr: a vendor library's chatter must not land
  // in `detect -o json`'s output or between the agent's log lines.
  const child = spawn(process.execPath, [...run.command, request], {
    env: run.env,
    stdio: ['ignore', 2, 'inherit', 'pipe'],
  });
  const reports = child.stdio[REPORT_FD] as Readable;
  const results: DetectResult[] = [];
  let library: string | undefined;
  let buffered = Buffer.alloc(0);
  let timer: NodeJS.Timeout | undefined;

  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: ChildOutcome | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const arm = (ms: number): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        // Resolved at once, and let go: a child stuck in the kernel (a hung driver) may never exit.
        child.kill('SIGKILL');
        child.unref();
        reports.destroy();
        settle({ results, library, end: 'timeout' });
      }, ms);
    };
    arm(Math.max(run.timeoutMs, START_MS));

    reports.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      try {
        for (let end = buffered.indexOf(0); end >= 0; end = buffered.indexOf(0)) {
          const record = buffered.subarray(0, end).toString('utf8');
          buffered = buffered.subarray(end + 1);
          if (record.startsWith('L')) {
            library = record.slice(1);
          } else if (record.startsWith('R')) {
            results.push(run.check(JSON.parse(record.slice(1))));
            library = undefined;
          } else {
            throw new TypeError(`unexpected record from the detection process: ${JSON.stringify(record.slice(0, 80))}`);
          }
          arm(run.timeoutMs);
        }
      } catch (error) {
        child.kill('SIGKILL');
        settle(error as Error);
      }
    });
    reports.on('error', () => undefined); // a destroyed pipe; the exit says what happened
    child.on('error', (error) => settle(error));
    child.on('exit', () => {
      clearTimeout(timer);
      setTimeout(() => reports.destroy(), DRAIN_MS).unref();
    });
    child.on('close', (code, signal) => settle({ results, library, end: { code, signal } }));
  });
}

function describeEnd(end: End, timeoutMs: number): string {
  if (end === 'timeout') return `gave no answer within ${timeoutMs / 1000} s and was killed`;
  return end.signal !== null ? `was killed by ${end.signal}` : `exited with code ${end.code}`;
}

/**
 * The entry of the manufacturer a child failed on. A crash or exit while a library was being
 * loaded or used is that library's doing (`InvalidLibrary`); a hang may be the driver or the
 * card as well (`CallFailed`). A failure with no library loaded is not a vendor's: it throws.
 */
function failureEntry(manufacturer: ManufacturerName, outcome: ChildOutcome, timeoutMs: number): DeviceErrorEntry {
  const what = `the detection process ${describeEnd(outcome.end, timeoutMs)}`;
  if (outcome.library === undefined) {
    throw new Error(`detecting ${manufacturer}: ${what} before it loaded a library`);
  }
  return outcome.end === 'timeout'
    ? { manufacturer, code: 'CallFailed', message: `${outcome.library}: ${what} while using this library` }
    : {
        manufacturer,
        code: 'InvalidLibrary',
        message: `${outcome.library}: ${what} while loading or using this library (a damaged file? reinstall the driver)`,
      };
}

/**
 * Detects `run.manufacturers` in child processes: the results of those that worked, in order, and
 * one error entry for each that killed or hung its child. Rejects when a child fails without a
 * library to blame (it could not start, say), or reports garbage.
 */
export async function runIsolated(run: IsolatedRun): Promise<DetectResult> {
  const devices: Device[] = [];
  const errors: DeviceErrorEntry[] = [];
  let pending = [...run.manufacturers];
  while (pending.length > 0) {
    const outcome = await runChild(run, pending);
    const done = outcome.results.slice(0, pending.length);
    for (const result of done) {
      devices.push(...result.devices);
      errors.push(...result.errors);
    }
    const [failed, ...rest] = pending.slice(done.length);
    if (failed === undefined) break;
    errors.push(failureEntry(failed, outcome, run.timeoutMs));
    pending = rest;
  }
  return { devices, errors };
}
