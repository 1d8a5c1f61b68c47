/**
 * The memory budget's inputs: the container's memory limit as cgroup v2 or v1 shows it (read from a
 * stand-in cgroup folder), and the budget it gives.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_INFLIGHT_BYTES,
  MIN_INFLIGHT_BYTES,
  inflightBudgetFor,
} from '../../src/server/index.js';
import { readContainerMemoryLimit } from '../../src/server/serve.js';

const MiB = 1024 * 1024;

describe('readContainerMemoryLimit', () => {
  let root = '';
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });
  const write = (file: string, text: string) => {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  };

  it('reads cgroup v2 memory.max', () => {
    write('memory.max', '2147483648\n');

    expect(readContainerMemoryLimit(root)).toEqual({ bytes: 2147483648, source: join(root, 'memory.max') });
  });

  it('reads cgroup v1 memory.limit_in_bytes', () => {
    write('memory/memory.limit_in_bytes', '1073741824\n');

    expect(readContainerMemoryLimit(root)).toEqual({
      bytes: 1073741824,
      source: join(root, 'memory', 'memory.limit_in_bytes'),
    });
  });

  it.each([
    { name: 'cgroup v2 "max"', file: 'memory.max', text: 'max\n' },
    { name: 'cgroup v1 unlimited', file: 'memory/memory.limit_in_bytes', text: '9223372036854771712\n' },
    { name: 'no cgroup files', file: 'unrelated', text: '' },
  ])('is undefined for $name', ({ file, text }) => {
    write(file, text);

    expect(readContainerMemoryLimit(root)).toBeUndefined();
  });
});

describe('inflightBudgetFor', () => {
  it.each([
    { limit: 2048 * MiB, budget: Math.floor((1792 * MiB) / 6) },
    { limit: 4096 * MiB, budget: Math.floor((3840 * MiB) / 6) },
    { limit: 256 * MiB, budget: MIN_INFLIGHT_BYTES },
  ])('a $limit-byte limit leaves $budget bytes of bodies in flight', ({ limit, budget }) => {
    expect(inflightBudgetFor(limit)).toBe(budget);
  });

  it("fits one largest body in the Deployment's 2 GiB", () => {
    expect(DEFAULT_MAX_INFLIGHT_BYTES).toBeGreaterThanOrEqual(DEFAULT_MAX_BODY_BYTES);
  });
});
