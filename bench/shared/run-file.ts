/**
 * @module A bench's raw run file: JSON, gzipped when its name ends in `.gz`. The raw runs kept in
 * bench/results are gzipped (a run at 10,000 Nodes is thousands of lines); bench/RESULTS.md holds
 * the tables made from them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';

/** Writes `value` as indented JSON to `file`, gzipped when `file` ends in `.gz`. */
export function writeRunFile(file: string, value: unknown): void {
  const text = `${JSON.stringify(value, null, 2)}\n`;
  writeFileSync(file, file.endsWith('.gz') ? gzipSync(text, { level: 9 }) : text);
}

/** Reads a run file written by {@link writeRunFile} (or by hand). */
export function readRunFile(file: string): unknown {
  const bytes = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
}
