// Kueue's hard-coded metrics folder, shared by every Kueue on the host (CI's lanes run side by side).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { placeMetricsCert } from '../../harness/e2e/kueue.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function pair(root: string, name: string): string {
  const dir = path.join(root, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'tls.crt'), `crt of ${name}`);
  writeFileSync(path.join(dir, 'tls.key'), `key of ${name}`);
  return dir;
}

describe('placeMetricsCert', () => {
  it('keeps the pair while any Kueue uses it and removes what it created after the last one', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'kueue-metrics-'));
    roots.push(root);
    const target = path.join(root, 'etc', 'kueue', 'metrics', 'certs');
    const releaseA = await placeMetricsCert(pair(root, 'a'), target);
    const releaseB = await placeMetricsCert(pair(root, 'b'), target);
    expect(readFileSync(path.join(target, 'tls.crt'), 'utf8')).toBe('crt of b');

    await releaseA();
    expect(readFileSync(path.join(target, 'tls.key'), 'utf8')).toBe('key of b');
    await releaseB();
    expect(existsSync(path.join(root, 'etc')), 'the topmost folder the first placement made').toBe(false);
  });

  it('places side by side without losing a user, and leaves a folder it did not make', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'kueue-metrics-'));
    roots.push(root);
    const target = path.join(root, 'certs');
    mkdirSync(target);
    const releases = await Promise.all(['a', 'b', 'c', 'd'].map((name) => placeMetricsCert(pair(root, name), target)));
    await Promise.all(releases.slice(0, 3).map((release) => release()));
    expect(existsSync(path.join(target, 'tls.crt')), 'one user left').toBe(true);
    await releases[3]?.();
    expect(existsSync(path.join(target, '.e2e-users'))).toBe(false);
    expect(existsSync(path.join(target, '.e2e-lock'))).toBe(false);
    expect(existsSync(path.join(target, 'tls.crt')), 'the pair stays in a folder made before').toBe(true);
  });
});
