// All nine manufacturers end to end on one node, from the fake vendor libraries: the addon detects
// one card of each, the agent's kubelet plugins start one driver per manufacturer, and each driver
// answers the kubelet's registration handshake and prepares a whole card into a valid CDI spec.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { sliceCardsOf } from '../../src/agent/index.js';
import { desiredSlices } from '../../src/dra/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { KubeletPlugins, pluginPaths } from '../../src/kubelet-plugin/index.js';
import { DraClient, RegistrationClient } from '../kubelet-plugin/kubelet-client.js';
import { cdiSpecProblems } from '../support/cdi-spec.js';
import { detectOn, FAKE_LIBRARIES, MiB, type FakeMachine } from '../../harness/native/fake-machine.js';

const NODE = 'node-nine';

const MACHINE: FakeMachine = {
  lib: {
    nvidia: { driver: '570.124.06', runtime: 12080 },
    cambricon: { driver: '5.10.22' },
    metax: { driver: '3.6.11', runtime: '3.5.0.18' },
    mthreads: { driver: '2.7.0' },
    thead: { driver: '2.1.0-ra1f23041713', runtime: 12030 },
    iluvatar: { driver: '4.2.0', runtime: 10020 },
    hygon: { driver: '6.3.11-V1.5.2' },
    ascend: { driver: '25.5.1' },
    amd: { driver: '6.10.5' },
  },
  devices: {
    nvidia: [{ name: 'NVIDIA H200', uuid: 'GPU-h200-0', memory: 143771n * MiB, cores: 132, cc: '9.0' }],
    amd: [
      {
        name: 'AMD Instinct MI300X OAM',
        uuid: '3dff74a1-0000-1000-80a5-000000000000',
        memory: 196592n * MiB,
        cores: 304,
        gfx: 0x942,
      },
    ],
    hygon: [{ name: 'K100_AI', uniqueId: '0x1d94aa0011', memory: 65520n * MiB, gfx: 928 }],
    ascend: [{ name: '910B2', cores: 24, memory: 65536, die: 'E0F4EE60 802061B1 6A691492 89528485 104301E3' }],
    cambricon: [{ name: 'MLU370-X8', uuid: '5f3ca1d2e7b64c8f9a0b1c2d3e4f5a6b7c8', memory: 49152 }],
    iluvatar: [{ name: 'Iluvatar BI-V150', uuid: 'GPU-ix', memory: 65536n * MiB }],
    metax: [{ name: 'MXC500', uuid: 'GPU-8c2a1f00-5e6b', memory: 65536 * 1024 }],
    mthreads: [{ name: 'MTT S4000', uuid: 'c1e5f0aa-0000-4000-9000-000000000001', memory: 49152n * MiB, cores: 8192 }],
    thead: [{ name: 'PPU-ZW810E', uuid: 'GPU-ppu-0', memory: 98304n * MiB, cores: 16384, cc: '8.0' }],
  },
};

const root = mkdtempSync(path.join(os.tmpdir(), 'gpustack-nine-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('kubelet plugins on fake libraries of all nine manufacturers', () => {
  it('registers nine drivers and prepares a card of each into a valid CDI spec', async () => {
    const result = await detectOn(MACHINE, {
      libraries: {
        nvidia: FAKE_LIBRARIES.nvidia,
        amd: FAKE_LIBRARIES.amd,
        hygon: FAKE_LIBRARIES.hygon,
        ascend: FAKE_LIBRARIES.ascend,
        cambricon: FAKE_LIBRARIES.cambricon,
        iluvatar: FAKE_LIBRARIES.iluvatar,
        metax: FAKE_LIBRARIES.metax,
        mthreads: FAKE_LIBRARIES.mthreads,
        thead: FAKE_LIBRARIES.thead,
      },
    });
    expect(result.errors).toEqual([]);
    expect(result.devices.map((d) => d.manufacturer)).toEqual([...MANUFACTURER_NAMES]);

    const dirs = {
      registryDir: path.join(root, 'plugins_registry'),
      pluginsDir: path.join(root, 'plugins'),
      cdiDir: path.join(root, 'cdi'),
    };
    const claims = new Map<string, object>();
    const plugins = new KubeletPlugins({
      node: NODE,
      ...dirs,
      hostRoot: path.join(root, 'host'),
      readClaim: async (namespace, name) => claims.get(`${namespace}/${name}`),
      // The slices the agent would publish for these cards: the counters a claim is checked against.
      readSlices: async () => desiredSlices({ name: NODE }, sliceCardsOf(result)).pools.flatMap((p) => p.slices),
    });
    const clients: { close(): void }[] = [];
    try {
      await plugins.update(result);
      expect(readdirSync(dirs.registryDir).sort()).toEqual(
        MANUFACTURER_NAMES.map((m) => `${m}.gpustack.ai-reg.sock`).sort(),
      );
      for (const mfr of MANUFACTURER_NAMES) {
        const driver = `${mfr}.gpustack.ai`;
        const paths = pluginPaths(driver, dirs.registryDir, dirs.pluginsDir);
        const registration = new RegistrationClient(paths.registrationSocket);
        clients.push(registration);
        expect(await registration.getInfo()).toEqual({
          type: 'DRAPlugin',
          name: driver,
          endpoint: paths.draSocket,
          supported_versions: ['v1.DRAPlugin', 'v1alpha1.DRAResourceHealth'],
        });
        await registration.notify(true);

        const uid = `uid-${mfr}`;
        claims.set(`ns/${mfr}`, {
          metadata: { name: mfr, namespace: 'ns', uid },
          status: { allocation: { devices: { results: [{ request: 'r', driver, pool: NODE, device: 'card-0' }] } } },
        });
        const dra = new DraClient(paths.draSocket);
        clients.push(dra);
        const answer = await dra.prepare([{ namespace: 'ns', name: mfr, uid }]);
        expect(answer[uid]?.error, mfr).toBe('');
        expect(answer[uid]?.devices.map((d) => d.cdi_device_ids)).toEqual([[`${driver}/card=${uid}-card-0`]]);
        const spec = JSON.parse(readFileSync(path.join(dirs.cdiDir, `${driver}-card_${uid}.json`), 'utf8'));
        expect(cdiSpecProblems(spec), mfr).toEqual([]);
        const uuid = result.devices.find((d) => d.manufacturer === mfr)?.uuid;
        expect(spec.devices[0].containerEdits.env).toContain(`GPUSTACK_${mfr.toUpperCase()}_VISIBLE_DEVICES=${uuid}`);
      }
      expect(plugins.status().filter((s) => 'registered' in s && s.registered)).toHaveLength(9);
    } finally {
      for (const c of clients) c.close();
      await plugins.close();
    }
  });
});
