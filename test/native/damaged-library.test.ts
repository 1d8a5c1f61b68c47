// Whatever file sits at a library path, `detect` and the agent survive it: a truncated shared
// object made glibc's dlopen() map pages past the end of the file and the process died with
// SIGBUS (exit 135, no output), and a full-length one with garbage inside killed it with SIGSEGV
// (exit 139) in the loader or the library's first call. The real CLI runs in a child process, so
// a crash shows as a signal exit.
import { execFileSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { type DetectResult } from '../../native/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { ADDON_PATH, CLI_TIMEOUT_MS, useCli } from './cli-process.js';
import { FAKE_LIBRARIES, libraryVariable, machineFile, MiB } from '../../harness/native/fake-machine.js';

const { scratch, run: runCli, start: startCli } = useCli('damaged');

const machine = {
  devices: {
    nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB }],
    amd: [{ name: 'AMD Instinct MI300X OAM', uuid: 'amd-0', memory: 196592n * MiB }],
    cambricon: [{ name: 'MLU370-X8', uuid: 'mlu-0', memory: 49152n }],
  },
};

/** Deterministic noise, so a failure can be replayed byte for byte. */
function noise(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

function file(name: string, content: Buffer | string): string {
  const target = path.join(scratch, name);
  writeFileSync(target, content);
  return target;
}

/** The first `bytes` bytes of a real shared object. */
function truncated(source: string, bytes: number): (name: string) => string {
  return (name) => file(name, readFileSync(source).subarray(0, bytes));
}

const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);

/** The fake NVML with the memory size of its last loadable segment (the one with .bss) set to 64 TiB. */
function hugeMemorySize(name: string): string {
  const elf = Buffer.from(readFileSync(FAKE_LIBRARIES.nvidia));
  const table = Number(elf.readBigUInt64LE(0x20)); // e_phoff of a 64-bit ELF
  let last = -1;
  for (let i = 0; i < elf.readUInt16LE(0x38); i++) {
    if (elf.readUInt32LE(table + i * elf.readUInt16LE(0x36)) === 1) last = table + i * elf.readUInt16LE(0x36); // PT_LOAD
  }
  elf.writeBigUInt64LE(1n << 46n, last + 40); // p_memsz
  return file(name, elf);
}

/** Unix sockets listening at library paths, closed after the tests. */
const sockets: Server[] = [];
afterAll(() => sockets.forEach((server) => server.close()));

const DAMAGED: readonly (readonly [string, (name: string) => string])[] = [
  ['the first 100 bytes of a shared object', truncated(ADDON_PATH, 100)],
  ['the first 1000 bytes of a shared object', truncated(ADDON_PATH, 1000)],
  ['the first 20000 bytes of a shared object', truncated(ADDON_PATH, 20_000)],
  ['the first 50000 bytes of a shared object', truncated(ADDON_PATH, 50_000)],
  [
    'the first half of the fake NVML library',
    (name) =>
      file(name, readFileSync(FAKE_LIBRARIES.nvidia).subarray(0, readFileSync(FAKE_LIBRARIES.nvidia).length / 2)),
  ],
  ['random bytes', (name) => file(name, noise(8192, 0x2545f491))],
  ['the ELF magic followed by random bytes', (name) => file(name, Buffer.concat([ELF_MAGIC, noise(8192, 7)]))],
  ['an empty file', (name) => file(name, '')],
  ['a text file', (name) => file(name, 'libnvidia-ml.so.1: see the driver package\n')],
  [
    'a directory',
    (name) => {
      mkdirSync(path.join(scratch, name));
      return path.join(scratch, name);
    },
  ],
  [
    'a Unix socket (open() fails with ENXIO: it is there, not missing)',
    (name) => {
      sockets.push(createServer().listen(path.join(scratch, name)));
      return path.join(scratch, name);
    },
  ],
  ['a shared object whose writable segment asks for 64 TiB of memory', hugeMemorySize],
  [
    'a FIFO',
    (name) => {
      execFileSync('mkfifo', [path.join(scratch, name)]);
      return path.join(scratch, name);
    },
  ],
];

/** Runs `detect -o json` with nvidia's library at `nvidiaLibrary`, amd and cambricon faked, the rest missing. */
async function detectWith(nvidiaLibrary: string) {
  const env: Record<string, string> = { GPUSTACK_FAKE_DEVICES: machineFile(machine, scratch) };
  for (const mfr of MANUFACTURER_NAMES) env[libraryVariable(mfr)] = path.join(scratch, `missing-${mfr}.so`);
  env[libraryVariable('amd')] = FAKE_LIBRARIES.amd;
  env[libraryVariable('cambricon')] = FAKE_LIBRARIES.cambricon;
  env[libraryVariable('nvidia')] = nvidiaLibrary;
  const run = await runCli(['detect', '-o', 'json'], env);
  return { ...run, result: run.code === 0 ? (JSON.parse(run.stdout) as DetectResult) : undefined };
}

describe('a damaged file at a library path', () => {
  it.each(DAMAGED.map(([title, make], i) => [title, make, `damaged-${i}.so`] as const))(
    '%s: exit 0, one InvalidLibrary entry for nvidia, amd and cambricon still detected',
    async (_title, make, name) => {
      const library = make(name);

      const { code, signal, stderr, result } = await detectWith(library);

      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      expect(result?.devices.map((d) => [d.manufacturer, d.product])).toEqual([
        ['amd', 'AMD Instinct MI300X OAM'],
        ['cambricon', 'MLU370-X8'],
      ]);
      const nvidia = result?.errors.filter((e) => e.manufacturer === 'nvidia');
      expect(nvidia).toEqual([{ manufacturer: 'nvidia', code: 'InvalidLibrary', message: expect.any(String) }]);
      expect(nvidia?.[0]?.message.startsWith(`${library}: `)).toBe(true);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a missing file is LibraryNotFound, not InvalidLibrary',
    async () => {
      const { code, result } = await detectWith(path.join(scratch, 'not-there.so'));

      expect(code).toBe(0);
      expect(result?.errors.find((e) => e.manufacturer === 'nvidia')).toEqual({
        manufacturer: 'nvidia',
        code: 'LibraryNotFound',
        message: expect.stringContaining('not-there.so: cannot open shared object file: No such file or directory'),
      });
      expect(result?.devices).toHaveLength(2);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'a library cut after its last segment (only the section headers gone) still loads: the loader never reads them',
    async () => {
      const whole = readFileSync(FAKE_LIBRARIES.nvidia);
      const sectionHeaders = Number(whole.readBigUInt64LE(0x28)); // e_shoff of a 64-bit ELF
      const library = file('no-section-headers.so', whole.subarray(0, sectionHeaders));

      const { code, result } = await detectWith(library);

      expect(code).toBe(0);
      expect(result?.errors.filter((e) => e.manufacturer === 'nvidia')).toEqual([]);
      expect(result?.devices.map((d) => d.product)).toContain('NVIDIA H200');
    },
    CLI_TIMEOUT_MS,
  );
});

/**
 * The fake NVML, full length, with its first dynamic relocation aimed far outside the library:
 * the loader writes there while loading it and the process dies of SIGSEGV, as with a library
 * whose contents are damaged but whose size and headers are right (it passes the ELF check).
 */
function wildRelocation(name: string): string {
  const elf = Buffer.from(readFileSync(FAKE_LIBRARIES.nvidia));
  const entry = elf.readUInt16LE(0x36);
  const headers = Array.from({ length: elf.readUInt16LE(0x38) }, (_, i) => {
    const at = Number(elf.readBigUInt64LE(0x20)) + i * entry;
    const [offset, vaddr, filesz] = [8, 16, 32].map((field) => Number(elf.readBigUInt64LE(at + field)));
    return { type: elf.readUInt32LE(at), offset: offset ?? 0, vaddr: vaddr ?? 0, filesz: filesz ?? 0 };
  });
  const fileOffset = (vaddr: number) => {
    const load = headers.find((h) => h.type === 1 && vaddr >= h.vaddr && vaddr < h.vaddr + h.filesz); // PT_LOAD
    if (load === undefined) throw new Error(`no loaded bytes at ${vaddr}`);
    return vaddr - load.vaddr + load.offset;
  };
  const dynamic = headers.find((h) => h.type === 2); // PT_DYNAMIC
  if (dynamic === undefined) throw new Error('the fake NVML has no dynamic section');
  for (let at = dynamic.offset; at < dynamic.offset + dynamic.filesz; at += 16) {
    if (elf.readBigInt64LE(at) !== 7n) continue; // DT_RELA
    elf.writeBigUInt64LE(0x7fff00000000n, fileOffset(Number(elf.readBigUInt64LE(at + 8)))); // r_offset
    return file(name, elf);
  }
  throw new Error('the fake NVML has no DT_RELA relocations');
}

const crashMachine = (nvidia: Record<string, string | number>) => ({
  lib: { nvidia },
  devices: {
    nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB }],
    amd: [{ name: 'AMD Instinct MI300X OAM', uuid: 'amd-0', memory: 196592n * MiB }],
    cambricon: [{ name: 'MLU370-X8', uuid: 'mlu-0', memory: 49152n }],
    thead: [{ name: 'PPU-ZW810E', uuid: 'GPU-ppu-0', memory: 98304n * MiB }],
  },
});

/** amd and cambricon (before nvidia) and thead (after it) faked, nvidia's library at `nvidiaLibrary`, the rest missing. */
function crashEnvironment(nvidiaLibrary: string, nvidia: Record<string, string | number> = {}): Record<string, string> {
  const env: Record<string, string> = { GPUSTACK_FAKE_DEVICES: machineFile(crashMachine(nvidia), scratch) };
  for (const mfr of MANUFACTURER_NAMES) env[libraryVariable(mfr)] = path.join(scratch, `missing-${mfr}.so`);
  env[libraryVariable('amd')] = FAKE_LIBRARIES.amd;
  env[libraryVariable('cambricon')] = FAKE_LIBRARIES.cambricon;
  env[libraryVariable('thead')] = FAKE_LIBRARIES.thead;
  env[libraryVariable('nvidia')] = nvidiaLibrary;
  return env;
}

const OTHER_CARDS = [
  ['amd', 'AMD Instinct MI300X OAM'],
  ['cambricon', 'MLU370-X8'],
  ['thead', 'PPU-ZW810E'],
];

describe('a library that kills the process (detection runs in a child process)', () => {
  it.each([
    ['its load (a damaged relocation: SIGSEGV in the loader)', () => crashEnvironment(wildRelocation('wild.so'))],
    ['its first call (nvmlInit_v2 dereferences NULL)', () => crashEnvironment(FAKE_LIBRARIES.nvidia, { crash: 1 })],
  ])(
    '%s: detect exits 0 with an InvalidLibrary entry naming the file and the signal; the other cards are detected',
    async (_title, environment) => {
      const env = environment();

      const run = await runCli(['detect', '-o', 'json'], env);

      expect({ code: run.code, signal: run.signal, stderr: run.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
      const result = JSON.parse(run.stdout) as DetectResult;
      expect(result.devices.map((d) => [d.manufacturer, d.product])).toEqual(OTHER_CARDS);
      expect(result.errors.filter((e) => e.manufacturer === 'nvidia')).toEqual([
        {
          manufacturer: 'nvidia',
          code: 'InvalidLibrary',
          message: `${env[libraryVariable('nvidia')]}: the detection process was killed by SIGSEGV while loading or using this library (a damaged file? reinstall the driver)`,
        },
      ]);
    },
    CLI_TIMEOUT_MS,
  );

  /** Resolves with the agent's JSON log lines once `done` holds for them. */
  function logUntil(agent: ChildProcessWithoutNullStreams, done: (lines: Record<string, unknown>[]) => boolean) {
    return new Promise<Record<string, unknown>[]>((resolve, reject) => {
      let text = '';
      agent.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const lines = text
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        if (done(lines)) resolve(lines);
      });
      agent.on('exit', (code, signal) => reject(new Error(`the agent exited (${code ?? signal}):\n${text}`)));
    });
  }

  it(
    'the agent logs the InvalidLibrary entry on every cycle, publishes the other cards and keeps running',
    async () => {
      const features = path.join(scratch, 'features.d');
      const args = ['agent', '--publish', 'feature-file', '--features-dir', features, '--interval', '1s'];
      const agent = startCli([...args, '--health-port', '0'], crashEnvironment(wildRelocation('agent-wild.so')));
      try {
        const invalid = (line: Record<string, unknown>) =>
          line['msg'] === 'device detection error' && line['manufacturer'] === 'nvidia';
        const lines = await logUntil(
          agent,
          (lines) => lines.filter(invalid).length >= 2 && lines.some((l) => l['msg'] === 'published labels'),
        );

        expect(lines.filter(invalid)[1]).toMatchObject({
          level: 40, // warn
          code: 'InvalidLibrary',
          message: expect.stringContaining('killed by SIGSEGV'),
        });
        const published = readFileSync(path.join(features, 'gpustack-agent'), 'utf8');
        for (const vendor of ['amd', 'cambricon', 'thead'])
          expect(published).toContain(`\nacceleratable.feature.gpustack.ai/${vendor}=true\n`);
        const exit = new Promise((resolve) => agent.on('exit', (code, signal) => resolve({ code, signal })));
        agent.kill('SIGTERM');
        expect(await exit).toEqual({ code: 0, signal: null });
      } finally {
        if (agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
      }
    },
    4 * CLI_TIMEOUT_MS,
  );
});
