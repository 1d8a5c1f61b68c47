import { describe, expect, it } from 'vitest';
import { isDnsSubdomain } from '../../src/k8s/index.js';
import { clusterQueueName, cpuFlavorName, deviceFlavorName } from '../../src/nodefeature/index.js';

describe('object names (docs/architecture.md#object-names)', () => {
  it.each([
    {
      name: 'CPU flavor of the generic pool',
      input: () => cpuFlavorName('generic', 'linux', 'amd64', 224),
      want: 'gpustack-generic-linux-amd64-224c',
    },
    {
      name: 'CPU flavor of a CPU-model pool',
      input: () => cpuFlavorName('amd-epyc-7763', 'linux', 'amd64', 128),
      want: 'gpustack-amd-epyc-7763-linux-amd64-128c',
    },
    {
      name: 'device flavor of an H100 node',
      input: () => deviceFlavorName('nvidia-h100-80gb-hbm3', 'linux', 'amd64', 8),
      want: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64-8d',
    },
    {
      name: 'device flavor keeps os/arch in full',
      input: () => deviceFlavorName('ascend-910b2', 'linux', 'arm64', 8),
      want: 'gpustack-ascend-910b2-linux-arm64-8d',
    },
    {
      name: 'device flavor replaces "_" with "-"',
      input: () => deviceFlavorName('hygon-k100_ai', 'linux', 'amd64', 8),
      want: 'gpustack-hygon-k100-ai-linux-amd64-8d',
    },
    {
      name: 'ClusterQueue of an accelerated pool',
      input: () => clusterQueueName('nvidia-h100-80gb-hbm3', 'linux', 'amd64'),
      want: 'gpustack-nvidia-h100-80gb-hbm3-linux-amd64',
    },
    {
      name: 'ClusterQueue of the generic pool',
      input: () => clusterQueueName('generic', 'linux', 'arm64'),
      want: 'gpustack-generic-linux-arm64',
    },
    {
      name: 'ClusterQueue replaces "_" with "-"',
      input: () => clusterQueueName('hygon-k100_ai', 'linux', 'amd64'),
      want: 'gpustack-hygon-k100-ai-linux-amd64',
    },
    {
      name: 'CPU flavor replaces "_" in a gKey',
      input: () => cpuFlavorName('hygongenuine-c86_7285', 'linux', 'amd64', 64),
      want: 'gpustack-hygongenuine-c86-7285-linux-amd64-64c',
    },
    {
      name: 'dots in a key stay (valid subdomain segments)',
      input: () => clusterQueueName('nvidia-model-1.5', 'linux', 'amd64'),
      want: 'gpustack-nvidia-model-1.5-linux-amd64',
    },
  ])('$name', ({ input, want }) => {
    const got = input();
    expect(got).toBe(want);
    expect(isDnsSubdomain(got)).toBe(true);
  });

  it('tells pools apart by count: 7 and 8 cards are two flavors', () => {
    expect(deviceFlavorName('nvidia-h100-80gb-hbm3', 'linux', 'amd64', 7)).not.toBe(
      deviceFlavorName('nvidia-h100-80gb-hbm3', 'linux', 'amd64', 8),
    );
  });

  it('keeps CPU and device flavors of one key apart (c vs d)', () => {
    expect(cpuFlavorName('x', 'linux', 'amd64', 8)).not.toBe(deviceFlavorName('x', 'linux', 'amd64', 8));
  });
});
