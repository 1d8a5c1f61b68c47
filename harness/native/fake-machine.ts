// Describes a machine for the fake vendor libraries and runs detect() against it with a
// fresh environment: the addon reads GPUSTACK_<MFR>_LIBRARY on every call and closes
// each library afterwards, and the fakes re-read GPUSTACK_FAKE_DEVICES on every init.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { detect, type DetectResult, type ManufacturerName } from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FAKES_BUILD_DIR = path.join(REPO_ROOT, 'build', 'native-fakes');

const fake = (relative: string): string => path.join(FAKES_BUILD_DIR, relative);

/** Built fake libraries (see test/native/fakes/CMakeLists.txt). */
export const FAKE_LIBRARIES = {
  nvidia: fake('nvidia/libnvidia-ml.so.1'),
  nvidiaLegacy: fake('nvidia-legacy/libnvidia-ml.so.1'),
  nvidiaNoName: fake('nvidia-no-name/libnvidia-ml.so.1'),
  nvidiaNoFabric: fake('nvidia-no-fabric/libnvidia-ml.so.1'),
  iluvatar: fake('iluvatar/libixml.so'),
  thead: fake('thead/libhgml.so'),
  amd: fake('amd/libamd_smi.so'),
  amdRocmRoot: fake('rocm'),
  amdRocmSmi: fake('rocm/lib/librocm_smi64.so'),
  hygon: fake('hygon/librocm_smi64.so'),
  ascend: fake('ascend/libdcmi.so'),
  cambricon: fake('cambricon/libcndev.so'),
  metax: fake('metax/libmxsml.so'),
  mthreads: fake('mthreads/libmtml.so'),
} as const;

/** Raw vendor answers: memory in the vendor's unit, ints as the library returns them. */
export type FakeFields = Readonly<Record<string, string | number | bigint>>;

export interface FakeMachine {
  readonly lib?: Partial<Record<ManufacturerName, FakeFields>>;
  readonly devices?: Partial<Record<ManufacturerName, readonly FakeFields[]>>;
}

export interface FakeRun {
  /**
   * GPUSTACK_<MFR>_LIBRARY per manufacturer; the others point at a missing file, or, with
   * `hostRoot`, are left unset so that the library is looked up under the root.
   */
  readonly libraries: Partial<Record<ManufacturerName, string>>;
  readonly hostRoot?: string;
  readonly manufacturers?: readonly ManufacturerName[];
  readonly env?: Readonly<Record<string, string>>;
  /** sysfs `numa_node` contents by PCI address; the host's /sys is never consulted. */
  readonly sysfsNumaNodes?: Readonly<Record<string, string>>;
}

export const MiB = 1024n * 1024n;

function line(tag: string, fields: FakeFields): string {
  const parts = Object.entries(fields).map(([key, value]) => {
    const text = String(value);
    if (/[\t\n]/.test(text)) throw new Error(`fake field ${key} must not contain tabs or newlines`);
    return `${key}=${text}`;
  });
  return [tag, ...parts].join('\t');
}

export function machineFile(machine: FakeMachine, directory: string): string {
  const lines: string[] = [];
  for (const [mfr, fields] of Object.entries(machine.lib ?? {})) lines.push(line(`lib:${mfr}`, fields));
  for (const [mfr, devices] of Object.entries(machine.devices ?? {})) {
    for (const fields of devices) lines.push(line(`dev:${mfr}`, fields));
  }
  const file = path.join(directory, 'devices.txt');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

function fakeSysfs(directory: string, numaNodes: Readonly<Record<string, string>>): string {
  const root = path.join(directory, 'sys');
  for (const [bdf, value] of Object.entries(numaNodes)) {
    const device = path.join(root, 'bus', 'pci', 'devices', bdf);
    mkdirSync(device, { recursive: true });
    writeFileSync(path.join(device, 'numa_node'), `${value}\n`);
  }
  return root;
}

export const libraryVariable = (mfr: ManufacturerName): string => `GPUSTACK_${mfr.toUpperCase()}_LIBRARY`;

function withEnv<T>(values: Record<string, string>, body: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]));
  Object.assign(process.env, values);
  return body().finally(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });
}

/** Runs detect() on `machine`; `trace` lists the vendor symbols the addon called. */
export async function detectOn(machine: FakeMachine, run: FakeRun): Promise<DetectResult & { trace: string[] }> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-fake-'));
  const traceFile = path.join(directory, 'trace.txt');
  writeFileSync(traceFile, '');
  const env: Record<string, string> = {
    GPUSTACK_FAKE_DEVICES: machineFile(machine, directory),
    GPUSTACK_FAKE_TRACE: traceFile,
    GPUSTACK_SYSFS_ROOT: fakeSysfs(directory, run.sysfsNumaNodes ?? {}),
  };
  // An empty value counts as unset (withEnv can only set variables).
  const unset =
    run.hostRoot === undefined ? (mfr: ManufacturerName) => path.join(directory, `missing-${mfr}.so`) : () => '';
  for (const mfr of MANUFACTURER_NAMES) env[libraryVariable(mfr)] = run.libraries[mfr] ?? unset(mfr);
  Object.assign(env, run.env);
  const manufacturers = run.manufacturers ?? (Object.keys(run.libraries) as ManufacturerName[]);
  const hostRoot = run.hostRoot === undefined ? {} : { hostRoot: run.hostRoot };
  try {
    const result = await withEnv(env, () => detect({ manufacturers, ...hostRoot }));
    const trace = readFileSync(traceFile, 'utf8').split('\n').filter(Boolean);
    return { ...result, trace };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** `count` devices built from their index. */
export function fleet(count: number, template: (i: number) => FakeFields): FakeFields[] {
  return Array.from({ length: count }, (_, i) => template(i));
}
