import { describe, expect, it } from 'vitest';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import {
  applyChanges,
  extractChainView,
  extractChainViewAfter,
  extractNodeFacts,
  isChainLabel,
} from '../../src/nodefeature/index.js';
import { renderChain } from '../../src/render/index.js';
import { NOW } from '../support/hooks.js';
import { listClusterFiles, loadClusterNodes } from '../support/nodes.js';

const ALL = new Set(MANUFACTURER_NAMES);

describe('extractChainView: what the chain reads of a Node', () => {
  it.each([
    ['kubernetes.io/os', true],
    ['kubernetes.io/arch', true],
    ['gpustack.ai/managed', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.count', true],
    ['general.feature.gpustack.ai/generic.count', true],
    ['feature.gpustack.ai/acceleratable', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.memory', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.product', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.cores', true],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.family', true],
    ['general.feature.gpustack.ai/generic', true],
    ['feature.gpustack.ai/cpu-only', false],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.sliced.units', false],
    ['acceleratable.feature.gpustack.ai/nvidia-h100.comcap', false],
    ['acceleratable.feature.gpustack.ai/nvidia.driver-version', false],
    ['gpustack.ai/tenant', false],
    ['gpustack.ai/profiled', false],
    ['nvidia.com/gpu.count', false],
    ['feature.node.kubernetes.io/cpu-model.id', false],
    ['kubernetes.io/hostname', false],
    ['evilgpustack.ai/x', false],
    ['gpustack.ai.example.com/x', false],
  ])('%s → %s', (key, expected) => {
    expect(isChainLabel(key)).toBe(expected);
  });

  // The view must lose nothing the chain reads: on every example cluster, as node-profile labels
  // it, the facts of each Node's view equal the facts of the whole Node.
  it.each(listClusterFiles())('reads the same facts as the whole Node on every Node of %s', (file) => {
    const nodes = loadClusterNodes(file);
    const result = renderChain({ nodes, namespaces: [] }, { now: NOW });
    if (!result.ok) throw new Error(result.error.message);
    const changes = new Map(result.nodes.map((n) => [n.name, n]));
    let compared = 0;
    for (const node of nodes) {
      const change = changes.get(node.metadata.name);
      const whole = {
        name: node.metadata.name,
        labels: applyChanges(node.metadata.labels, change?.labels ?? {}),
        annotations: applyChanges(node.metadata.annotations, change?.annotations ?? {}),
        cpuCapacity: node.status?.capacity?.['cpu'],
      };
      const view = extractChainView(whole);
      // node-profile builds the view from the Node and its own changes, without the merged copy.
      const after = extractChainViewAfter(
        {
          name: node.metadata.name,
          labels: node.metadata.labels,
          annotations: node.metadata.annotations,
          cpuCapacity: node.status?.capacity?.['cpu'],
        },
        { labels: change?.labels ?? {}, annotations: change?.annotations ?? {} },
      );
      expect(after).toEqual(view);
      expect(Object.keys(view.labels ?? {}).length).toBeLessThanOrEqual(Object.keys(whole.labels).length);
      expect(extractNodeFacts(view, ALL)).toEqual(extractNodeFacts(whole, ALL));
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });
});
