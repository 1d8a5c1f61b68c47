import { describe, expect, it } from 'vitest';
import { isDnsLabel, isDnsSubdomain, isLabelKey, isLabelValue } from '../../src/k8s/index.js';

describe('isLabelValue', () => {
  it.each([
    { name: 'accepts the empty value', input: '', want: true },
    { name: 'accepts a product with case', input: 'NVIDIA-H100-80GB-HBM3', want: true },
    { name: 'accepts inner dots and underscores', input: 'K100_AI.v2', want: true },
    { name: 'accepts 63 characters', input: 'a'.repeat(63), want: true },
    { name: 'rejects 64 characters', input: 'a'.repeat(64), want: false },
    { name: 'rejects a leading separator', input: '-a', want: false },
    { name: 'rejects a trailing separator', input: 'a.', want: false },
    { name: 'rejects spaces', input: 'a b', want: false },
    { name: 'rejects a plus', input: '1e+21', want: false },
    { name: 'rejects non-ASCII', input: 'é', want: false },
  ])('$name', ({ input, want }) => {
    expect(isLabelValue(input)).toBe(want);
  });
});

describe('isLabelKey', () => {
  it.each([
    {
      name: 'accepts a prefixed key',
      input: 'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.count',
      want: true,
    },
    { name: 'accepts a key without prefix', input: 'team', want: true },
    {
      name: 'accepts a 63-character name part',
      input: `general.feature.gpustack.ai/${'a'.repeat(54)}.capacity`,
      want: true,
    },
    {
      name: 'rejects a 64-character name part',
      input: `general.feature.gpustack.ai/${'a'.repeat(55)}.capacity`,
      want: false,
    },
    { name: 'rejects an empty name part', input: 'gpustack.ai/', want: false },
    { name: 'rejects an upper-case prefix', input: 'GPUSTACK.ai/x', want: false },
    { name: 'rejects an empty prefix', input: '/x', want: false },
    { name: 'rejects two slashes', input: 'a/b/c', want: false },
    { name: 'rejects a name with a space', input: 'gpustack.ai/a b', want: false },
  ])('$name', ({ input, want }) => {
    expect(isLabelKey(input)).toBe(want);
  });
});

describe('isDnsSubdomain and isDnsLabel', () => {
  it.each([
    {
      name: 'a 95-character flavor name is a subdomain',
      input: 'gpustack--intel-xeon-platinum-8480--nvidia-h100-80gb-hbm3-linux-amd64-8d-fnv64-87bf574bea2a4f23',
      subdomain: true,
      label: false,
    },
    { name: 'a LocalQueue name is both', input: 'gpustack-fnv64-c4680bb149644f1c', subdomain: true, label: true },
    {
      name: 'a dotted name is only a subdomain',
      input: 'gpustack-nvidia-model-1.5-linux-amd64',
      subdomain: true,
      label: false,
    },
    { name: '253 characters are a subdomain', input: 'a'.repeat(253), subdomain: true, label: false },
    { name: '254 characters are not', input: 'a'.repeat(254), subdomain: false, label: false },
    { name: 'an underscore is neither', input: 'gpustack-hygon-k100_ai', subdomain: false, label: false },
    { name: 'upper case is neither', input: 'Gpustack', subdomain: false, label: false },
    { name: 'a dash next to a dot is neither', input: 'a-.b', subdomain: false, label: false },
    { name: 'the empty name is neither', input: '', subdomain: false, label: false },
  ])('$name', ({ input, subdomain, label }) => {
    expect(isDnsSubdomain(input)).toBe(subdomain);
    expect(isDnsLabel(input)).toBe(label);
  });
});
