/**
 * `loadKubeConfig`: the cases that must be one error line instead of a client that retries a
 * request that can never work (no configuration at all, a plain-http server the client refuses),
 * and the Node.js the Kubernetes client needs.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KUBE_CLIENT_MIN_NODE, kubeClientLoads, loadKubeConfig } from '../../src/api-client/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'gpustack-kubeconfig-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function kubeconfig(name: string, cluster: string): string {
  const file = join(scratch, name);
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
${cluster}
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context:
    cluster: c
    user: u
current-context: c
`,
  );
  return file;
}

describe('loadKubeConfig', () => {
  const VARIABLES = ['HOME', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'] as const;
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const name of VARIABLES) {
      saved.set(name, process.env[name]);
      delete process.env[name];
    }
  });
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('refuses when there is no --kubeconfig, no KUBECONFIG, no ~/.kube/config and no Pod (not http://localhost:8080)', async () => {
    process.env['HOME'] = mkdtempSync(join(scratch, 'home-'));

    await expect(loadKubeConfig()).rejects.toThrow(
      /^no Kubernetes cluster configured: pass --kubeconfig FILE, set KUBECONFIG, write ~\/\.kube\/config, or run in a Pod$/,
    );
  });

  it('reads ~/.kube/config when that is all there is', async () => {
    const home = mkdtempSync(join(scratch, 'home-'));
    mkdirSync(join(home, '.kube'));
    writeFileSync(
      join(home, '.kube', 'config'),
      readFileSync(kubeconfig('home.yaml', '    server: https://127.0.0.1:6443'), 'utf8'),
    );
    process.env['HOME'] = home;

    expect((await loadKubeConfig()).getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('names the file that does not exist', async () => {
    await expect(loadKubeConfig(join(scratch, 'missing.yaml'))).rejects.toThrow(
      `cannot read the kubeconfig (--kubeconfig ${join(scratch, 'missing.yaml')}): no such file`,
    );
  });

  it('refuses a plain-http server without insecure-skip-tls-verify (the client would refuse every request)', async () => {
    const file = kubeconfig('http.yaml', '    server: http://127.0.0.1:8001');

    await expect(loadKubeConfig(file)).rejects.toThrow(
      `cluster "c" (--kubeconfig ${file}) is plain http (http://127.0.0.1:8001): ` +
        'the Kubernetes client needs insecure-skip-tls-verify: true on it for that',
    );
    const allowed = kubeconfig(
      'http-skip.yaml',
      '    server: http://127.0.0.1:8001\n    insecure-skip-tls-verify: true',
    );
    expect((await loadKubeConfig(allowed)).getCurrentCluster()?.server).toBe('http://127.0.0.1:8001');
  });
});

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
