import { describe, expect, it } from 'vitest';
import {
  OWNER_TAINT,
  advertised,
  claimsHoldingCards,
  decideOwnership,
  desiredSlices,
  holdsDevicePluginCards,
  wantedOwner,
  type SliceCard,
} from '../../src/dra/index.js';
import { resolveSettings } from '../../src/contracts/index.js';

const GPU = 'nvidia.com/gpu';
const NONE = { claims: 0, devicePluginPods: 0 };

function claim(results: { driver: string; pool: string }[]): unknown {
  return { metadata: { name: 'c' }, status: { allocation: { devices: { results } } } };
}

function pod(resources: Record<string, unknown>, status: Record<string, unknown> = {}, init = false): unknown {
  const containers = [{ name: 'main', resources }];
  return {
    metadata: { name: 'p' },
    spec: init ? { containers: [{ name: 'x' }], initContainers: containers } : { containers },
    status,
  };
}

describe('wantedOwner: the scheduler rule for a class that maps <base> (KEP-5004)', () => {
  it('Auto: the device plugin where the Node advertises <base> above zero, DRA otherwise', () => {
    expect(wantedOwner('Auto', GPU, { [GPU]: '4', cpu: '8' })).toEqual({
      owner: 'DevicePlugin',
      reason: 'the node advertises nvidia.com/gpu: 4 (a device plugin serves it)',
    });
    // A removed device plugin leaves `<base>: 0` in the status: the scheduler serves DRA there.
    expect(wantedOwner('Auto', GPU, { [GPU]: '0' }).owner).toBe('DRA');
    expect(wantedOwner('Auto', GPU, { cpu: '8' }).owner).toBe('DRA');
    expect(wantedOwner('Auto', GPU, undefined).reason).toBe(
      'the node does not advertise nvidia.com/gpu (no device plugin serves it)',
    );
    // Another vendor's resource decides nothing for this one.
    expect(wantedOwner('Auto', GPU, { 'amd.com/gpu': '8' }).owner).toBe('DRA');
  });

  it('an explicit setting wins over what the Node advertises', () => {
    expect(wantedOwner('DRA', GPU, { [GPU]: '4' })).toEqual({
      owner: 'DRA',
      reason: 'deviceOwners sets DRA in the settings',
    });
    expect(wantedOwner('DevicePlugin', GPU, {}).owner).toBe('DevicePlugin');
  });

  it('reads quantities as the API writes them, and nothing else', () => {
    expect(advertised({ [GPU]: '2k' }, GPU)).toBe(2000);
    expect(advertised({ [GPU]: 'lots' }, GPU)).toBe(0);
    expect(advertised({ [GPU]: '-1' }, GPU)).toBe(0);
    // A resource named like an Object.prototype member reads as absent.
    expect(advertised({}, 'constructor')).toBe(0);
  });
});

describe('decideOwnership: no change of owner while the other side holds cards', () => {
  const toPlugin = wantedOwner('Auto', GPU, { [GPU]: '4' });
  const toDra = wantedOwner('Auto', GPU, {});

  it('follows the wish when nothing holds a card', () => {
    expect(decideOwnership('Auto', GPU, toPlugin, NONE)).toEqual({
      owner: 'DevicePlugin',
      wanted: 'DevicePlugin',
      setting: 'Auto',
      resource: GPU,
      reason: toPlugin.reason,
    });
    expect(decideOwnership('Auto', GPU, toDra, NONE).owner).toBe('DRA');
  });

  it('keeps DRA while claims hold cards, and the device plugin while its Pods do', () => {
    const waiting = decideOwnership('Auto', GPU, toPlugin, { claims: 2, devicePluginPods: 0 });
    expect(waiting.owner).toBe('DRA');
    expect(waiting.wanted).toBe('DevicePlugin');
    expect(waiting.pending).toBe(
      '2 ResourceClaims hold cards here; DRA hands the cards to the device plugin once they are released',
    );
    const back = decideOwnership('Auto', GPU, toDra, { claims: 0, devicePluginPods: 1 });
    expect(back.owner).toBe('DevicePlugin');
    expect(back.pending).toBe('1 Pod holds cards of the device plugin here; DRA takes the cards once they end');
    // Holders of the side that keeps the cards anyway change nothing.
    expect(decideOwnership('Auto', GPU, toDra, { claims: 3, devicePluginPods: 0 }).pending).toBeUndefined();
  });
});

describe('holders', () => {
  it('counts the claims with a device of this driver in this node’s pool', () => {
    const claims = [
      claim([{ driver: 'nvidia.gpustack.ai', pool: 'gpu-a' }]),
      claim([
        { driver: 'nvidia.gpustack.ai', pool: 'gpu-a' },
        { driver: 'nvidia.gpustack.ai', pool: 'gpu-a' },
      ]),
      claim([{ driver: 'nvidia.gpustack.ai', pool: 'gpu-b' }]),
      claim([{ driver: 'amd.gpustack.ai', pool: 'gpu-a' }]),
      { metadata: { name: 'unallocated' } },
      'not an object',
    ];
    expect(claimsHoldingCards(claims, 'nvidia', 'gpu-a')).toBe(2);
    expect(claimsHoldingCards(claims, 'amd', 'gpu-a')).toBe(1);
    expect(claimsHoldingCards(claims, 'nvidia', 'gpu-c')).toBe(0);
  });

  it('a Pod holds device-plugin cards unless it ended or the scheduler served the resource through DRA', () => {
    expect(holdsDevicePluginCards(pod({ limits: { [GPU]: '1' } }), GPU)).toBe(true);
    expect(holdsDevicePluginCards(pod({ requests: { [GPU]: 2 } }, {}, true), GPU)).toBe(true);
    expect(holdsDevicePluginCards(pod({ requests: { cpu: '1' } }), GPU)).toBe(false);
    expect(holdsDevicePluginCards(pod({ limits: { [GPU]: '1' } }, { phase: 'Succeeded' }), GPU)).toBe(false);
    const served = {
      extendedResourceClaimStatus: {
        resourceClaimName: 'p-extended-resources-x',
        requestMappings: [{ containerName: 'main', resourceName: GPU, requestName: 'container-0-request-0' }],
      },
    };
    expect(holdsDevicePluginCards(pod({ limits: { [GPU]: '1' } }, served), GPU)).toBe(false);
    // The mapping covers only the resources it names.
    expect(holdsDevicePluginCards(pod({ limits: { 'amd.com/gpu': '1' } }, served), 'amd.com/gpu')).toBe(true);
  });
});

describe('the settings field', () => {
  it('accepts Auto, DRA and DevicePlugin per manufacturer, and refuses anything else by name', () => {
    const ok = resolveSettings({ deviceOwners: { nvidia: 'DevicePlugin', amd: 'DRA' } });
    expect(ok.ok && ok.settings.deviceOwners).toEqual({ nvidia: 'DevicePlugin', amd: 'DRA' });
    const bad = resolveSettings({ deviceOwners: { nvidia: 'Kubelet' } });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toContain('spec.deviceOwners.nvidia');
    expect(resolveSettings({ deviceOwners: { intel: 'DRA' } }).ok).toBe(false);
  });
});

describe('a card handed over', () => {
  it('is published with both devices tainted gpustack.ai/device-owner=DevicePlugin:NoSchedule', () => {
    const card: SliceCard = {
      manufacturer: 'nvidia',
      index: 0,
      product: 'NVIDIA H100 80GB HBM3',
      memoryMiB: 81559,
      cores: 132,
      uuid: 'GPU-1',
      handover: true,
    };
    const { pools } = desiredSlices({ name: 'gpu-a' }, [card]);
    const devices = pools.flatMap((p) => p.slices).flatMap((s) => s.spec.devices ?? []);
    expect(devices.map((d) => [d.name, d.taints])).toEqual([
      ['card-0', [OWNER_TAINT]],
      ['card-0-shared', [OWNER_TAINT]],
    ]);
    expect(OWNER_TAINT).toEqual({ key: 'gpustack.ai/device-owner', value: 'DevicePlugin', effect: 'NoSchedule' });
  });
});
