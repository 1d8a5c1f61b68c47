// Runs against a real NVIDIA driver only on a host that has one (/dev/nvidiactl and nvidia-smi);
// elsewhere it is reported as skipped, with the reason in its title. scripts/real-card/run.sh runs
// it on a lent GPU machine. Every expectation comes from what the driver itself reports through
// nvidia-smi (and, where scripts/real-card/run.sh wrote them, NVML's Python bindings), never from
// what a card of some model ought to have.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { detect, type DetectResult, type Device } from '../../native/index.js';
import { labelsFromDetection, sliceCardsOf } from '../../src/agent/index.js';
import { desiredSlices } from '../../src/dra/index.js';
import { KubeletPlugins, pluginPaths } from '../../src/kubelet-plugin/index.js';
import { DraClient, RegistrationClient } from '../kubelet-plugin/kubelet-client.js';
import { cdiSpecProblems } from '../support/cdi-spec.js';

const NODE = 'real-card';
const DRIVER = 'nvidia.gpustack.ai';

function nvidiaSmi(args: readonly string[]): string | undefined {
  try {
    return execFileSync('nvidia-smi', args, { encoding: 'utf8', timeout: 60_000 });
  } catch {
    return undefined;
  }
}

const FIELDS = [
  'index',
  'name',
  'uuid',
  'memory.total',
  'driver_version',
  'compute_cap',
  'mig.mode.current',
  'pci.bus_id',
];
type SmiRow = Record<(typeof FIELDS)[number], string>;

/** One row per GPU of `nvidia-smi --query-gpu`, units stripped (memory in MiB). */
function smiRows(): SmiRow[] | undefined {
  const text = nvidiaSmi([`--query-gpu=${FIELDS.join(',')}`, '--format=csv,noheader,nounits']);
  return text
    ?.trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(',').map((cell, i) => [FIELDS[i], cell.trim()])) as SmiRow);
}

/** `00000000:1B:00.0` (NVML's 32-bit domain, upper case) in the sysfs form our cards carry, `0000:1b:00.0`. */
function sysfsBusId(smi: string): string {
  const [domain = '', ...rest] = smi.toLowerCase().split(':');
  return [domain.slice(-4).padStart(4, '0'), ...rest].join(':');
}

const rows = existsSync('/dev/nvidiactl') ? smiRows() : undefined;
const cudaVersion = rows === undefined ? undefined : /CUDA Version:\s*([0-9.]+)/.exec(nvidiaSmi([]) ?? '')?.[1];
/** NVML's own answer through nvidia-ml-py, where scripts/real-card/run.sh recorded it. */
const nvmlFacts = process.env['GPUSTACK_REAL_CARD_NVML']
  ? (JSON.parse(readFileSync(process.env['GPUSTACK_REAL_CARD_NVML'], 'utf8')) as {
      devices: { index: number; cores?: number | null; memory_v1_total: number; numa_node?: number | null }[];
    })
  : undefined;
/** Where the run leaves what it saw (scripts/real-card/run.sh sets it to its $OUT). */
const artifacts = process.env['GPUSTACK_REAL_CARD_OUT'];
const record = (name: string, value: unknown) => {
  if (artifacts) writeFileSync(path.join(artifacts, name), `${JSON.stringify(value, null, 2)}\n`);
};

describe.runIf(rows !== undefined)('real NVIDIA driver (runs only where /dev/nvidiactl and nvidia-smi exist)', () => {
  const smi = rows ?? [];
  let detection: DetectResult | undefined;
  const detected = async (): Promise<DetectResult> => {
    if (detection) return detection;
    const override = process.env['GPUSTACK_NVIDIA_LIBRARY'];
    delete process.env['GPUSTACK_NVIDIA_LIBRARY'];
    try {
      detection = await detect({ manufacturers: ['nvidia'] });
      return detection;
    } finally {
      if (override !== undefined) process.env['GPUSTACK_NVIDIA_LIBRARY'] = override;
    }
  };
  const root = mkdtempSync(path.join(os.tmpdir(), 'gpustack-real-card-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('finds through the host libnvidia-ml.so.1 what nvidia-smi reports, field by field', async () => {
    const { devices, errors } = await detected();
    expect(errors).toEqual([]);
    expect(devices).toHaveLength(smi.length);
    for (const row of smi) {
      const device = devices.find((d) => d.index === Number(row.index)) as Device;
      const mig = row['mig.mode.current'];
      expect({
        product: device.product,
        uuid: device.uuid,
        memoryMiB: device.memoryMiB,
        driverVersion: device.driverVersion,
        runtimeVersion: device.runtimeVersion,
        computeCapability: device.computeCapability,
        pciBusId: device.pciBusId,
        partitioning: device.partitioning,
      }).toEqual({
        product: row.name,
        uuid: row.uuid,
        memoryMiB: Number(row['memory.total']),
        driverVersion: row.driver_version,
        runtimeVersion: cudaVersion,
        computeCapability: row.compute_cap,
        pciBusId: sysfsBusId(row['pci.bus_id'] ?? ''),
        // "[N/A]" where the card has no MIG: then NVML answers NOT_SUPPORTED and we report none.
        partitioning: mig === 'Enabled' || mig === 'Disabled' ? { mode: 'mig', enabled: mig === 'Enabled' } : undefined,
      });
      const facts = nvmlFacts?.devices.find((d) => d.index === device.index);
      if (facts) {
        expect(device.cores).toBe(facts.cores ?? 0);
        expect(device.memoryMiB).toBe(Math.floor(facts.memory_v1_total / 1024 / 1024));
        expect(device.numaNode ?? -1).toBe(facts.numa_node ?? -1);
      }
    }
  });

  it('publishes labels and a ResourceSlice with the memory the card reported', async () => {
    const result = await detected();
    const labels = labelsFromDetection(result, undefined);
    const desired = desiredSlices({ name: NODE }, sliceCardsOf(result));
    const slices = desired.pools.flatMap((pool) => pool.slices);
    record('labels-and-slices.json', { labels, slices, problems: desired.problems });

    expect(desired.problems).toEqual([]);
    const devices = slices.flatMap((s) => s.spec.devices ?? []);
    for (const row of smi) {
      const memory = `${row['memory.total']}Mi`;
      for (const name of [`card-${row.index}`, `card-${row.index}-shared`]) {
        const device = devices.find((d) => d.name === name);
        expect(device?.capacity?.['memory']?.value, name).toBe(memory);
        expect(device?.attributes?.['uuid'], name).toEqual({ string: row.uuid });
      }
    }
    // Every card counted under one model label, and the count is the driver's.
    const counts = Object.entries(labels).filter(([k]) => k.endsWith('.count'));
    expect(counts.reduce((sum, [, v]) => sum + Number(v), 0)).toBe(smi.length);
  });

  it('prepares a whole card and a share into CDI specs that name only device nodes this host has', async () => {
    const result = await detected();
    const first = smi[0] as SmiRow;
    const uuid = first.uuid;
    const dirs = {
      registryDir: path.join(root, 'plugins_registry'),
      pluginsDir: path.join(root, 'plugins'),
      cdiDir: path.join(root, 'cdi'),
    };
    const claims = new Map<string, object>([
      [
        'ns/whole',
        {
          metadata: { name: 'whole', namespace: 'ns', uid: 'uid-whole' },
          status: {
            allocation: {
              devices: { results: [{ request: 'gpu', driver: DRIVER, pool: NODE, device: `card-${first.index}` }] },
            },
          },
        },
      ],
      [
        'ns/share',
        {
          metadata: { name: 'share', namespace: 'ns', uid: 'uid-share' },
          status: {
            allocation: {
              devices: {
                results: [
                  {
                    request: 'gpu',
                    driver: DRIVER,
                    pool: NODE,
                    device: `card-${first.index}-shared`,
                    shareID: '5b0a3c1e-7d29-4f1a-9c4e-2a6b8d0f1e37',
                    consumedCapacity: { memory: '16Gi', cores: '25' },
                  },
                ],
              },
            },
          },
        },
      ],
    ]);
    const plugins = new KubeletPlugins({
      node: NODE,
      ...dirs,
      hostRoot: '/',
      readClaim: async (namespace, name) => claims.get(`${namespace}/${name}`),
      // The slices the agent would publish for these cards: the counters a claim is checked against.
      readSlices: async () => desiredSlices({ name: NODE }, sliceCardsOf(result)).pools.flatMap((p) => p.slices),
    });
    const clients: { close(): void }[] = [];
    try {
      await plugins.update(result);
      const paths = pluginPaths(DRIVER, dirs.registryDir, dirs.pluginsDir);
      const registration = new RegistrationClient(paths.registrationSocket);
      clients.push(registration);
      await registration.notify(true);
      const dra = new DraClient(paths.draSocket);
      clients.push(dra);
      const answer = await dra.prepare([
        { namespace: 'ns', name: 'whole', uid: 'uid-whole' },
        { namespace: 'ns', name: 'share', uid: 'uid-share' },
      ]);
      expect(answer['uid-whole']?.error).toBe('');
      expect(answer['uid-share']?.error).toBe('');
      const specs = Object.fromEntries(
        ['whole', 'share'].map((claim) => [
          claim,
          JSON.parse(readFileSync(path.join(dirs.cdiDir, `${DRIVER}-card_uid-${claim}.json`), 'utf8')),
        ]),
      );
      record('cdi-specs.json', specs);

      // The minor the driver itself gives the card, not NVML's index.
      const information = readFileSync(
        `/proc/driver/nvidia/gpus/${sysfsBusId(first['pci.bus_id'] ?? '')}/information`,
        'utf8',
      );
      const minor = /^Device Minor:\s*(\d+)/m.exec(information)?.[1];
      for (const [claim, spec] of Object.entries(specs)) {
        expect(cdiSpecProblems(spec), claim).toEqual([]);
        const nodes = [
          ...(spec.containerEdits?.deviceNodes ?? []),
          ...spec.devices.flatMap(
            (d: { containerEdits: { deviceNodes?: unknown[] } }) => d.containerEdits.deviceNodes ?? [],
          ),
        ].map((n: { path: string }) => n.path);
        expect(nodes, claim).toEqual(expect.arrayContaining(['/dev/nvidiactl', `/dev/nvidia${minor}`]));
        for (const node of nodes) expect(existsSync(node), `${claim}: ${node}`).toBe(true);
        const env = spec.devices[0].containerEdits.env as string[];
        expect(env, claim).toEqual(
          expect.arrayContaining([`NVIDIA_VISIBLE_DEVICES=${uuid}`, `CUDA_VISIBLE_DEVICES=${uuid}`]),
        );
      }
      expect(specs['share'].devices[0].containerEdits.env).toContain('GPUSTACK_NVIDIA_MEMORY_LIMIT_MIB_0=16384');
      expect(await dra.unprepare([{ namespace: 'ns', name: 'whole', uid: 'uid-whole' }])).toEqual({
        'uid-whole': { error: '' },
      });
      expect(existsSync(path.join(dirs.cdiDir, `${DRIVER}-card_uid-whole.json`))).toBe(false);
    } finally {
      for (const c of clients) c.close();
      await plugins.close();
    }
  });
});
