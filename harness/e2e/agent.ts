// The real node agent (the built CLI, `agent --publish node-labels`) on fake vendor libraries, one
// process per Node, and what it publishes through DRA: the ResourceSlices of its pool.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { ManufacturerName } from '../../src/k8s/index.js';
import { FAKE_LIBRARIES, MiB, fleet, libraryVariable, machineFile, type FakeMachine } from '../native/fake-machine.js';
import { waitFor, type KubeClient, type KubeObject } from './apply.js';
import type { ControlPlane } from './control-plane.js';
import { CLI } from './hook-server.js';
import { freePorts, startProcess, type ManagedProcess } from './processes.js';
import { RESOURCE_API } from './scheduling.js';

/** The fake library of each manufacturer the DRA scenarios run on. */
const LIBRARIES: Partial<Record<ManufacturerName, string>> = { nvidia: FAKE_LIBRARIES.nvidia, amd: FAKE_LIBRARIES.amd };

/** Card memory (MiB, as NVML reports it) of the NVIDIA products the e2e agents run on. */
const NVIDIA_MEMORY_MIB = { 'NVIDIA H100 80GB HBM3': 81559n, 'NVIDIA H200': 143771n } as const;
export type NvidiaProduct = keyof typeof NVIDIA_MEMORY_MIB;

/**
 * A machine of `count` NVIDIA `product` cards behind driver 570 / CUDA 12.8: uuids `GPU-e2e-<i>`,
 * PCI buses from 0x18 up; `count` 0 → the library loads and finds no card. Write it with
 * `machineFile` into the directory whose `devices.txt` the agent's GPUSTACK_FAKE_DEVICES names.
 * @example machineFile(nvidiaMachine('NVIDIA H200', 4), dir) // `${dir}/devices.txt`
 */
export function nvidiaMachine(product: NvidiaProduct, count: number): FakeMachine {
  return {
    lib: { nvidia: { driver: '570.124.06', runtime: 12080 } },
    devices: {
      nvidia: fleet(count, (i) => ({
        name: product,
        uuid: `GPU-e2e-${i}`,
        memory: NVIDIA_MEMORY_MIB[product] * MiB,
        cores: 132,
        cc: '9.0',
        bus: `00000000:${(0x18 + i).toString(16).toUpperCase()}:00.0`,
      })),
    },
  };
}

export interface FakeAgent {
  node: string;
  process: ManagedProcess;
  /** Rewrites the machine the fake libraries report (read again at the next detection). */
  setMachine(machine: FakeMachine): void;
  stop(): Promise<void>;
}

/**
 * Starts `gpustack-operator agent` for `node` on the fake libraries of the machine's
 * manufacturers, every other manufacturer's library pointed at a missing file.
 */
export async function startFakeAgent(
  plane: ControlPlane,
  node: string,
  machine: FakeMachine,
  options: { healthPort?: number } = {},
): Promise<FakeAgent> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gpustack-e2e-agent-${node}-`));
  const manufacturers = Object.keys(machine.devices ?? {}) as ManufacturerName[];
  const setMachine = (next: FakeMachine): void => {
    machineFile(next, dir);
  };
  setMachine(machine);
  const libraries = Object.fromEntries(
    manufacturers.map((mfr) => {
      const library = LIBRARIES[mfr];
      if (!library) throw new Error(`no fake library for ${mfr} in the DRA scenarios`);
      return [libraryVariable(mfr), library];
    }),
  );
  const { process: proc } = await startAgentProcess(
    plane,
    `agent-${node}`,
    node,
    manufacturers,
    {
      ...libraries,
      GPUSTACK_FAKE_DEVICES: path.join(dir, 'devices.txt'),
      // No host sysfs: NUMA nodes come from the fake files only.
      GPUSTACK_SYSFS_ROOT: dir,
    },
    options.healthPort,
  );
  const agent: FakeAgent = {
    node,
    process: proc,
    setMachine,
    stop: async () => {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  plane.adopt({ name: `agent-${node}`, stop: agent.stop });
  return agent;
}

/**
 * `gpustack-operator agent --publish node-labels --interval 1s` for `node` against the test API
 * server, restricted to `manufacturers`; `env` names the vendor libraries (`GPUSTACK_<MFR>_LIBRARY`)
 * and the fake machine (`GPUSTACK_FAKE_DEVICES`, `GPUSTACK_SYSFS_ROOT`).
 */
export async function startAgentProcess(
  plane: ControlPlane,
  label: string,
  node: string,
  manufacturers: readonly string[],
  env: Readonly<Record<string, string>>,
  /** The port of /healthz, /readyz and /metrics; a free one by default. */
  port?: number,
): Promise<{ process: ManagedProcess; healthPort: number }> {
  const healthPort = port ?? ((await freePorts(1)) as [number])[0];
  const agent = startProcess(
    label,
    process.execPath,
    [
      CLI,
      'agent',
      '--node',
      node,
      '--publish',
      'node-labels',
      '--interval',
      '1s',
      '--health-port',
      String(healthPort),
      '--kubeconfig',
      plane.kubeconfig,
      '--manufacturers',
      manufacturers.join(','),
    ],
    plane.logsDir,
    // restart() waits until the health port answers (any status: health follows the first detection).
    {
      env: { ...process.env, ...env },
      ready: async () => {
        await fetch(`http://127.0.0.1:${healthPort}/healthz`, { signal: AbortSignal.timeout(1000) });
        return true;
      },
    },
  );
  return { process: agent, healthPort };
}

export type DeviceAttribute = { string?: string; int?: number; bool?: boolean; version?: string };
export type SliceDevice = {
  name: string;
  attributes?: Record<string, DeviceAttribute>;
  capacity?: Record<string, { value: string; requestPolicy?: unknown }>;
  allowMultipleAllocations?: boolean;
  consumesCounters?: { counterSet: string; counters: Record<string, { value: string }> }[];
};
export type ResourceSlice = KubeObject & {
  spec: {
    driver: string;
    nodeName?: string;
    pool: { name: string; generation: number; resourceSliceCount: number };
    devices?: SliceDevice[];
    sharedCounters?: { name: string; counters: Record<string, { value: string }> }[];
  };
};

/** An attribute of a device, qualified by the driver's domain or not (both are valid in a slice). */
export function attributeOf(device: SliceDevice, driver: string, name: string): DeviceAttribute | undefined {
  return device.attributes?.[name] ?? device.attributes?.[`${driver}/${name}`];
}

export interface Pool {
  slices: ResourceSlice[];
  generation: number;
  devices: SliceDevice[];
}

/**
 * The current pool of `driver` on `node`: the slices of its highest generation (a complete pool
 * once as many slices as `resourceSliceCount` are there), their devices together.
 */
export async function poolOf(client: KubeClient, node: string, driver: string): Promise<Pool | undefined> {
  const slices = (await client.list<ResourceSlice>(RESOURCE_API, 'ResourceSlice')).filter(
    (s) => s.spec.driver === driver && s.spec.nodeName === node,
  );
  if (slices.length === 0) return undefined;
  const generation = Math.max(...slices.map((s) => s.spec.pool.generation));
  const current = slices.filter((s) => s.spec.pool.generation === generation);
  if (current.length < (current[0]?.spec.pool.resourceSliceCount ?? 1)) return undefined;
  return { slices: current, generation, devices: current.flatMap((s) => s.spec.devices ?? []) };
}

/** Waits until the agent's pool on `node` satisfies `ok`; fails with the agent's last log lines. */
export async function waitPool(
  client: KubeClient,
  agent: FakeAgent,
  driver: string,
  ok: (pool: Pool) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<Pool> {
  let last: Pool | undefined;
  try {
    return await waitFor(
      async () => {
        last = await poolOf(client, agent.node, driver);
        return last && ok(last) ? last : undefined;
      },
      timeoutMs,
      `${agent.node} ${driver}: ${what}`,
      500,
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\npool: ${last ? `generation ${last.generation}, devices ${last.devices.map((d) => d.name).join(' ')}` : 'none'}\n` +
        `agent log:\n${agent.process.tail(15)}`,
      { cause: error },
    );
  }
}
