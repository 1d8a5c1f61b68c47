import { describe, expect, it } from 'vitest';
import {
  CDI_VERSION,
  buildClaimSpec,
  cdiKind,
  cdiSpecFileName,
  type AllocatedDevice,
  type CardFacts,
  type ClaimCard,
} from '../../src/dra/index.js';
import { MANUFACTURER_NAMES, type ManufacturerName } from '../../src/k8s/index.js';
import { cdiSpecProblems, parseCdiDeviceId } from '../support/cdi-spec.js';

const whole = (index: number, request = 'gpu'): AllocatedDevice => ({
  request,
  pool: 'node-a',
  device: `card-${index}`,
  index,
  shared: false,
});
const share = (index: number, shareID: string, memoryMiB: number): AllocatedDevice => ({
  request: 'share',
  pool: 'node-a',
  device: `card-${index}-shared`,
  index,
  shared: true,
  shareID,
  consumed: { memory: memoryMiB * 1024 * 1024, cores: 10, units: 160000 },
});
const facts = (index: number, uuid = `U-${index}`, drmNodes?: string[]): CardFacts => ({
  index,
  uuid,
  ...(drmNodes ? { drmNodes } : {}),
});
const ALL = () => true;

describe('buildClaimSpec', () => {
  it('writes a valid CDI spec for two whole cards of every manufacturer, never a device without edits', () => {
    for (const mfr of MANUFACTURER_NAMES) {
      const devices: ClaimCard[] = [
        { allocated: whole(2), card: facts(2, `U-2`, ['/dev/dri/card3', '/dev/dri/renderD130']) },
        { allocated: whole(0), card: facts(0, `U-0`, ['/dev/dri/card1', '/dev/dri/renderD128']) },
      ];
      for (const nodeExists of [ALL, () => false]) {
        const { spec, cdiDeviceIds } = buildClaimSpec(mfr, 'c0ffee-uid', devices, nodeExists);
        expect(cdiSpecProblems(spec), mfr).toEqual([]);
        expect(spec.kind).toBe(`${mfr}.gpustack.ai/card`);
        expect(cdiDeviceIds).toEqual([
          `${mfr}.gpustack.ai/card=c0ffee-uid-card-2`,
          `${mfr}.gpustack.ai/card=c0ffee-uid-card-0`,
        ]);
        for (const id of cdiDeviceIds) expect(parseCdiDeviceId(id), id).toBeDefined();
        // Our own variable lists the cards in index order, whatever order the allocation has.
        const own = `GPUSTACK_${mfr.toUpperCase()}_VISIBLE_DEVICES=U-0,U-2`;
        for (const d of spec.devices) expect(d.containerEdits.env).toContain(own);
      }
    }
  });

  it("sets each vendor's visibility variables: UUIDs where accepted, host ids for runtime hooks, local indices inside", () => {
    const two: ClaimCard[] = [
      { allocated: whole(3), card: facts(3, 'GPU-b') },
      { allocated: whole(1), card: facts(1, 'GPU-a') },
    ];
    const env = (mfr: ManufacturerName) =>
      buildClaimSpec(mfr, 'u', two, ALL).spec.devices[0]?.containerEdits.env?.filter((e) => !e.startsWith('GPUSTACK_'));
    expect(env('nvidia')).toEqual(['NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b', 'CUDA_VISIBLE_DEVICES=GPU-a,GPU-b']);
    expect(env('amd')).toEqual(['HIP_VISIBLE_DEVICES=0,1', 'ROCR_VISIBLE_DEVICES=GPU-a,GPU-b']);
    expect(env('hygon')).toEqual(['HIP_VISIBLE_DEVICES=0,1']);
    expect(env('ascend')).toEqual(['ASCEND_VISIBLE_DEVICES=1,3', 'ASCEND_RT_VISIBLE_DEVICES=0,1']);
    expect(env('cambricon')).toEqual(['MLU_VISIBLE_DEVICES=0,1']);
    expect(env('iluvatar')).toEqual(['IX_VISIBLE_DEVICES=1,3', 'CUDA_VISIBLE_DEVICES=0,1']);
    expect(env('mthreads')).toEqual(['MTHREADS_VISIBLE_DEVICES=1,3']);
    expect(env('metax')).toEqual([]);
    expect(env('thead')).toEqual([]);
  });

  it('falls back to indices where a card has no UUID', () => {
    const spec = buildClaimSpec('nvidia', 'u', [{ allocated: whole(4), card: facts(4, '') }], ALL).spec;
    expect(spec.devices[0]?.containerEdits.env).toEqual([
      'NVIDIA_VISIBLE_DEVICES=4',
      'CUDA_VISIBLE_DEVICES=0',
      'GPUSTACK_NVIDIA_VISIBLE_DEVICES=4',
    ]);
  });

  it('keeps only device nodes the host has', () => {
    const present = new Set(['/dev/nvidiactl', '/dev/nvidia0']);
    const { spec } = buildClaimSpec('nvidia', 'u', [{ allocated: whole(0), card: facts(0) }], (p) => present.has(p));
    expect(spec.containerEdits).toEqual({ deviceNodes: [{ path: '/dev/nvidiactl', permissions: 'rwm' }] });
    expect(spec.devices[0]?.containerEdits.deviceNodes).toEqual([{ path: '/dev/nvidia0', permissions: 'rwm' }]);
    const none = buildClaimSpec('nvidia', 'u', [{ allocated: whole(0), card: facts(0) }], () => false).spec;
    expect(none.containerEdits).toBeUndefined();
    expect(none.devices[0]?.containerEdits.deviceNodes).toBeUndefined();
  });

  it('carries the limits of shares per card position, summed per card; a whole card has none', () => {
    const { spec, cdiDeviceIds } = buildClaimSpec(
      'amd',
      'u',
      [
        { allocated: whole(0), card: facts(0) },
        { allocated: share(5, 's1', 14377), card: facts(5) },
        { allocated: share(5, 's2', 1024), card: facts(5) },
      ],
      ALL,
    );
    expect(cdiSpecProblems(spec)).toEqual([]);
    expect(cdiDeviceIds).toEqual([
      'amd.gpustack.ai/card=u-card-0',
      'amd.gpustack.ai/card=u-card-5-shared-s1',
      'amd.gpustack.ai/card=u-card-5-shared-s2',
    ]);
    expect(spec.devices[1]?.containerEdits.env?.filter((e) => /LIMIT|UNITS/.test(e))).toEqual([
      'GPUSTACK_AMD_MEMORY_LIMIT_MIB_1=15401',
      'GPUSTACK_AMD_CORES_LIMIT_PERCENT_1=20',
      'GPUSTACK_AMD_UNITS_1=320000',
    ]);
    // Every device of the claim carries the same variables, so no injection order hides one.
    expect(new Set(spec.devices.map((d) => JSON.stringify(d.containerEdits.env))).size).toBe(1);
  });

  it('names the spec file and kind after the driver, the file after the claim uid', () => {
    expect(cdiKind('thead')).toBe('thead.gpustack.ai/card');
    expect(cdiSpecFileName('nvidia', 'a/b')).toBe('nvidia.gpustack.ai-card_a_b.json');
    expect(CDI_VERSION).toBe('0.5.0');
  });
});

describe('the CDI rules helper', () => {
  const good = { cdiVersion: '0.5.0', kind: 'a.b/card', devices: [{ name: '1x', containerEdits: { env: ['A=1'] } }] };
  it('accepts a good spec and names what is wrong with bad ones', () => {
    expect(cdiSpecProblems(good)).toEqual([]);
    expect(cdiSpecProblems({ ...good, cdiVersion: '0.4.0' })).toEqual([
      "cdiVersion 0.4.0 is older than the 0.5.0 the spec's content needs",
    ]);
    expect(cdiSpecProblems({ ...good, kind: 'a.b/card.x' })).toEqual([
      "cdiVersion 0.5.0 is older than the 0.6.0 the spec's content needs",
    ]);
    expect(cdiSpecProblems({ ...good, kind: '-a/card' })).toEqual(['vendor "-a" must start with a letter']);
    expect(cdiSpecProblems({ ...good, devices: [] })).toEqual(['no devices']);
    expect(cdiSpecProblems({ ...good, devices: [{ name: 'a/b', containerEdits: {} }] })).toEqual([
      'device name "a/b" has \'/\'',
      'device a/b has empty containerEdits',
    ]);
    expect(
      cdiSpecProblems({
        ...good,
        devices: [{ name: 'x', containerEdits: { env: ['=1'], deviceNodes: [{ path: 'dev/x', permissions: 'rwx' }] } }],
      }),
    ).toEqual([
      'device x: env entry "=1" is not KEY=VALUE',
      'device x: device node path dev/x is not absolute',
      'device x: device node dev/x has permissions rwx',
    ]);
    expect(cdiSpecProblems({ kind: 'a/b', devices: [] })).toEqual(['missing cdiVersion']);
  });
});
