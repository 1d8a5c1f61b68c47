// The only module that loads the compiled addon. Everything typed leaves from here; the
// untyped addon object stays inside this file.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { runIsolated } from './isolation.js';
import {
  DEVICE_ERROR_CODES,
  ADDON_MANUFACTURERS,
  type DetectOptions,
  type DetectResult,
  type DeviceErrorCode,
  type DeviceErrorEntry,
  type ManufacturerName,
} from './types.js';

export * from './types.js';

const ADDON_FILE = 'gpustack_native.node';
const ADDON_PATH_VARIABLE = 'GPUSTACK_NATIVE_ADDON';
const OPTION_KEYS = new Set(['manufacturers', 'hostRoot']);

/** A detection failure as a throwable error, for callers that treat an entry as fatal. */
export class DeviceError extends Error {
  override readonly name = 'DeviceError';
  readonly code: DeviceErrorCode;
  readonly manufacturer: ManufacturerName;

  constructor(entry: DeviceErrorEntry) {
    super(`${entry.manufacturer}: ${entry.code}: ${entry.message}`);
    this.code = entry.code;
    this.manufacturer = entry.manufacturer;
  }
}

/**
 * The compiled addon could not be loaded: from any candidate path, or from the one path
 * `GPUSTACK_NATIVE_ADDON` names (then `override` is that path and nothing else was tried).
 */
export class AddonLoadError extends Error {
  override readonly name = 'AddonLoadError';
  readonly attempts: readonly string[];
  readonly override: string | undefined;

  constructor(attempts: readonly string[], override?: string) {
    const tried = attempts.map((attempt) => `  - ${attempt}`).join('\n');
    super(
      override === undefined
        ? `cannot load the native addon ${ADDON_FILE}; tried:\n${tried}\n` +
            `build it with \`npm run build:native\` or set ${ADDON_PATH_VARIABLE} to its path`
        : `${ADDON_PATH_VARIABLE} names ${override}, which does not load:\n${tried}\n` +
            `fix the path, or unset ${ADDON_PATH_VARIABLE} to use the built addon`,
    );
    this.attempts = attempts;
    this.override = override;
  }
}

/**
 * Candidate paths of the addon, in the order they are tried: the cmake-js build folder
 * seen from native/ (sources, tests) and from dist/native/ (compiled), then a copy next to
 * this file (slim images). `GPUSTACK_NATIVE_ADDON` (relative to the working directory)
 * replaces them all: a path set on purpose that does not load is an error, never a quiet
 * fallback to another build.
 */
export function addonCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const override = env[ADDON_PATH_VARIABLE];
  if (override) return [path.resolve(override)];
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [
    path.join(here, 'build', 'Release', ADDON_FILE),
    path.join(here, '..', '..', 'native', 'build', 'Release', ADDON_FILE),
    path.join(here, ADDON_FILE),
  ];
  return [...new Set(candidates)];
}

interface RawOptions {
  manufacturers: string[];
  hostRoot: string;
  /** Internal: the descriptor the addon announces each library load on (native/detect-child.ts). */
  loadTraceFd?: number;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type RawAddon = { detect: (options: RawOptions) => Promise<any> };

function describeLoadFailure(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'MODULE_NOT_FOUND' ? 'not found' : (error.message.split('\n')[0] ?? String(error));
  }
  return String(error);
}

/**
 * @internal Loads the first candidate that works (`override`: the one path
 * `GPUSTACK_NATIVE_ADDON` names); exported for the loader tests.
 */
export function _loadAddon(candidates: readonly string[], override?: string): RawAddon {
  return loadFirst(candidates, override).addon;
}

function loadFirst(candidates: readonly string[], override?: string): { addon: RawAddon; path: string } {
  const require = createRequire(import.meta.url);
  const attempts: string[] = [];
  for (const candidate of candidates) {
    try {
      const addon = require(candidate) as Partial<RawAddon>;
      if (typeof addon.detect === 'function') return { addon: addon as RawAddon, path: candidate };
      attempts.push(`${candidate}: loaded, but exports no detect()`);
    } catch (error) {
      attempts.push(`${candidate}: ${describeLoadFailure(error)}`);
    }
  }
  throw new AddonLoadError(attempts, override);
}

let loaded: { addon: RawAddon; path: string } | undefined;

/** The addon, and the file it came from (the child of detectIsolated() loads the same one). */
function loadedAddon(): { addon: RawAddon; path: string } {
  if (loaded === undefined) {
    const candidates = addonCandidates();
    loaded = loadFirst(candidates, process.env[ADDON_PATH_VARIABLE] ? candidates[0] : undefined);
  }
  return loaded;
}

const addon = (): RawAddon => loadedAddon().addon;

function validateManufacturers(value: unknown): ManufacturerName[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`options.manufacturers must be an array of strings, got ${typeof value}`);
  }
  return value.map((item: unknown, i) => {
    if (typeof item !== 'string') {
      throw new TypeError(`options.manufacturers[${i}] must be a string, got ${typeof item}`);
    }
    if (!(ADDON_MANUFACTURERS as readonly string[]).includes(item)) {
      throw new RangeError(
        `options.manufacturers[${i}] is "${item}", expected one of ${ADDON_MANUFACTURERS.join(', ')}`,
      );
    }
    return item as ManufacturerName;
  });
}

/** `''` or an absolute path, normalised: no trailing slash, and `/` is the process's own root. */
function validateHostRoot(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new TypeError(`options.hostRoot must be a string, got ${typeof value}`);
  if (value.includes('\0')) throw new TypeError('options.hostRoot must not contain NUL');
  if (value === '') return '';
  if (!path.isAbsolute(value)) {
    throw new RangeError(`options.hostRoot is "${value}", expected an absolute path or "" (this process's root)`);
  }
  const normalised = path.resolve(value);
  return normalised === '/' ? '' : normalised;
}

function validateOptions(options: unknown): RawOptions {
  if (options === undefined) return { manufacturers: [...ADDON_MANUFACTURERS], hostRoot: '' };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError('options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) {
      throw new TypeError(`unknown option "${key}" (known: ${[...OPTION_KEYS].join(', ')})`);
    }
  }
  const { manufacturers, hostRoot } = options as { manufacturers?: unknown; hostRoot?: unknown };
  return {
    manufacturers: manufacturers === undefined ? [...ADDON_MANUFACTURERS] : validateManufacturers(manufacturers),
    hostRoot: validateHostRoot(hostRoot),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function checkResult(raw: any): DetectResult {
  const codes: readonly string[] = DEVICE_ERROR_CODES;
  const ok =
    raw !== null &&
    typeof raw === 'object' &&
    Array.isArray(raw.devices) &&
    Array.isArray(raw.errors) &&
    raw.errors.every((e: { code?: unknown }) => typeof e.code === 'string' && codes.includes(e.code));
  if (!ok) throw new TypeError('native addon returned a malformed DetectResult');
  return raw as DetectResult;
}

/**
 * Asks the vendor runtime libraries which accelerators this node has, in this process. Runs
 * off the main thread; never rejects for a missing driver (that is a `LibraryNotFound` entry)
 * or a cut or malformed library file (`InvalidLibrary`). A full-length library with garbage
 * inside can still kill this process: long-lived callers use detectIsolated(), which runs this
 * in a child process. The library of each manufacturer is opened
 * and closed within the call, so a changed `GPUSTACK_<MFR>_LIBRARY` (full path of the
 * vendor library, e.g. `GPUSTACK_NVIDIA_LIBRARY`) or driver is seen by the next call.
 * `GPUSTACK_SYSFS_ROOT` (default `/sys`) is where NUMA nodes are looked up when the
 * library does not say.
 * @example
 * const { devices, errors } = await detect({ manufacturers: ['nvidia'], hostRoot: '/host' });
 */
export async function detect(options?: DetectOptions): Promise<DetectResult> {
  return checkResult(await addon().detect(validateOptions(options)));
}

/** @internal The detection of native/detect-child.ts: announces each library load on `loadTraceFd`. */
export async function _detectInChild(options: unknown, loadTraceFd: number): Promise<DetectResult> {
  return checkResult(await addon().detect({ ...validateOptions(options), loadTraceFd }));
}

export interface IsolationOptions {
  /**
   * How long a library may take, from the start of its load to the end of its manufacturer's
   * detection, before the child process is killed and the manufacturer gets a `CallFailed` entry.
   * @default 60000
   */
  readonly timeoutMs?: number;
}

/** Node's arguments that start native/detect-child: the compiled file, or the source through tsx (tests, bench). */
function childCommand(): string[] {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return [path.join(path.dirname(here), 'detect-child.js')];
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return ['--import', tsx, path.join(path.dirname(here), 'detect-child.ts')];
}

/**
 * detect() in a child process (`process.execPath` on native/detect-child), so that a vendor
 * library that crashes the loader or its first call (a full-length file with garbage inside:
 * SIGSEGV), calls exit() or hangs costs its manufacturer an entry, not this process: an
 * `InvalidLibrary` entry naming the library and the signal or exit code, or `CallFailed` after
 * `timeoutMs` without an answer; the other manufacturers are still detected. Same results as
 * detect() otherwise. Costs a Node start per call (far more CPU and memory than detect() in
 * process: bench/detect/detect.ts measures both), and one more for each manufacturer that kills its
 * child. Rejects as detect() does (AddonLoadError, bad options), and when a child fails before
 * loading any vendor library.
 * @example
 * const { devices, errors } = await detectIsolated({ hostRoot: '/host' });
 */
export async function detectIsolated(options?: DetectOptions, isolation: IsolationOptions = {}): Promise<DetectResult> {
  const raw = validateOptions(options);
  // Loaded here too: a broken addon is an AddonLoadError here as in detect(), and the child loads this same file.
  const { path: addonPath } = loadedAddon();
  return runIsolated({
    manufacturers: ADDON_MANUFACTURERS.filter((name) => raw.manufacturers.includes(name)),
    hostRoot: raw.hostRoot,
    command: childCommand(),
    env: { ...process.env, [ADDON_PATH_VARIABLE]: addonPath },
    timeoutMs: isolation.timeoutMs ?? 60_000,
    check: checkResult,
  });
}
