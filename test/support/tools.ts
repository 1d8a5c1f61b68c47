/**
 * @module Tools the unit suite runs over what the chart renders: helm (the e2e suite's, built from
 * the Go module proxy into its component cache) and kube-score, a manifest scanner of the
 * ecosystem, pinned and built the same way with `go install` into a cache of its own on first use.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ensureComponents } from '../../harness/e2e/components.js';

/** The scanner, pinned: `go install <module>@<version>`. Bump both together, then review the findings table. */
export const KUBE_SCORE = { module: 'github.com/zegl/kube-score/cmd/kube-score', version: 'v1.20.0' } as const;

/** Where built tools are kept; GPUSTACK_TOOLS_CACHE moves it. */
const TOOLS_CACHE = process.env['GPUSTACK_TOOLS_CACHE'] ?? path.join(os.homedir(), '.cache', 'gpustack-operator-tools');

/** helm, as the e2e suite has it (E2E_HELM_BIN, or built once into its component cache). */
export function helmBinary(): string {
  return ensureComponents(['helm']).helm.binary;
}

/**
 * kube-score at {@link KUBE_SCORE}'s version: KUBE_SCORE_BIN, or built once with `go install`
 * (needs Go and the module proxy; about 40 s cold). Built into a temporary folder and renamed into
 * place, so that a build cut short or two suites building at once never leave half a binary.
 */
export function kubeScoreBinary(): string {
  const given = process.env['KUBE_SCORE_BIN'];
  if (given) return given;
  const dir = path.join(TOOLS_CACHE, `kube-score-${KUBE_SCORE.version}`);
  const binary = path.join(dir, 'kube-score');
  if (existsSync(binary)) return binary;
  mkdirSync(TOOLS_CACHE, { recursive: true });
  const scratch = `${dir}.build-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  const run = spawnSync('go', ['install', `${KUBE_SCORE.module}@${KUBE_SCORE.version}`], {
    encoding: 'utf8',
    timeout: 900_000,
    env: { ...process.env, GOBIN: scratch, GOFLAGS: '-mod=mod -buildvcs=false', CGO_ENABLED: '0' },
  });
  if (run.error) throw new Error(`building kube-score needs Go on the PATH: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`go install ${KUBE_SCORE.module}@${KUBE_SCORE.version} failed:\n${run.stderr}`);
  try {
    renameSync(scratch, dir);
  } catch (error) {
    // Another suite got there first: its binary is as good as ours.
    if (!existsSync(binary)) throw error;
    rmSync(scratch, { recursive: true, force: true });
  }
  return binary;
}
