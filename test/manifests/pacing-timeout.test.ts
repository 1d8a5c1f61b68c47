// One setting bounds a paced sync's hold: the timeout the manifests and the chart give the node-shard
// and scheduling-chain sync hooks is the hook server's --hook-timeout default, so the hold that
// ends `HOLD_MARGIN_SECONDS` before it ends before Metacontroller gives up.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACED_HOOK_TIMEOUT_SECONDS } from '../../src/server/index.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PACED = ['node-shard', 'scheduling-chain'];

describe('the paced hooks’ timeout', () => {
  it.each(PACED)('manifests/compositecontrollers/%s.yaml: sync times out at --hook-timeout', (name) => {
    const doc = parse(readFileSync(path.join(ROOT, 'manifests/compositecontrollers', `${name}.yaml`), 'utf8')) as {
      spec: { hooks: { sync: { webhook: { timeout: string } } } };
    };
    expect(doc.spec.hooks.sync.webhook.timeout).toBe(`${PACED_HOOK_TIMEOUT_SECONDS}s`);
  });

  it.each(PACED)('the chart’s %s controller: sync times out at --hook-timeout', (name) => {
    const text = readFileSync(
      path.join(ROOT, 'charts/gpustack-operator/templates/compositecontrollers', `${name}.yaml`),
      'utf8',
    );
    const sync = text.slice(text.indexOf('\n    sync:'));
    expect(sync.match(/^ +timeout: (\S+)$/m)?.[1]).toBe(`${PACED_HOOK_TIMEOUT_SECONDS}s`);
  });
});
