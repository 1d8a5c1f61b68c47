/** @module Runs bench/detect/detect.ts against the fake NVML (8 × H100) built by the native test setup. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { FAKE_LIBRARIES, MiB, fleet, libraryVariable, machineFile } from '../../harness/native/fake-machine.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { ROOT, finished, spawnScript } from '../shared/child.js';
import { quantile, summarize } from '../shared/stats.js';

export type DetectBench =
  | {
      readonly ok: true;
      readonly cards: number;
      readonly calls: number;
      readonly medianMs: number;
      readonly p99Ms: number;
      readonly cv: number;
      readonly loadMs: number;
      readonly loadRuns: number;
      /** detectIsolated() of all nine manufacturers (the agent's call: one child process each), from dist/. */
      readonly isolated?: { readonly calls: number; readonly medianMs: number; readonly cpuMs: number } | undefined;
    }
  | { readonly ok: false; readonly skipped: string };

const ADDON = path.join(ROOT, 'native', 'build', 'Release', 'gpustack_native.node');

/** Builds the addon and the fake vendor libraries if a clean clone has neither (needs cmake and a C++ compiler). */
async function ensureNative(): Promise<string | undefined> {
  if (existsSync(ADDON) && existsSync(FAKE_LIBRARIES.nvidia)) return undefined;
  try {
    const { buildNativeAndFakes } = await import('../../harness/native/build.js');
    buildNativeAndFakes();
    return undefined;
  } catch (error) {
    return `the native addon or the fake NVML is not built and building failed: ${(error as Error).message.split('\n')[0]}`;
  }
}

function h100(i: number): Record<string, string | number | bigint> {
  return {
    name: 'NVIDIA H100 80GB HBM3',
    uuid: `GPU-8e4f00c1-0000-4000-8000-00000000000${i}`,
    memory: 81559n * MiB,
    cores: 132,
    cc: '9.0',
    bus: `00000000:${(0x18 + i * 0x10).toString(16).toUpperCase()}:00.0`,
    numa: i < 4 ? 0 : 1,
  };
}

export async function benchDetect(calls = 200, loadRuns = 5, isolatedCalls = 20): Promise<DetectBench> {
  const problem = await ensureNative();
  if (problem) return { ok: false, skipped: problem };
  const directory = mkdtempSync(path.join(os.tmpdir(), 'gpustack-bench-detect-'));
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      GPUSTACK_FAKE_DEVICES: machineFile(
        { lib: { nvidia: { driver: '570.124.06', runtime: 12080 } }, devices: { nvidia: fleet(8, h100) } },
        directory,
      ),
      GPUSTACK_SYSFS_ROOT: path.join(directory, 'sys'),
    };
    for (const mfr of MANUFACTURER_NAMES) env[libraryVariable(mfr)] = path.join(directory, `missing-${mfr}.so`);
    env[libraryVariable('nvidia')] = FAKE_LIBRARIES.nvidia;
    const out = path.join(directory, 'detect.json');
    await finished(
      spawnScript('detect/detect.ts', [String(calls), '20', out, String(isolatedCalls)], [], env),
      'bench/detect/detect.ts',
    );
    const run = JSON.parse(readFileSync(out, 'utf8')) as {
      loadMs: number;
      devices: number;
      times: number[];
      isolated: { times: number[]; cpuMs: number[] };
    };
    const loads = [run.loadMs];
    for (let i = 1; i < loadRuns; i++) {
      await finished(spawnScript('detect/detect.ts', ['1', '0', out], [], env), 'bench/detect/detect.ts');
      loads.push((JSON.parse(readFileSync(out, 'utf8')) as { loadMs: number }).loadMs);
    }
    const times = summarize(run.times);
    return {
      ok: true,
      cards: run.devices,
      calls: run.times.length,
      medianMs: times.median,
      p99Ms: quantile(run.times, 0.99),
      cv: times.cv,
      loadMs: quantile(loads, 0.5),
      loadRuns,
      isolated:
        run.isolated.times.length > 0
          ? {
              calls: run.isolated.times.length,
              medianMs: quantile(run.isolated.times, 0.5),
              cpuMs: quantile(run.isolated.cpuMs, 0.5),
            }
          : undefined,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
