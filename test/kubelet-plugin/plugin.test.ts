import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DetectResult, Device } from '../../native/index.js';
import { sliceCardsOf } from '../../src/agent/index.js';
import { desiredSlices } from '../../src/dra/index.js';
import { KubeletPlugins, pluginPaths } from '../../src/kubelet-plugin/index.js';
import { cdiSpecProblems, parseCdiDeviceId } from '../support/cdi-spec.js';
import { DraClient, HealthClient, RegistrationClient, type Claim } from './kubelet-client.js';

const NODE = 'node-a';
const H200 = 143771;

function card(manufacturer: Device['manufacturer'], index: number, extra: Partial<Device> = {}): Device {
  return {
    manufacturer,
    index,
    uuid: `${manufacturer === 'nvidia' ? 'GPU' : 'X'}-${manufacturer}-${index}`,
    product: `${manufacturer} card`,
    memoryMiB: H200,
    cores: 132,
    ...extra,
  };
}

const DETECTION: DetectResult = {
  devices: [card('amd', 0, { pciBusId: '0000:11:00.0' }), card('nvidia', 0), card('nvidia', 1)],
  errors: [],
};

/** The slices the agent publishes for DETECTION's cards (the API's answer to the plugin's list). */
let publishedSlices: readonly object[] = [];

interface Result {
  driver: string;
  device: string;
  pool?: string;
  request?: string;
  shareID?: string;
  consumedCapacity?: Record<string, string>;
}

function resourceClaim(claim: Claim, results: Result[], uid = claim.uid): object {
  return {
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { name: claim.name, namespace: claim.namespace, uid },
    spec: { devices: { requests: [] } },
    status: {
      allocation: {
        devices: {
          results: results.map((r) => ({
            request: r.request ?? 'gpu',
            driver: r.driver,
            pool: r.pool ?? NODE,
            device: r.device,
            ...(r.shareID ? { shareID: r.shareID } : {}),
            ...(r.consumedCapacity ? { consumedCapacity: r.consumedCapacity } : {}),
          })),
        },
      },
    },
  };
}

let root: string;
let api: Map<string, object>;
let plugins: KubeletPlugins;
const clients: { close(): void }[] = [];

function dirs() {
  return {
    registryDir: path.join(root, 'plugins_registry'),
    pluginsDir: path.join(root, 'plugins'),
    cdiDir: path.join(root, 'cdi'),
    hostRoot: path.join(root, 'host'),
  };
}

function startPlugins(): KubeletPlugins {
  return new KubeletPlugins({
    node: NODE,
    ...dirs(),
    readClaim: async (namespace, name) => api.get(`${namespace}/${name}`),
    readSlices: async () => publishedSlices,
  });
}

function dra(driver: string): DraClient {
  const client = new DraClient(pluginPaths(driver, dirs().registryDir, dirs().pluginsDir).draSocket);
  clients.push(client);
  return client;
}

function claimOf(name: string, uid: string, results: Result[], namespace = 'team-a'): Claim {
  const claim = { namespace, name, uid };
  api.set(`${namespace}/${name}`, resourceClaim(claim, results));
  return claim;
}

/** Every spec file in the CDI folder, parsed and validated against the CDI rules. */
function cdiSpecs(): Record<
  string,
  {
    kind: string;
    containerEdits?: unknown;
    devices: { name: string; containerEdits: { env: string[]; deviceNodes?: { path: string }[] } }[];
  }
> {
  const out: Record<string, never> = {};
  let files: string[];
  try {
    files = readdirSync(dirs().cdiDir);
  } catch {
    return out;
  }
  for (const file of files) {
    expect(file, 'only finished specs are left in the CDI folder').toMatch(/\.json$/);
    const spec = JSON.parse(readFileSync(path.join(dirs().cdiDir, file), 'utf8'));
    expect(cdiSpecProblems(spec), file).toEqual([]);
    out[file] = spec as never;
  }
  return out;
}

/** The CDI device a prepared id names, from the specs on disk. */
function cdiDevice(id: string) {
  const parsed = parseCdiDeviceId(id);
  expect(parsed, id).toBeDefined();
  for (const spec of Object.values(cdiSpecs())) {
    if (spec.kind !== parsed?.kind) continue;
    const device = spec.devices.find((d) => d.name === parsed.name);
    if (device) return { spec, device };
  }
  throw new Error(`no CDI device ${id} in ${dirs().cdiDir}`);
}

beforeEach(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'gpustack-plugin-'));
  const host = dirs().hostRoot;
  for (const node of [
    'dev/nvidiactl',
    'dev/nvidia-uvm',
    'dev/nvidia0',
    'dev/nvidia1',
    'dev/kfd',
    'dev/dri/renderD129',
    'dev/dri/card1',
  ]) {
    mkdirSync(path.dirname(path.join(host, node)), { recursive: true });
    writeFileSync(path.join(host, node), '');
  }
  const drm = path.join(host, 'sys/bus/pci/devices/0000:11:00.0/drm');
  mkdirSync(path.join(drm, 'card1'), { recursive: true });
  mkdirSync(path.join(drm, 'renderD129'), { recursive: true });
  api = new Map();
  publishedSlices = desiredSlices({ name: NODE }, sliceCardsOf(DETECTION)).pools.flatMap((p) => p.slices);
  plugins = startPlugins();
  await plugins.update(DETECTION);
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await plugins.close();
  rmSync(root, { recursive: true, force: true });
});

describe('registration', () => {
  it('answers the handshake the kubelet performs for each driver found in the registry folder', async () => {
    const sockets = readdirSync(dirs().registryDir).sort();
    expect(sockets).toEqual(['amd.gpustack.ai-reg.sock', 'nvidia.gpustack.ai-reg.sock']);
    for (const socket of sockets) {
      const registration = new RegistrationClient(path.join(dirs().registryDir, socket));
      clients.push(registration);
      const info = await registration.getInfo();
      const driver = socket.replace(/-reg\.sock$/, '');
      expect(info).toEqual({
        type: 'DRAPlugin',
        name: driver,
        endpoint: path.join(dirs().pluginsDir, driver, 'dra.sock'),
        supported_versions: ['v1.DRAPlugin', 'v1alpha1.DRAResourceHealth'],
      });
      // The kubelet dials the endpoint before it reports success.
      await expect(dra(driver).unprepare([])).resolves.toEqual({});
      await registration.notify(true);
    }
    const status = plugins.status();
    expect(status.map((s) => [s.driver, s.serving, 'registered' in s && s.registered])).toEqual([
      ['amd.gpustack.ai', true, true],
      ['nvidia.gpustack.ai', true, true],
    ]);
    expect(plugins.healthy()).toBe(true);
  });

  it('records a refused registration', async () => {
    const registration = new RegistrationClient(path.join(dirs().registryDir, 'nvidia.gpustack.ai-reg.sock'));
    clients.push(registration);
    await registration.notify(false, 'version not supported');
    const nvidia = plugins.status().find((s) => s.driver === 'nvidia.gpustack.ai');
    expect(nvidia).toMatchObject({ registered: false, registrationError: 'version not supported' });
  });

  it('reports a plugin whose socket vanished as unhealthy', () => {
    rmSync(path.join(dirs().registryDir, 'amd.gpustack.ai-reg.sock'));
    expect(plugins.healthy()).toBe(false);
    expect(plugins.status().find((s) => s.driver === 'amd.gpustack.ai')?.serving).toBe(false);
  });
});

describe('NodePrepareResources', () => {
  it('prepares a whole card: its device node, the control nodes and the visibility variables', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    const answer = await dra('nvidia.gpustack.ai').prepare([claim]);
    expect(answer['uid-1']?.error).toBe('');
    expect(answer['uid-1']?.devices).toEqual([
      {
        request_names: ['gpu'],
        pool_name: NODE,
        device_name: 'card-1',
        cdi_device_ids: ['nvidia.gpustack.ai/card=uid-1-card-1'],
      },
    ]);
    const { spec, device } = cdiDevice('nvidia.gpustack.ai/card=uid-1-card-1');
    expect(device.containerEdits.deviceNodes).toEqual([{ path: '/dev/nvidia1', permissions: 'rwm' }]);
    expect(device.containerEdits.env).toEqual([
      'NVIDIA_VISIBLE_DEVICES=GPU-nvidia-1',
      'CUDA_VISIBLE_DEVICES=GPU-nvidia-1',
      'GPUSTACK_NVIDIA_VISIBLE_DEVICES=GPU-nvidia-1',
    ]);
    // /dev/nvidia-uvm-tools is not on this host: left out, or the runtime would refuse the container.
    expect(spec.containerEdits).toEqual({
      deviceNodes: [
        { path: '/dev/nvidiactl', permissions: 'rwm' },
        { path: '/dev/nvidia-uvm', permissions: 'rwm' },
      ],
    });
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-1.json']);
  });

  it("takes an NVIDIA card's device node from the driver's minor number, not from NVML's index", async () => {
    const host = dirs().hostRoot;
    const proc = path.join(host, 'proc/driver/nvidia/gpus/0000:1a:00.0');
    mkdirSync(proc, { recursive: true });
    writeFileSync(path.join(proc, 'information'), 'Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nDevice Minor: \t 5\n');
    writeFileSync(path.join(host, 'dev/nvidia5'), '');
    const detection = { devices: [...DETECTION.devices, card('nvidia', 2, { pciBusId: '0000:1a:00.0' })], errors: [] };
    await plugins.update(detection);
    publishedSlices = desiredSlices({ name: NODE }, sliceCardsOf(detection)).pools.flatMap((p) => p.slices);
    const claim = claimOf('third', 'uid-m', [{ driver: 'nvidia.gpustack.ai', device: 'card-2' }]);
    expect((await dra('nvidia.gpustack.ai').prepare([claim]))['uid-m']?.error).toBe('');
    expect(cdiDevice('nvidia.gpustack.ai/card=uid-m-card-2').device.containerEdits.deviceNodes).toEqual([
      { path: '/dev/nvidia5', permissions: 'rwm' },
    ]);
  });

  it('prepares two shares of one card with their summed limits, and answers the same ids when asked again', async () => {
    const share = (shareID: string, request: string): Result => ({
      driver: 'nvidia.gpustack.ai',
      device: 'card-0-shared',
      request,
      shareID,
      consumedCapacity: { memory: '14377Mi', units: '160k', cores: '10' },
    });
    const claim = claimOf('two-shares', 'uid-2', [share('s-1', 'a'), share('s-2', 'b')]);
    const client = dra('nvidia.gpustack.ai');
    const answer = await client.prepare([claim]);
    expect(answer['uid-2']?.error).toBe('');
    const devices = answer['uid-2']?.devices ?? [];
    expect(devices.map((d) => [d.request_names, d.device_name, d.share_id, d.cdi_device_ids])).toEqual([
      [['a'], 'card-0-shared', 's-1', ['nvidia.gpustack.ai/card=uid-2-card-0-shared-s-1']],
      [['b'], 'card-0-shared', 's-2', ['nvidia.gpustack.ai/card=uid-2-card-0-shared-s-2']],
    ]);
    const { device } = cdiDevice('nvidia.gpustack.ai/card=uid-2-card-0-shared-s-2');
    expect(device.containerEdits.env).toEqual([
      'NVIDIA_VISIBLE_DEVICES=GPU-nvidia-0',
      'CUDA_VISIBLE_DEVICES=GPU-nvidia-0',
      'GPUSTACK_NVIDIA_VISIBLE_DEVICES=GPU-nvidia-0',
      'GPUSTACK_NVIDIA_MEMORY_LIMIT_MIB_0=28754',
      'GPUSTACK_NVIDIA_CORES_LIMIT_PERCENT_0=20',
      'GPUSTACK_NVIDIA_UNITS_0=320000',
    ]);
    // Idempotent: the kubelet retries; the claim is not read again.
    api.clear();
    expect(await client.prepare([claim])).toEqual(answer);
  });

  it('prepares cards of two manufacturers, each by its own driver, AMD nodes from sysfs by PCI address', async () => {
    const claim = claimOf('mixed', 'uid-3', [
      { driver: 'nvidia.gpustack.ai', device: 'card-0' },
      { driver: 'amd.gpustack.ai', device: 'card-0', request: 'amd' },
    ]);
    const nvidia = await dra('nvidia.gpustack.ai').prepare([claim]);
    const amd = await dra('amd.gpustack.ai').prepare([claim]);
    expect(nvidia['uid-3']?.devices.map((d) => d.cdi_device_ids)).toEqual([['nvidia.gpustack.ai/card=uid-3-card-0']]);
    expect(amd['uid-3']?.devices.map((d) => d.cdi_device_ids)).toEqual([['amd.gpustack.ai/card=uid-3-card-0']]);
    const { spec, device } = cdiDevice('amd.gpustack.ai/card=uid-3-card-0');
    expect(device.containerEdits.deviceNodes?.map((n) => n.path)).toEqual(['/dev/dri/card1', '/dev/dri/renderD129']);
    expect(device.containerEdits.env).toEqual([
      'HIP_VISIBLE_DEVICES=0',
      'ROCR_VISIBLE_DEVICES=X-amd-0',
      'GPUSTACK_AMD_VISIBLE_DEVICES=X-amd-0',
    ]);
    expect(spec.containerEdits).toEqual({ deviceNodes: [{ path: '/dev/kfd', permissions: 'rwm' }] });
    expect(Object.keys(cdiSpecs()).sort()).toEqual([
      'amd.gpustack.ai-card_uid-3.json',
      'nvidia.gpustack.ai-card_uid-3.json',
    ]);
  });

  it('answers each claim of a batch on its own: uid mismatch, another node, a claim that is gone', async () => {
    const good = claimOf('good', 'uid-ok', [{ driver: 'nvidia.gpustack.ai', device: 'card-0' }]);
    const replaced = { namespace: 'team-a', name: 'replaced', uid: 'uid-old' };
    api.set(
      'team-a/replaced',
      resourceClaim(replaced, [{ driver: 'nvidia.gpustack.ai', device: 'card-0' }], 'uid-new'),
    );
    const elsewhere = claimOf('elsewhere', 'uid-far', [
      { driver: 'nvidia.gpustack.ai', device: 'card-0', pool: 'node-b' },
    ]);
    const gone = { namespace: 'team-a', name: 'gone', uid: 'uid-gone' };
    const answer = await dra('nvidia.gpustack.ai').prepare([good, replaced, elsewhere, gone]);
    expect(answer['uid-ok']?.error).toBe('');
    expect(answer['uid-old']).toEqual({
      devices: [],
      error: 'ResourceClaim team-a/replaced: uid is uid-new, the kubelet asked for uid-old (the claim was replaced)',
    });
    expect(answer['uid-far']).toEqual({
      devices: [],
      error:
        'ResourceClaim team-a/elsewhere: device card-0 of nvidia.gpustack.ai is allocated in pool node-b, not on this node (node-a)',
    });
    expect(answer['uid-gone']).toEqual({ devices: [], error: 'ResourceClaim team-a/gone not found' });
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-ok.json']);
  });

  it('refuses a card the node no longer has', async () => {
    const claim = claimOf('lost', 'uid-lost', [{ driver: 'nvidia.gpustack.ai', device: 'card-7' }]);
    const answer = await dra('nvidia.gpustack.ai').prepare([claim]);
    expect(answer['uid-lost']?.error).toBe('card-7: card 7 of nvidia.gpustack.ai is not on this node any more');
  });
});

describe('a claim that would over-commit its card (issue 46: a scheduler that counted an allocation twice)', () => {
  const NVIDIA = 'nvidia.gpustack.ai';
  const checkpointFile = () => path.join(dirs().pluginsDir, NVIDIA, 'checkpoint.json');
  const share = (memory: string): Result => ({
    driver: NVIDIA,
    device: 'card-0-shared',
    shareID: `share-${memory}`,
    consumedCapacity: { memory, units: '1', cores: '1' },
  });

  it('refuses the share that would take the card past its memory counter, naming the card, the counters and the claims; nothing of it is written, the prepared claims stay', async () => {
    const client = dra(NVIDIA);
    const first = claimOf('first', 'uid-a', [share('70000Mi')]);
    const second = claimOf('second', 'uid-b', [share('70000Mi')]);
    expect((await client.prepare([first, second]))['uid-b']?.error).toBe('');
    const specsBefore = cdiSpecs();
    const checkpointBefore = readFileSync(checkpointFile(), 'utf8');
    const third = claimOf('third', 'uid-c', [share('4000Mi')]);
    const answer = await client.prepare([third]);
    expect(answer['uid-c']).toEqual({
      devices: [],
      error:
        `ResourceClaim team-a/third not prepared: card-0 on ${NODE} (${NVIDIA}) is over-committed: ` +
        `memory 144000Mi held of ${H200}Mi; held by team-a/first (cores 1, memory 70000Mi, units 1), ` +
        'team-a/second (cores 1, memory 70000Mi, units 1), team-a/third (cores 1, memory 4000Mi, units 1)',
    });
    expect(cdiSpecs()).toEqual(specsBefore);
    expect(readFileSync(checkpointFile(), 'utf8')).toBe(checkpointBefore);
    // The kubelet retries: refused while the card is full, prepared once a holder is unprepared.
    expect((await client.prepare([third]))['uid-c']?.error).toMatch(/over-committed/);
    await client.unprepare([second]);
    expect((await client.prepare([third]))['uid-c']?.error).toBe('');
    expect(Object.keys(cdiSpecs()).sort()).toEqual([
      'nvidia.gpustack.ai-card_uid-a.json',
      'nvidia.gpustack.ai-card_uid-c.json',
    ]);
  });

  it('refuses the whole card beside a prepared share, within one batch too, and after a restart (the checkpoint keeps what each claim holds)', async () => {
    const shared = claimOf('shared', 'uid-s', [share('1Gi')]);
    const whole = claimOf('whole', 'uid-w', [{ driver: NVIDIA, device: 'card-0' }]);
    const other = claimOf('other', 'uid-o', [{ driver: NVIDIA, device: 'card-1' }]);
    const answer = await dra(NVIDIA).prepare([shared, whole, other]);
    expect(answer['uid-s']?.error).toBe('');
    expect(answer['uid-w']?.error).toMatch(
      /^ResourceClaim team-a\/whole not prepared: card-0 on node-a \(nvidia\.gpustack\.ai\) is over-committed: it is held whole and shared at once; .*held by team-a\/shared \(.*\), team-a\/whole \(whole\)$/,
    );
    expect(answer['uid-o']?.error).toBe('');
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    plugins = startPlugins();
    await plugins.update(DETECTION);
    expect((await dra(NVIDIA).prepare([whole]))['uid-w']?.error).toMatch(/held whole and shared at once/);
  });

  it('counts a claim an older checkpoint recorded without its consumption at the share default', async () => {
    // Ten default shares fill the card's cores (10 each of 100): the eleventh is over.
    const claims = Array.from({ length: 11 }, (_, i) =>
      claimOf(`d${i}`, `uid-d${i}`, [{ driver: NVIDIA, device: 'card-0-shared', shareID: `s${i}` }]),
    );
    const client = dra(NVIDIA);
    const answer = await client.prepare(claims.slice(0, 10));
    expect(Object.values(answer).map((a) => a.error)).toEqual(Array(10).fill(''));
    const checkpoint = JSON.parse(readFileSync(checkpointFile(), 'utf8')) as {
      claims: Record<string, { results?: unknown }>;
    };
    for (const entry of Object.values(checkpoint.claims)) delete entry.results;
    writeFileSync(checkpointFile(), JSON.stringify(checkpoint));
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    plugins = startPlugins();
    await plugins.update(DETECTION);
    expect((await dra(NVIDIA).prepare([claims[10] as Claim]))['uid-d10']?.error).toMatch(/cores 110 held of 100/);
  });

  it('prepares nothing on a card no published slice has: its counters are unknown', async () => {
    publishedSlices = [];
    const claim = claimOf('early', 'uid-e', [{ driver: NVIDIA, device: 'card-0' }]);
    expect((await dra(NVIDIA).prepare([claim]))['uid-e']?.error).toBe(
      'ResourceClaim team-a/early not prepared: card-0 is in no ResourceSlice of pool node-a: its counters are unknown',
    );
    expect(cdiSpecs()).toEqual({});
  });
});

describe('NodeUnprepareResources', () => {
  it('removes the spec and forgets the claim; unpreparing again or an unknown claim succeeds', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-0' }]);
    const client = dra('nvidia.gpustack.ai');
    await client.prepare([claim]);
    expect(Object.keys(cdiSpecs())).toHaveLength(1);
    expect(await client.unprepare([claim])).toEqual({ 'uid-1': { error: '' } });
    expect(cdiSpecs()).toEqual({});
    const checkpoint = JSON.parse(
      readFileSync(path.join(dirs().pluginsDir, 'nvidia.gpustack.ai', 'checkpoint.json'), 'utf8'),
    );
    expect(checkpoint.claims).toEqual({});
    expect(await client.unprepare([claim, { namespace: 'x', name: 'y', uid: 'never' }])).toEqual({
      'uid-1': { error: '' },
      never: { error: '' },
    });
  });
});

describe('restart', () => {
  it('after a restart, answers a prepared claim the same and unprepare still cleans up', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    const before = await dra('nvidia.gpustack.ai').prepare([claim]);
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    expect(readdirSync(dirs().registryDir), 'stopping removes the registration sockets').toEqual([]);

    // The API cannot be reached now; the checkpoint still knows the claim.
    plugins = new KubeletPlugins({
      node: NODE,
      ...dirs(),
      readClaim: () => Promise.reject(new Error('connect ECONNREFUSED')),
      readSlices: () => Promise.reject(new Error('connect ECONNREFUSED')),
    });
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    const client = dra('nvidia.gpustack.ai');
    expect(await client.prepare([claim])).toEqual(before);
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-1.json']);
    expect(await client.unprepare([claim])).toEqual({ 'uid-1': { error: '' } });
    expect(cdiSpecs()).toEqual({});
  });

  it('rewrites a spec lost while the claim stayed prepared', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    const client = dra('nvidia.gpustack.ai');
    const before = await client.prepare([claim]);
    rmSync(path.join(dirs().cdiDir, 'nvidia.gpustack.ai-card_uid-1.json'));
    expect(await client.prepare([claim])).toEqual(before);
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-1.json']);
  });

  it('an unprepare killed between removing the spec and saving the checkpoint is finished by the next one, after a restart', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    await dra('nvidia.gpustack.ai').prepare([claim]);
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    // What the kill left: the spec removed, the entry still in the checkpoint.
    rmSync(path.join(dirs().cdiDir, 'nvidia.gpustack.ai-card_uid-1.json'));
    plugins = startPlugins();
    await plugins.update(DETECTION);
    expect(await dra('nvidia.gpustack.ai').unprepare([claim])).toEqual({ 'uid-1': { error: '' } });
    const file = path.join(dirs().pluginsDir, 'nvidia.gpustack.ai', 'checkpoint.json');
    expect(JSON.parse(readFileSync(file, 'utf8')).claims).toEqual({});
    expect(cdiSpecs()).toEqual({});
  });

  it('a claim deleted from the API while the plugin was down is unprepared when it returns, without the kubelet', async () => {
    const kept = claimOf('kept', 'uid-kept', [{ driver: 'nvidia.gpustack.ai', device: 'card-0' }]);
    const gone = claimOf('gone', 'uid-gone', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    const renamed = claimOf('again', 'uid-old', [{ driver: 'amd.gpustack.ai', device: 'card-0' }]);
    await dra('nvidia.gpustack.ai').prepare([kept, gone]);
    await dra('amd.gpustack.ai').prepare([renamed]);
    for (const c of clients.splice(0)) c.close();
    await plugins.close();

    // While it was down: one claim deleted, one recreated under its name (another uid).
    api.delete('team-a/gone');
    claimOf('again', 'uid-new', [{ driver: 'amd.gpustack.ai', device: 'card-0' }]);
    plugins = startPlugins();
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-kept.json']);
    const checkpoint = (driver: string) =>
      Object.keys(JSON.parse(readFileSync(path.join(dirs().pluginsDir, driver, 'checkpoint.json'), 'utf8')).claims);
    expect(checkpoint('nvidia.gpustack.ai')).toEqual(['uid-kept']);
    expect(checkpoint('amd.gpustack.ai')).toEqual([]);
    // The kubelet's own unprepare, arriving later, still succeeds.
    expect(await dra('nvidia.gpustack.ai').unprepare([gone])).toEqual({ 'uid-gone': { error: '' } });
  });

  it('keeps a checkpointed claim it cannot read now (the API down), and checks again later', async () => {
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    await dra('nvidia.gpustack.ai').prepare([claim]);
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    let down = true;
    api.clear();
    plugins = new KubeletPlugins({
      node: NODE,
      ...dirs(),
      staleCheckEvery: 2,
      readClaim: async (namespace, name) => {
        if (down) throw new Error('connect ECONNREFUSED');
        return api.get(`${namespace}/${name}`);
      },
      readSlices: async () => publishedSlices,
    });
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    expect(Object.keys(cdiSpecs())).toEqual(['nvidia.gpustack.ai-card_uid-1.json']);
    down = false;
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    expect(Object.keys(cdiSpecs()), 'not due yet: every second detection').toHaveLength(1);
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    expect(cdiSpecs()).toEqual({});
  });

  it('removes the temporary files of a write a kill interrupted, and nothing else', async () => {
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    const cdi = dirs().cdiDir;
    const own = path.join(dirs().pluginsDir, 'nvidia.gpustack.ai');
    mkdirSync(cdi, { recursive: true });
    mkdirSync(own, { recursive: true });
    const leftovers = [
      path.join(cdi, '.nvidia.gpustack.ai-card_uid-9.json.4242.tmp'),
      path.join(own, '.checkpoint.json.4242.tmp'),
    ];
    for (const file of leftovers) writeFileSync(file, '{"half":');
    // Another vendor's spec and its half-written file are not ours to remove.
    const foreign = [path.join(cdi, 'other-vendor.json'), path.join(cdi, '.other-vendor.json.1.tmp')];
    for (const file of foreign) writeFileSync(file, '{}');
    plugins = startPlugins();
    await plugins.update(DETECTION);
    await plugins.staleChecks();
    expect(readdirSync(cdi).sort()).toEqual(['.other-vendor.json.1.tmp', 'other-vendor.json']);
    expect(readdirSync(own).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a checkpoint it cannot read fails the calls with a clear error, and the file is left alone', async () => {
    const file = path.join(dirs().pluginsDir, 'nvidia.gpustack.ai', 'checkpoint.json');
    for (const c of clients.splice(0)) c.close();
    await plugins.close();
    writeFileSync(file, '{"version": 9}');
    plugins = startPlugins();
    await plugins.update(DETECTION);
    const claim = claimOf('one-gpu', 'uid-1', [{ driver: 'nvidia.gpustack.ai', device: 'card-1' }]);
    const answer = await dra('nvidia.gpustack.ai').prepare([claim]);
    expect(answer['uid-1']?.error).toMatch(/^prepare team-a\/one-gpu: checkpoint .* is not one this agent wrote/);
    expect(readFileSync(file, 'utf8')).toBe('{"version": 9}');
  });
});

describe("NodeWatchResources (the kubelet's health stream)", () => {
  it("sends every device's health after each detection; a vanished card turns unhealthy, and healthy again when back", async () => {
    const health = new HealthClient(pluginPaths('nvidia.gpustack.ai', dirs().registryDir, dirs().pluginsDir).draSocket);
    clients.push(health);
    const stream = health.watch();
    clients.push({ close: () => stream.cancel() });
    // The snapshot of the detection that started the plugin arrives first.
    await vi.waitFor(() => expect(health.received).toHaveLength(1));
    const summary = (devices: { device: { device_name: string }; health: string; message: string }[]) =>
      devices.map((d) => [d.device.device_name, d.health, d.message]);
    expect(summary(health.received[0] ?? [])).toEqual([
      ['card-0', 'HEALTHY', ''],
      ['card-0-shared', 'HEALTHY', ''],
      ['card-1', 'HEALTHY', ''],
      ['card-1-shared', 'HEALTHY', ''],
    ]);
    expect(health.received[0]?.[0]?.device.pool_name).toBe(NODE);

    await plugins.update({
      devices: DETECTION.devices.filter((d) => !(d.manufacturer === 'nvidia' && d.index === 1)),
      errors: [],
    });
    await vi.waitFor(() => expect(health.received).toHaveLength(2));
    expect(summary(health.received[1] ?? []).slice(2)).toEqual([
      ['card-1', 'UNHEALTHY', 'the card is no longer detected'],
      ['card-1-shared', 'UNHEALTHY', 'the card is no longer detected'],
    ]);

    await plugins.update(DETECTION);
    await vi.waitFor(() => expect(health.received).toHaveLength(3));
    expect((health.received[2] ?? []).every((d) => d.health === 'HEALTHY')).toBe(true);
  });
});
