/**
 * @module Where scenario fixtures and snapshots live (docs/development.md#tests):
 * `test/fixtures/sync/<controller>/<scenario>.request.yaml` in,
 * `test/snapshots/sync/<controller>/<scenario>.response.yaml` out.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export type Controller = 'node-profile' | 'scheduling-chain' | 'instance-type' | 'node-devices-check';

export const CONTROLLERS: readonly Controller[] = [
  'node-profile',
  'scheduling-chain',
  'instance-type',
  'node-devices-check',
];

const TEST_ROOT = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const REQUEST_SUFFIX = '.request.yaml';

/** Absolute path of a file under the repository root. */
export function repoPath(relative: string): string {
  return `${REPO_ROOT}${relative}`;
}

/** Absolute path of a scenario's request fixture. */
export function requestFixturePath(controller: Controller, scenario: string): string {
  return `${TEST_ROOT}fixtures/sync/${controller}/${scenario}${REQUEST_SUFFIX}`;
}

/** Absolute path of a scenario's response snapshot (written by `toMatchFileSnapshot`). */
export function responseSnapshotPath(controller: Controller, scenario: string): string {
  return `${TEST_ROOT}snapshots/sync/${controller}/${scenario}.response.yaml`;
}

/** Absolute path of the render snapshot of one `examples/clusters/` file (`mixed.json` → `mixed.yaml`). */
export function renderSnapshotPath(file: string): string {
  return `${TEST_ROOT}snapshots/render/${file.replace(/\.(ya?ml|json)$/, '')}.yaml`;
}

/** A scenario's hook request exactly as stored (unparsed: each test parses it with its request schema). */
export function readRequestFixture(controller: Controller, scenario: string): unknown {
  return parse(readFileSync(requestFixturePath(controller, scenario), 'utf8'));
}

/** Every scenario name of a controller, sorted. */
export function listScenarios(controller: Controller): string[] {
  return readdirSync(`${TEST_ROOT}fixtures/sync/${controller}`)
    .filter((f) => f.endsWith(REQUEST_SUFFIX))
    .map((f) => f.slice(0, -REQUEST_SUFFIX.length))
    .sort();
}
