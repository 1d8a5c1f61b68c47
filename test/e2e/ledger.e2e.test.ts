/**
 * The ledger's reading of resource.k8s.io/v1 against a real kube-apiserver: the objects the
 * unit tests build (docs/architecture.md#resourceslices: a counter-set slice and a device slice per pool, whole and
 * shared devices per card; claims allocated whole and by capacity) pass the API server's
 * validation, come back through list as the checker's informer reads them (schema, then slim),
 * and give the ledger the counts the unit tests expect.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RESOURCE_CLAIMS, RESOURCE_SLICES } from '../../src/admission/index.js';
import {
  DEVICE_TAINT_RULES_NOT_SERVED,
  buildDeviceLedger,
  type ReceivedResourceClaim,
  type ReceivedResourceSlice,
} from '../../src/dra/index.js';
import { allocatedClaim, nodePool } from '../dra/builders.js';
import { useCluster } from '../../harness/e2e/use-cluster.js';
import { CLI } from '../../harness/e2e/hook-server.js';

const RESOURCE = '/apis/resource.k8s.io/v1';
// No DeviceTaintRule served (1.36's default; 1.37 with the resource turned off): the CLI's refusal below.
const cluster = useCluster({ controllerManager: false, deviceTaintRules: false });

/** What the API server accepts of a builder's object: identity and spec (status is written separately). */
function forCreate(object: { metadata: { name: string; namespace?: string | undefined } }, extra: object): string {
  const { metadata } = object;
  return JSON.stringify({
    ...extra,
    metadata: { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) },
  });
}

describe('the ledger on a real API server (resource.k8s.io/v1)', () => {
  it('accepts the modelled slices and allocations, and the ledger reads them back: 4 cards, 1 whole, 1 shared', async () => {
    const client = cluster.client;
    for (const slice of nodePool('gpu-a', 4)) {
      await client.request(
        'POST',
        `${RESOURCE}/resourceslices`,
        forCreate(slice, { apiVersion: slice.apiVersion, kind: slice.kind, spec: slice.spec }),
        'application/json',
      );
    }
    await client.request(
      'POST',
      '/api/v1/namespaces',
      JSON.stringify({ metadata: { name: 'team-a' } }),
      'application/json',
    );
    const claims: [ReceivedResourceClaim, object][] = [
      [
        allocatedClaim('whole', [{ node: 'gpu-a', device: 'card-0' }]),
        { requests: [{ name: 'r0', exactly: { deviceClassName: 'gpustack-nvidia' } }] },
      ],
      [
        allocatedClaim('slice', [
          { node: 'gpu-a', device: 'card-1-shared', consumed: { memory: '20Gi', units: '160k', cores: '10' } },
        ]),
        {
          requests: [
            {
              name: 'r0',
              exactly: { deviceClassName: 'gpustack-nvidia-shared', capacity: { requests: { memory: '20Gi' } } },
            },
          ],
        },
      ],
    ];
    for (const [claim, devices] of claims) {
      const path = `${RESOURCE}/namespaces/team-a/resourceclaims`;
      const created = await client.request<{ metadata: { resourceVersion: string; uid: string } }>(
        'POST',
        path,
        forCreate(claim, { apiVersion: 'resource.k8s.io/v1', kind: 'ResourceClaim', spec: { devices } }),
        'application/json',
      );
      const results = (claim.status?.allocation?.devices?.results ?? []).map((r) => ({
        ...r,
        // A share of a multi-allocatable device carries a share ID (API validation).
        ...(r.consumedCapacity ? { shareID: '3f6f0a52-4a1c-4b2e-9a1f-1d2c3b4a5e6f' } : {}),
      }));
      await client.request(
        'PUT',
        `${path}/${claim.metadata.name}/status`,
        JSON.stringify({
          apiVersion: 'resource.k8s.io/v1',
          kind: 'ResourceClaim',
          metadata: {
            name: claim.metadata.name,
            namespace: 'team-a',
            resourceVersion: created.metadata.resourceVersion,
          },
          spec: { devices },
          status: {
            allocation: {
              devices: { results },
              nodeSelector: {
                nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['gpu-a'] }] }],
              },
            },
          },
        }),
        'application/json',
      );
    }
    const slices = (await client.request<{ items: unknown[] }>('GET', `${RESOURCE}/resourceslices`)).items.map(
      (raw) => RESOURCE_SLICES.slim(RESOURCE_SLICES.schema.parse(raw)) as ReceivedResourceSlice,
    );
    const listed = (await client.request<{ items: unknown[] }>('GET', `${RESOURCE}/resourceclaims`)).items.map(
      (raw) => RESOURCE_CLAIMS.slim(RESOURCE_CLAIMS.schema.parse(raw)) as ReceivedResourceClaim,
    );
    expect(slices).toHaveLength(2);
    expect(listed).toHaveLength(2);
    const [summary] = buildDeviceLedger(slices, listed).summary();
    expect(summary).toMatchObject({ node: 'gpu-a', published: 4, allocatedWhole: 1, sharedInUse: 1, freeWhole: 2 });
    expect(summary?.consumed).toEqual({ memory: 20 * 2 ** 30, units: 160_000, cores: 10 });
  }, 60_000);
});

describe('cards cordon on an API server that serves no DeviceTaintRule', () => {
  it('says so in one line, naming the versions and flags that serve it, and exits 1', async () => {
    const failure = await promisify(execFile)(process.execPath, [
      CLI,
      'cards',
      'cordon',
      'gpu-a/0',
      '--reason',
      'x',
      '--kubeconfig',
      cluster.kubeconfig,
    ]).catch((error: unknown) => error as { code: number; stderr: string });
    expect(failure).toMatchObject({ code: 1, stderr: `error: ${DEVICE_TAINT_RULES_NOT_SERVED}\n` });
  }, 60_000);
});
