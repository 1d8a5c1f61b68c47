/**
 * Sync functions are pure and deterministic (style §9.3): they never write to their request (every
 * fixture is deep-frozen first), and the order of object-map entries, object keys and related nodes
 * cannot change a byte of the serialised answer.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node } from '../../src/k8s/index.js';
import { renderChain } from '../../src/render/index.js';
import { makeSchedulingChain } from '../builders/gpustack.js';
import { makeNode } from '../builders/node.js';
import { chainRequest } from '../builders/request.js';
import { CONTROLLERS, listScenarios, readRequestFixture, type Controller } from '../support/fixtures.js';
import { NOW, parseRequest, runHook, syncParsed } from '../support/hooks.js';
import { listClusterFiles, loadClusterNodes } from '../support/nodes.js';
import { deepFreeze, toYaml } from '../support/snapshot.js';

const ALL_SCENARIOS: [Controller, string][] = CONTROLLERS.flatMap((c) =>
  listScenarios(c).map((s): [Controller, string] => [c, s]),
);

/** The same value with the keys of every object (object maps included) in a generated order; arrays keep theirs. */
function permutedKeys(value: unknown): fc.Arbitrary<unknown> {
  if (Array.isArray(value)) return value.length === 0 ? fc.constant([]) : fc.tuple(...value.map(permutedKeys));
  if (value === null || typeof value !== 'object') return fc.constant(value);
  const entries = Object.entries(value);
  const keys = entries.map(([key]) => key);
  const members =
    entries.length === 0
      ? fc.constant([] as unknown[])
      : fc.tuple(...entries.map(([, member]) => permutedKeys(member)));
  return fc
    .tuple(
      fc.shuffledSubarray(
        keys.map((_, i) => i),
        { minLength: keys.length, maxLength: keys.length },
      ),
      members,
    )
    .map(([order, values]) => Object.fromEntries(order.map((i) => [keys[i], values[i]])));
}

/** A permutation of `items` (all of them, in a generated order). */
function permutation<T>(items: readonly T[]): fc.Arbitrary<T[]> {
  return fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });
}

describe('sync never mutates its request', () => {
  it('covers at least one scenario per controller', () => {
    for (const controller of CONTROLLERS) expect(listScenarios(controller).length, controller).toBeGreaterThan(0);
  });

  it.each(ALL_SCENARIOS)('%s: %s runs on a deep-frozen request and leaves it as it was', (controller, scenario) => {
    const request = parseRequest(controller, readRequestFixture(controller, scenario));
    const before = structuredClone(request);
    const unfrozen = syncParsed(controller, structuredClone(request));
    const frozen = syncParsed(controller, deepFreeze(request));
    expect(request).toEqual(before);
    expect(toYaml(frozen)).toBe(toYaml(unfrozen));
  });

  it.each(listClusterFiles())('renderChain runs on deep-frozen nodes of %s', (file) => {
    const nodes = loadClusterNodes(file);
    const plain = renderChain({ nodes: structuredClone(nodes), namespaces: ['default'] }, { now: NOW });
    const frozen = renderChain(deepFreeze({ nodes, namespaces: ['default'] }), { now: NOW });
    expect(toYaml(frozen)).toBe(toYaml(plain));
  });
});

describe('the answer does not depend on input order', () => {
  const shuffled = ALL_SCENARIOS.filter(([controller]) => controller !== 'node-devices-check');

  it.each(shuffled)('%s: %s gives byte-identical YAML for any key order', (controller, scenario) => {
    const raw = readRequestFixture(controller, scenario);
    const baseline = toYaml(runHook(controller, raw));
    fc.assert(
      fc.property(permutedKeys(raw), (reordered) => {
        expect(toYaml(syncParsed(controller, parseRequest(controller, reordered)))).toBe(baseline);
      }),
      { numRuns: 10 },
    );
  });

  it('pools, flavor notes and statuses do not depend on the order of related nodes', () => {
    // Nodes that share a flavor but differ in informational labels: the flavor takes its notes
    // from the first node by name, whatever order the nodes arrive in.
    const nodes = [
      makeNode('gpu-b')
        .t4(4)
        .cpu(48)
        .profiled()
        .label('acceleratable.feature.gpustack.ai/nvidia-tesla-t4.family', 'Turing-B')
        .obj(),
      makeNode('gpu-a').t4(4).cpu(48).profiled().obj(),
      makeNode('gpu-c').t4(1).cpu(4).profiled().obj(),
      makeNode('gpu-d').h100(8).cpu(224).profiled().obj(),
      makeNode('cpu-a').cpu(16).profiled().obj(),
      makeNode('bad').t4(2).profiled().label('acceleratable.feature.gpustack.ai/nvidia-tesla-t4.count', 'two').obj(),
      makeNode('arm').arch('arm64').cpu(64).profiled().obj(),
    ];
    const parent = makeSchedulingChain().obj();
    const baseline = toYaml(runHook('scheduling-chain', chainRequest({ parent, nodes })));
    expect(baseline).toContain('note.gpustack.ai/family: Turing\n');
    fc.assert(
      fc.property(permutation(nodes), (order: Node[]) => {
        expect(toYaml(runHook('scheduling-chain', chainRequest({ parent, nodes: order })))).toBe(baseline);
      }),
      { numRuns: 50 },
    );
  });

  it.each(listClusterFiles())('renderChain gives byte-identical YAML for any order of the nodes of %s', (file) => {
    const nodes = loadClusterNodes(file);
    const namespaces = ['default', 'team-a', 'kube-system'];
    const baseline = toYaml(renderChain({ nodes, namespaces }, { now: NOW }));
    fc.assert(
      fc.property(permutation(nodes), permutation(namespaces), (order, nsOrder) => {
        expect(toYaml(renderChain({ nodes: order, namespaces: nsOrder }, { now: NOW }))).toBe(baseline);
      }),
      { numRuns: 10 },
    );
  });
});
