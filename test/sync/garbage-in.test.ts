/**
 * Garbage in, valid answer out: whatever labels nodes and flavors carry, the hooks never throw, and
 * every answer passes the strict response schemas with valid names and label keys/values
 * (`runHook` checks all of that).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/k8s/index.js';
import { makeInstanceType, makeSchedulingChain } from '../builders/gpustack.js';
import { makeNamespace, makeResourceFlavor } from '../builders/kueue.js';
import { makeNode, type NodeWrapper } from '../builders/node.js';
import { chainRequest, instanceTypeRequest, nodeProfileRequest } from '../builders/request.js';
import { runHook } from '../support/hooks.js';
import { expectOk } from '../support/responses.js';

const A = 'acceleratable.feature.gpustack.ai/';
const G = 'general.feature.gpustack.ai/';

const KEYS = [
  `${A}nvidia-tesla-t4.count`,
  `${A}nvidia-tesla-t4.memory`,
  `${A}nvidia-tesla-t4`,
  `${A}nvidia-tesla-t4.product`,
  `${A}acme-x1`,
  `${A}nvidia`,
  `${A}nvidia-`,
  `${A}amd-mi300x`,
  `${A}amd-mi300x.count`,
  `${A}amd-mi300x.memory`,
  `${G}generic`,
  `${G}generic.count`,
  `${G}intel`,
  `${G}intel-xeon.count`,
  `${G}intel-xeon`,
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'gpustack.ai/managed',
  'feature.gpustack.ai/acceleratable',
  'feature.gpustack.ai/cpu-only',
  'feature.node.kubernetes.io/cpu-model.vendor_id',
];
const VALUES = [
  'true',
  'false',
  '',
  '0',
  '1',
  '4',
  '-1',
  '1e3',
  'abc',
  '999999',
  '1000000',
  '15Gi',
  'huge',
  '0Gi',
  '1Ei',
  'amd64',
  'AMD64',
  'x86_64',
  'linux',
  'Intel',
  '(R)',
];

const arbNode: fc.Arbitrary<Node> = fc
  .record({
    name: fc.constantFrom('a', 'b', 'c', 'd'),
    t4: fc.nat({ max: 8 }),
    cores: fc.integer({ min: 1, max: 512 }),
    managed: fc.boolean(),
    overrides: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 6 }),
    drop: fc.subarray(KEYS, { maxLength: 3 }),
  })
  .map(({ name, t4, cores, managed, overrides, drop }) => {
    let node: NodeWrapper = makeNode(name).cpu(cores);
    if (t4 > 0) node = node.t4(t4);
    if (managed) node = node.profiled();
    for (const [key, value] of Object.entries(overrides)) node = node.label(key, value);
    for (const key of drop) node = node.withoutLabel(key);
    return node.obj();
  });

const arbSpec = fc.record(
  {
    generalKey: fc.constantFrom('Generic', 'CPUModel'),
    mixedOnNode: fc.boolean(),
    deriveInstanceTypes: fc.boolean(),
    admissionCheck: fc.constantFrom('Enabled', 'Disabled'),
  },
  { requiredKeys: [] },
);

describe('hooks on garbage labels', () => {
  it('scheduling-chain answers validly for any node labels (nodes unique by name)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(arbNode, { selector: (n) => n.metadata.name, maxLength: 4 }),
        arbSpec,
        (nodes, spec) => {
          const response = expectOk(
            runHook('scheduling-chain', chainRequest({ parent: makeSchedulingChain().spec(spec).obj(), nodes })),
          );
          const names = response.children.map((c) => `${c.kind}/${c.metadata.namespace ?? ''}/${c.metadata.name}`);
          expect(new Set(names).size, 'no duplicate children').toBe(names.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('node-profile answers validly for any node labels and CPU capacity', () => {
    const capacity = fc.oneof(
      fc.constantFrom('abc', '-1', '0', '3500m', '1e400', '12.5', '', '224', '1Ki'),
      fc.integer({ min: -5, max: 100000 }),
    );
    fc.assert(
      fc.property(arbNode, capacity, arbSpec, (node, cpu, spec) => {
        const withCapacity = { ...node, status: { capacity: { cpu } } };
        runHook('node-profile', nodeProfileRequest(withCapacity, makeSchedulingChain().spec(spec).obj()));
      }),
      { numRuns: 300 },
    );
  });

  it('instance-type answers validly for any flavor labels', () => {
    const arbFlavor = fc
      .record({
        count: fc.integer({ min: 1, max: 16 }),
        nodes: fc.integer({ min: 1, max: 50 }),
        capacity: fc.option(fc.constantFrom(...VALUES), { nil: undefined }),
        deleting: fc.boolean(),
      })
      .map(({ count, nodes, capacity, deleting }) => {
        let flavor = makeResourceFlavor().device('nvidia-tesla-t4', count).nodes(nodes);
        if (capacity !== undefined) flavor = flavor.capacity(capacity);
        if (deleting) flavor = flavor.deleting();
        return flavor.obj();
      });
    fc.assert(
      fc.property(
        fc.uniqueArray(arbFlavor, { selector: (f) => f.metadata.name, maxLength: 6 }),
        fc.boolean(),
        (flavors, inactive) => {
          const parent = makeInstanceType('gpustack-nvidia-tesla-t4-linux-amd64')
            .device('nvidia-tesla-t4')
            .inactive(inactive)
            .obj();
          const response = expectOk(
            runHook(
              'instance-type',
              instanceTypeRequest({ parent, flavors, namespaces: [makeNamespace('default').obj()] }),
            ),
          );
          expect(response.children.filter((c) => c.kind === 'ClusterQueue')).toHaveLength(1);
        },
      ),
      { numRuns: 200 },
    );
  });
});
