/** The Node.js the Kubernetes client needs (the commands that load it refuse older ones). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KUBE_CLIENT_MIN_NODE, kubeClientLoads } from '../../src/kube/index.js';

describe('the Node.js the Kubernetes client loads on', () => {
  it('is the engines floor of the undici that @kubernetes/client-node installs', () => {
    const require = createRequire(import.meta.url);
    const client = require.resolve('@kubernetes/client-node/package.json');
    const undici = createRequire(join(dirname(client), 'package.json')).resolve('undici/package.json');
    const { engines } = JSON.parse(readFileSync(undici, 'utf8')) as { engines: { node: string } };

    expect(engines.node).toBe(`>=${KUBE_CLIENT_MIN_NODE}`);
  });

  it.each([
    ['20.20.2', false],
    ['22.18.9', false],
    ['22.19.0', true],
    ['23.0.0', true],
    ['24.22.3', true],
  ])('%s: %s', (version, loads) => {
    expect(kubeClientLoads(version)).toBe(loads);
  });
});
