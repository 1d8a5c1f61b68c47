/** @module The detection flags `agent` and `detect` share: which manufacturers, which host root. */
import { statSync } from 'node:fs';
import path from 'node:path';
import { detectIsolated, type DetectResult } from '../../native/index.js';
import { MANUFACTURER_NAMES, type ManufacturerName } from '../k8s/index.js';
import { UsageError } from './errors.js';

/** `--manufacturers nvidia,amd`: known names only; absent = all. */
function parseManufacturers(text: string | undefined): ManufacturerName[] | undefined {
  if (text === undefined) return undefined;
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(MANUFACTURER_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0)
    throw new UsageError(`--manufacturers: unknown ${unknown.join(', ')}; known: ${MANUFACTURER_NAMES.join(', ')}`);
  return names as ManufacturerName[];
}

/**
 * An existing directory, made absolute; '' stays '' (this process's own root). A missing one is
 * a path that is not there, like a missing input file: one line and exit 1, not a usage error.
 */
function parseHostRoot(text: string): string {
  if (text === '') return '';
  const root = path.resolve(text);
  let why: string;
  try {
    if (statSync(root).isDirectory()) return root;
    why = 'not a directory';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    why = code === 'ENOENT' ? 'no such directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
  }
  throw new Error(`--host-root ${text}: ${why}`);
}

/** The detection `--manufacturers` and `--host-root` ask for, each run in a child process. */
export function detectFor(values: {
  manufacturers?: string | undefined;
  'host-root': string;
}): () => Promise<DetectResult> {
  const manufacturers = parseManufacturers(values.manufacturers);
  const hostRoot = parseHostRoot(values['host-root']);
  // In a child process: a corrupted vendor library that kills it costs that vendor's cards, not the agent.
  return () => detectIsolated({ manufacturers, hostRoot });
}
