// `gpustack-operator detect` as an operator and the agent's DaemonSet run it: the compiled
// CLI in a child process, so a process that cannot even start shows as such.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { type DetectResult } from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { CLI_TIMEOUT_MS, useCli } from './cli-process.js';
import { FAKE_LIBRARIES, machineFile, MiB, REPO_ROOT } from '../../harness/native/fake-machine.js';

const { scratch, run: runCli } = useCli('cli-native');

describe('GPUSTACK_NATIVE_ADDON', () => {
  it(
    'naming a missing file: exit 1 with one line naming the path, no output, no stack trace',
    async () => {
      const missing = path.join(scratch, 'gpustack_native.node');

      const run = await runCli(['detect', '-o', 'json'], { GPUSTACK_NATIVE_ADDON: missing });

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^error: GPUSTACK_NATIVE_ADDON names ${missing}, which does not load:\n`));
      expect(run.stderr).not.toMatch(/\n\s+at /);
    },
    CLI_TIMEOUT_MS,
  );
});

/**
 * A host whose library folders hold a libc.so.6 and a libstdc++.so.6 that do not load (a
 * process that took them from there could not start) and the fake NVML where the driver
 * package puts it.
 */
function brokenHost(): string {
  const root = path.join(scratch, 'host');
  for (const folder of ['usr/lib64', 'usr/lib/x86_64-linux-gnu', 'usr/lib/aarch64-linux-gnu']) {
    mkdirSync(path.join(root, folder), { recursive: true });
    writeFileSync(path.join(root, folder, 'libc.so.6'), 'not a C library\n');
    writeFileSync(path.join(root, folder, 'libstdc++.so.6'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0]));
  }
  copyFileSync(FAKE_LIBRARIES.nvidia, path.join(root, 'usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1'));
  return root;
}

const h200Machine = { devices: { nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB }] } };

function expectTheHostsCard(run: { code: number | null; signal: string | null; stdout: string; stderr: string }) {
  expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  const result = JSON.parse(run.stdout) as DetectResult;
  expect(result.devices.map((d) => [d.manufacturer, d.product])).toEqual([['nvidia', 'NVIDIA H200']]);
  expect(result.errors.map((e) => [e.manufacturer, e.code])).toEqual(
    MANUFACTURER_NAMES.filter((m) => m !== 'nvidia').map((m) => [m, 'LibraryNotFound']),
  );
}

describe('--host-root', () => {
  it(
    "detect finds the card from the host's usual folder, and the host's libc and libstdc++ stay out of Node",
    async () => {
      const root = brokenHost();

      const run = await runCli(['detect', '-o', 'json', '--host-root', root], {
        GPUSTACK_FAKE_DEVICES: machineFile(h200Machine, scratch),
      });

      expectTheHostsCard(run);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    "the DaemonSet's own environment and flags, on that host, start and detect the card",
    async () => {
      interface Container {
        args: string[];
        env?: { name: string; value?: string }[];
        volumeMounts: { name: string; mountPath: string }[];
      }
      const manifest = parse(readFileSync(path.join(REPO_ROOT, 'manifests/agent/daemonset.yaml'), 'utf8')) as {
        spec: {
          template: { spec: { containers: Container[]; volumes: { name: string; hostPath?: { path: string } }[] } };
        };
      };
      const pod = manifest.spec.template.spec;
      const container = pod.containers[0] as Container;
      // Where the DaemonSet mounts the host's /usr/lib64, less that path: its host root.
      const lib64 = pod.volumes.find((v) => v.hostPath?.path === '/usr/lib64')?.name;
      const mountRoot = container.volumeMounts.find((m) => m.name === lib64)?.mountPath.replace(/\/usr\/lib64$/, '');
      expect(mountRoot).toBeDefined();
      const root = brokenHost();
      const onFakeHost = (text: string) =>
        text
          .split(`${mountRoot}/`)
          .join(`${root}/`)
          .replace(new RegExp(`^${mountRoot}$`), root);
      const env = Object.fromEntries(
        (container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, onFakeHost(e.value ?? '')]),
      );
      const hostRootAt = container.args.indexOf('--host-root');
      const flags = hostRootAt < 0 ? [] : ['--host-root', onFakeHost(container.args[hostRootAt + 1] ?? '')];

      const run = await runCli(['detect', '-o', 'json', ...flags], {
        ...env,
        GPUSTACK_FAKE_DEVICES: machineFile(h200Machine, scratch),
      });

      expectTheHostsCard(run);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'is refused in one line, exit 1, when it is not there (a missing path, not a usage error)',
    async () => {
      const missing = path.join(scratch, 'no-such-host');
      const run = await runCli(['detect', '--host-root', missing]);

      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`error: --host-root ${missing}: no such directory\n`);
    },
    CLI_TIMEOUT_MS,
  );
});

describe('detect -o json: resourceSlices', () => {
  const machine = {
    devices: {
      nvidia: [
        { name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB },
        { name: 'NVIDIA H200', uuid: 'GPU-h200-1', memory: 143771n * MiB },
      ],
    },
  };

  it(
    'prints the slices the agent would publish for $NODE_NAME (no owner: detect does not ask the API server)',
    async () => {
      const run = await runCli(['detect', '-o', 'json', '--manufacturers', 'nvidia'], {
        GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
        GPUSTACK_FAKE_DEVICES: machineFile(machine, scratch),
        NODE_NAME: 'gpu-1',
      });
      expect(run.stderr).toBe('');
      const out = JSON.parse(run.stdout) as {
        labels: Record<string, string>;
        resourceSlices: {
          node: string;
          slices: { metadata: Record<string, unknown>; spec: { devices?: { name: string }[] } }[];
        };
      };
      expect(out.labels['acceleratable.feature.gpustack.ai/nvidia-h200.count']).toBe('2');
      expect(out.resourceSlices.node).toBe('gpu-1');
      expect(out.resourceSlices.slices.map((s) => s.metadata['name'])).toEqual([
        'gpu-1-nvidia-counters-0',
        'gpu-1-nvidia-devices-0',
      ]);
      expect(out.resourceSlices.slices[1]?.spec.devices?.map((d) => d.name)).toEqual([
        'card-0',
        'card-0-shared',
        'card-1',
        'card-1-shared',
      ]);
      expect(out.resourceSlices.slices[0]?.metadata['ownerReferences']).toBeUndefined();
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'without $NODE_NAME says the slices cannot be named instead of inventing a node',
    async () => {
      const run = await runCli(['detect', '-o', 'json', '--manufacturers', 'nvidia'], {
        GPUSTACK_NVIDIA_LIBRARY: FAKE_LIBRARIES.nvidia,
        GPUSTACK_FAKE_DEVICES: machineFile(machine, scratch),
      });
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as { resourceSlices: { error?: string; slices?: unknown } };
      expect(out.resourceSlices.error).toMatch(/^NODE_NAME is not set/);
      expect(out.resourceSlices.slices).toBeUndefined();
    },
    CLI_TIMEOUT_MS,
  );
});
