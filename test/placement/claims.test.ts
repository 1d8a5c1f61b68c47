/**
 * The per-card decision for pods that use claims (docs/architecture.md#admission-check and #ledger): free cards come from our
 * ResourceSlices minus the ResourceClaims' allocations, not from Pod requests; the verdict rules
 * stay (Ready, or Retry after 30 s naming the PodSet and the largest free block; never Rejected).
 */
import { describe, expect, it } from 'vitest';
import {
  ReceivedDeviceTaintRuleSchema,
  buildCordonRules,
  buildDeviceLedger,
  cardsResource,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceClaim,
  type ReceivedResourceClaimTemplate,
  type ReceivedResourceSlice,
} from '../../src/dra/index.js';
import type { Node } from '../../src/k8s/index.js';
import {
  NodeDevicesVerdictSchema,
  decideNodeDevices,
  type NodeDevicesVerdict,
  type Pod,
  type Workload,
} from '../../src/placement/index.js';
import { allocatedClaim, claimTemplate, nodePool } from '../dra/builders.js';
import {
  CHECK,
  H100,
  H100_FLAVOR,
  boundPod,
  deviceFlavor,
  flavorMap,
  gpuNode,
  gpus,
  makeWorkload,
} from './builders.js';

const CLAIMS_READY =
  'the assigned flavor pool has enough free cards (ResourceSlices minus ResourceClaims) to place every pod';

interface Scene {
  readonly nodes?: readonly Node[];
  readonly pods?: readonly Pod[];
  readonly slices?: readonly ReceivedResourceSlice[];
  readonly claims?: readonly ReceivedResourceClaim[];
  readonly templates?: readonly ReceivedResourceClaimTemplate[];
  /** Leave the DRA input out, as a checker whose DRA stores have not listed. */
  readonly noLedger?: boolean;
  readonly taintRules?: readonly ReceivedDeviceTaintRule[];
}

const TEMPLATES = [
  claimTemplate('one-card', [{ deviceClassName: `gpustack-${H100}` }]),
  claimTemplate('four-cards', [{ deviceClassName: `gpustack-${H100}`, count: 4 }]),
  claimTemplate('eight-cards', [{ deviceClassName: 'gpustack-nvidia', count: 8 }]),
  claimTemplate('slice-20g', [{ deviceClassName: `gpustack-${H100}-shared`, capacity: { memory: '20Gi' } }]),
  claimTemplate('slice-50g', [{ deviceClassName: `gpustack-${H100}-shared`, capacity: { memory: '50Gi' } }]),
  claimTemplate('card-and-slice', [
    { deviceClassName: `gpustack-${H100}` },
    { deviceClassName: `gpustack-${H100}-shared`, capacity: { memory: '20Gi' } },
  ]),
];

function decide(workload: Workload, scene: Scene = {}): NodeDevicesVerdict | undefined {
  const nodes = scene.nodes ?? [gpuNode('gpu-a', 8), gpuNode('gpu-b', 8)];
  const slices = scene.slices ?? nodes.flatMap((n) => nodePool(n.metadata.name, 8));
  const templates = scene.templates ?? TEMPLATES;
  const verdict = decideNodeDevices({
    workload,
    flavors: flavorMap(deviceFlavor()),
    nodes,
    pods: scene.pods ?? [],
    deviceResourceOf: () => 'nvidia.com/gpu',
    checkName: CHECK,
    ...(scene.noLedger
      ? {}
      : {
          claims: {
            ledger: buildDeviceLedger(slices, scene.claims ?? [], undefined, scene.taintRules ?? []),
            templates: (namespace, name) =>
              templates.find((t) => t.metadata.namespace === namespace && t.metadata.name === name),
          },
        }),
  });
  if (verdict !== undefined) NodeDevicesVerdictSchema.parse(verdict);
  return verdict;
}

/** Whole cards held on `node`: `card-<from>` … `card-<from + n - 1>`. */
function held(node: string, n: number, from = 0): ReceivedResourceClaim[] {
  return Array.from({ length: n }, (_, i) =>
    allocatedClaim(`${node}-held-${i}`, [{ node, device: `card-${from + i}` }]),
  );
}

function claimsWorkload(pods: number, template: string, flavors?: Record<string, string>): Workload {
  return makeWorkload('train')
    .podSet('workers', pods, [{ name: 'main', resources: { requests: { cpu: '1' } } }], {
      claimTemplates: { gpus: template },
      ...(flavors ? { flavors } : {}),
    })
    .obj();
}

/** The rules that cordon `card-<index>` of `node` (both its devices). */
function cordon(node: string, index: number): ReceivedDeviceTaintRule[] {
  const card = buildDeviceLedger(nodePool(node, 8), [])
    .cards(node)
    .find((c) => c.name === `card-${index}`);
  if (card === undefined) throw new Error(`no card-${index}`);
  return buildCordonRules(card, 'test', 'NoSchedule', 'resource.k8s.io/v1beta2').map((r) =>
    ReceivedDeviceTaintRuleSchema.parse(r),
  );
}

describe('decideNodeDevices with claims: a cordoned card is never placed on', () => {
  it('answers Retry for 8 cards on a node with 8 free but one cordoned; Ready once uncordoned', () => {
    const scene = { nodes: [gpuNode('gpu-a', 8)], taintRules: cordon('gpu-a', 5) };
    expect(decide(claimsWorkload(1, 'eight-cards'), scene)).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining('the largest free block is 7 cards (node gpu-a'),
    });
    expect(decide(claimsWorkload(1, 'eight-cards'), { nodes: scene.nodes })).toMatchObject({ state: 'Ready' });
  });

  it('places no share on a cordoned card: 8 shares of 50Gi need 8 cards, one is cordoned', () => {
    const scene = { nodes: [gpuNode('gpu-a', 8)], taintRules: cordon('gpu-a', 0) };
    // One 50Gi share per card (80Gi cards): 8 pods need 8 cards, 7 are open.
    expect(decide(claimsWorkload(8, 'slice-50g'), scene)).toMatchObject({ state: 'Retry' });
    expect(decide(claimsWorkload(7, 'slice-50g'), scene)).toMatchObject({ state: 'Ready' });
  });
});

describe('decideNodeDevices with claims: free cards from the ledger', () => {
  it('answers Retry for 8 cards over two nodes with 4 free each, naming the largest free block', () => {
    const verdict = decide(claimsWorkload(1, 'eight-cards'), { claims: [...held('gpu-a', 4), ...held('gpu-b', 4)] });
    expect(verdict).toEqual({
      name: CHECK,
      state: 'Retry',
      requeueAfterSeconds: 30,
      message:
        `podset "workers": 1 pod × 8 cards by resource claims do not fit in flavor ${H100_FLAVOR}; ` +
        'the largest free block is 4 cards (node gpu-a, from ResourceSlices and ResourceClaims); ' +
        'will retry as capacity frees',
    });
  });

  it('answers Ready for 8 cards once one node has 8 free', () => {
    expect(decide(claimsWorkload(1, 'eight-cards'), { claims: held('gpu-a', 4) })).toEqual({
      name: CHECK,
      state: 'Ready',
      message: CLAIMS_READY,
    });
  });

  it('counts the ledger, not Pod requests: bound device-plugin pods do not take claimable cards', () => {
    const pods = [boundPod('plugin-a', 'gpu-a', [gpus(8)]), boundPod('plugin-b', 'gpu-b', [gpus(8)])];
    expect(decide(claimsWorkload(2, 'four-cards'), { pods })?.state).toBe('Ready');
  });

  it('places the pods of a PodSet one after another: 4 pods × 4 cards fill both nodes, a fifth does not fit', () => {
    expect(decide(claimsWorkload(4, 'four-cards'))?.state).toBe('Ready');
    expect(decide(claimsWorkload(5, 'four-cards'))).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining('5 pods × 4 cards by resource claims do not fit'),
    });
  });

  it('has no cards on a node whose cards are not published, whatever its count label says', () => {
    const verdict = decide(claimsWorkload(1, 'one-card'), { slices: [] });
    expect(verdict?.state).toBe('Retry');
    expect(verdict?.message).toContain('the largest free block is 0 cards (node gpu-a');
  });

  it('ignores a stale pool generation: a node now publishing 4 cards cannot hold 8', () => {
    const slices = [
      ...nodePool('gpu-a', 8, { generation: 3 }),
      ...nodePool('gpu-a', 4, { generation: 4 }),
      ...nodePool('gpu-b', 4),
    ];
    const verdict = decide(claimsWorkload(1, 'eight-cards'), { slices });
    expect(verdict?.state).toBe('Retry');
    expect(verdict?.message).toContain('the largest free block is 4 cards (node gpu-a');
  });

  it('finds the flavor among the assigned ones when Kueue assigned no credits resource', () => {
    // Kueue 0.17 maps our DeviceClasses to cards.gpustack.ai/<mfr> (kueue-config), not to credits.
    const flavors = { [cardsResource('nvidia')]: H100_FLAVOR, cpu: H100_FLAVOR };
    expect(decide(claimsWorkload(1, 'eight-cards', flavors))?.state).toBe('Ready');
    expect(
      decide(claimsWorkload(1, 'eight-cards', flavors), { claims: [...held('gpu-a', 1), ...held('gpu-b', 1)] })?.state,
    ).toBe('Retry');
  });

  it('answers Retry while a template is missing or the ledger is not listed, never Ready on no asks', () => {
    expect(decide(claimsWorkload(1, 'no-such-template'))).toMatchObject({
      state: 'Retry',
      message:
        'podset "workers": claim "gpus": ResourceClaimTemplate "no-such-template" is not known to the checker; ' +
        'will retry once it is observed',
    });
    expect(decide(claimsWorkload(1, 'one-card'), { noLedger: true })).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining('has not listed ResourceSlices, ResourceClaims and ResourceClaimTemplates'),
    });
  });
});

describe('decideNodeDevices with claims: shares by capacity', () => {
  // The node's labels say 8 cards (the flavor selects by them); its pool publishes one: the ledger counts one.
  const oneCard = { nodes: [gpuNode('gpu-a', 8)], slices: nodePool('gpu-a', 1) };

  it('fits a share in what a partly consumed card has left, and not more', () => {
    const claims = [
      allocatedClaim('s', [
        { node: 'gpu-a', device: 'card-0-shared', consumed: { memory: '40Gi', units: '800k', cores: '50' } },
      ]),
    ];
    expect(decide(claimsWorkload(1, 'slice-20g'), { ...oneCard, claims })?.state).toBe('Ready');
    expect(decide(claimsWorkload(2, 'slice-20g'), { ...oneCard, claims })?.state).toBe('Ready');
    // 80 GiB − 40 GiB consumed leaves 40 GiB: a third 20 GiB share does not fit, nor one of 50 GiB.
    expect(decide(claimsWorkload(3, 'slice-20g'), { ...oneCard, claims })?.state).toBe('Retry');
    expect(decide(claimsWorkload(1, 'slice-50g'), { ...oneCard, claims })?.state).toBe('Retry');
  });

  it('never shares a card allocated whole, nor gives a shared card out whole', () => {
    const whole = [allocatedClaim('w', [{ node: 'gpu-a', device: 'card-0' }])];
    expect(decide(claimsWorkload(1, 'slice-20g'), { ...oneCard, claims: whole })?.state).toBe('Retry');
    const share = [allocatedClaim('s', [{ node: 'gpu-a', device: 'card-0-shared' }])];
    expect(decide(claimsWorkload(1, 'one-card'), { ...oneCard, claims: share })?.state).toBe('Retry');
  });

  it('puts a share on a card already shared before it breaks a free one', () => {
    // card-0 carries a share; the pod asks a whole card and a 20 GiB share: both fit on two cards only
    // if the share joins card-0 and card-1 stays whole.
    const twoCards = { nodes: [gpuNode('gpu-a', 8)], slices: nodePool('gpu-a', 2) };
    const claims = [allocatedClaim('s', [{ node: 'gpu-a', device: 'card-0-shared' }])];
    expect(decide(claimsWorkload(1, 'card-and-slice'), { ...twoCards, claims })?.state).toBe('Ready');
    expect(decide(claimsWorkload(2, 'card-and-slice'), { ...twoCards, claims })?.state).toBe('Retry');
  });

  it('counts the default tenth for each share without a capacity request: ten fit on a card, an eleventh does not', () => {
    const templates = [claimTemplate('tenth', [{ deviceClassName: 'gpustack-nvidia-shared' }])];
    expect(decide(claimsWorkload(10, 'tenth'), { ...oneCard, templates })?.state).toBe('Ready');
    expect(decide(claimsWorkload(11, 'tenth'), { ...oneCard, templates })).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining('11 pods × 1 share by resource claims do not fit'),
    });
  });
});

/**
 * One card counted once (docs/architecture.md#device-owner): a plain `nvidia.com/gpu: n` request
 * DRA serves holds a ResourceClaim the ledger counts, and on a node where both kinds of requests
 * meet (an owner change), cards the claims hold are not free for device-plugin requests either.
 */
describe('decideNodeDevices: device-plugin requests and claims on one node', () => {
  /** A Pod the scheduler served `nvidia.com/gpu` through DRA: its container asks, its claim holds. */
  function servedPod(name: string, node: string, cards: number): Pod {
    const pod = boundPod(name, node, [gpus(cards)]);
    return {
      ...pod,
      status: {
        phase: 'Running',
        extendedResourceClaimStatus: {
          requestMappings: [{ resourceName: 'nvidia.com/gpu' }],
        },
      },
    };
  }
  const nodes = [gpuNode('gpu-a', 8)];
  const slices = nodePool('gpu-a', 8);
  const plain = (cards: number) =>
    makeWorkload('plain')
      .podSet('main', 1, [gpus(cards)])
      .obj();

  it('counts a Pod DRA served once: by its claim, not by its request as well', () => {
    // 4 cards held by the Pod's extended-resource claim: 4 left, not 0.
    const scene = { nodes, slices, pods: [servedPod('served', 'gpu-a', 4)], claims: held('gpu-a', 4) };
    expect(decide(plain(4), scene)?.state).toBe('Ready');
    expect(decide(plain(5), scene)).toMatchObject({
      state: 'Retry',
      message: expect.stringContaining('the largest free block is 4 cards (node gpu-a)'),
    });
  });

  it('subtracts the cards claims hold from a node device-plugin requests are placed on, and the Pods as before', () => {
    // 3 cards in claims (a change of owner waiting for them) + 2 by device-plugin Pods: 3 of 8 free.
    const scene = { nodes, slices, pods: [boundPod('plugin', 'gpu-a', [gpus(2)])], claims: held('gpu-a', 3) };
    expect(decide(plain(3), scene)?.state).toBe('Ready');
    expect(decide(plain(4), scene)?.message).toContain('the largest free block is 3 cards (node gpu-a)');
    // A shared card is taken for a whole-card request too.
    const shared = allocatedClaim('share', [{ node: 'gpu-a', device: 'card-7-shared' }]);
    expect(decide(plain(3), { ...scene, claims: [...held('gpu-a', 3), shared] })?.message).toContain(
      'the largest free block is 2 cards (node gpu-a)',
    );
  });

  it('without the ledger (no DRA stores) it counts the Pods alone, as before', () => {
    const scene = {
      nodes,
      slices,
      pods: [boundPod('plugin', 'gpu-a', [gpus(2)])],
      claims: held('gpu-a', 3),
      noLedger: true,
    };
    expect(decide(plain(6), scene)?.state).toBe('Ready');
  });
});
