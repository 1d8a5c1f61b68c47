// The node restriction's ValidatingAdmissionPolicy against the code it guards (no API server; the
// denials themselves are test/e2e/trust.e2e.test.ts): it matches only the resources the agent
// writes, knows every driver of ours, holds the agent whatever namespace kustomize moves it to,
// and takes slice names as src/dra/slices.ts makes them. The chart's template is the same policy
// (that it renders the same objects as manifests/ is test/e2e/helm.e2e.test.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { isAgentLabel, labelsFromDetection } from '../../src/agent/index.js';
import { driverName, sliceName } from '../../src/dra/index.js';
import { MANUFACTURER_NAMES } from '../../src/k8s/index.js';
import { AGENT_CLIQUE_LABEL, SLICED_SUFFIXES, TOPOLOGY_PROFILE_LABEL } from '../../src/nodefeature/index.js';
import { detection, h100, times } from '../agent/support.js';

const MANIFEST = 'manifests/agent/node-restriction.yaml';
const TEMPLATE = 'charts/gpustack-operator/templates/agent/node-restriction.yaml';

interface Policy {
  kind: string;
  spec: {
    matchConstraints: { resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[] };
    matchConditions: { name: string; expression: string }[];
    variables: { name: string; expression: string }[];
    validations: { expression: string; messageExpression: string }[];
  };
}

function policyOf(text: string): Policy {
  const policy = parseAllDocuments(text)
    .map((d) => d.toJS() as Policy | null)
    .find((o) => o?.kind === 'ValidatingAdmissionPolicy');
  if (policy === undefined || policy === null) throw new Error('no ValidatingAdmissionPolicy');
  return policy;
}

const manifest = policyOf(readFileSync(MANIFEST, 'utf8'));
/** The template with its Helm actions taken out: what is left is YAML. */
const template = policyOf(
  readFileSync(TEMPLATE, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*\{\{-/.test(line))
    .join('\n'),
);
const variable = (name: string): string =>
  manifest.spec.variables.find((v) => v.name === name)?.expression ?? `(no variable ${name})`;

describe('the node restriction policy (issue 43)', () => {
  it('matches the writes of the three resources it guards and their subresources, not */*', () => {
    for (const policy of [manifest, template]) {
      const rules = policy.spec.matchConstraints.resourceRules;
      expect(rules.map((r) => [r.apiGroups, r.resources])).toEqual([
        [['resource.k8s.io'], ['resourceslices', 'resourceslices/*']],
        [[''], ['nodes', 'nodes/*']],
        [['nfd.k8s-sigs.io'], ['nodefeatures', 'nodefeatures/*']],
      ]);
      for (const rule of rules) expect(rule.operations).toEqual(['CREATE', 'UPDATE', 'DELETE']);
    }
  });

  it('lets the agent write the slices of every driver of ours, and of no other', () => {
    const drivers = [...variable('ourDrivers').matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(drivers).toEqual(MANUFACTURER_NAMES.map(driverName));
  });

  it('holds gpustack-agent of any namespace (kustomize moves the account but cannot rewrite an expression), and the chart alike', () => {
    for (const policy of [manifest, template])
      expect(policy.spec.matchConditions).toEqual([
        {
          name: 'is-the-agent',
          expression:
            "request.userInfo.username.startsWith('system:serviceaccount:') && " +
            "request.userInfo.username.endsWith(':gpustack-agent')",
        },
      ]);
  });

  it("the chart's policy is the manifest's", () => {
    expect(template.spec).toEqual(manifest.spec);
  });

  it('takes the names sliceName makes: the node in full up to 213 characters, beyond that its first 150 and a hash', () => {
    const rule = variable('sliceNameIsDerived');
    expect(rule).toContain('variables.node.size() <= 213');
    expect(rule).toContain('variables.node.substring(0, 150)');
    const short = 'n'.repeat(213);
    expect(sliceName(short, 'nvidia', 'devices', 0)).toBe(`${short}-nvidia-devices-0`);
    // The tail the policy reads after the node's first 150 characters, for a node one longer.
    const long = `${'n'.repeat(200)}.${'m'.repeat(13)}`;
    const name = sliceName(long, 'nvidia', 'devices', 12);
    expect(name.startsWith(long.slice(0, 150))).toBe(true);
    expect(name.slice(150)).toMatch(/^[a-z0-9.-]*-[0-9a-f]{16}-nvidia-(counters|devices)-[0-9]+(-[a-z0-9]*)?$/);
    expect(rule).toContain("'^[a-z0-9.-]*-[0-9a-f]{16}' + variables.sliceNameTail");
    expect(variable('sliceNameTail')).toContain("'-(counters|devices)-[0-9]+(-[a-z0-9]*)?$'");
  });

  it('reads the claims of a token that may have none (a legacy Secret token has no extra)', () => {
    expect(variable('extra')).toBe('has(request.userInfo.extra) ? request.userInfo.extra : {}');
    // Every other read of the claims goes through it.
    for (const v of manifest.spec.variables.filter((x) => x.name !== 'extra'))
      expect(v.expression, v.name).not.toContain('request.userInfo.extra');
    expect(variable('node')).toContain("'authentication.kubernetes.io/pod-name'");
    expect(variable('node')).toContain("'authentication.kubernetes.io/pod-uid'");
  });

  it("allows on the Node and in the NodeFeature exactly the label keys the agent owns (isAgentLabel), the clique's among them", () => {
    // The allow-list, read out of the CEL: exact keys, one prefix, the suffixes excepted from it.
    const rule = variable('foreignLabels');
    const exact = [...rule.matchAll(/k == '([^']+)'/g)].map((m) => m[1]);
    const prefixes = [...rule.matchAll(/k\.startsWith\('([^']+)'\)/g)].map((m) => m[1] ?? '');
    const excepted = [...rule.matchAll(/!k\.endsWith\('([^']+)'\)/g)].map((m) => m[1] ?? '');
    expect(exact).toEqual(['feature.gpustack.ai/acceleratable', AGENT_CLIQUE_LABEL]);
    expect(prefixes).toEqual(['acceleratable.feature.gpustack.ai/']);
    expect(excepted).toEqual([...SLICED_SUFFIXES]);
    const allowed = (key: string): boolean =>
      exact.includes(key) || (prefixes.some((p) => key.startsWith(p)) && !excepted.some((x) => key.endsWith(x)));

    const fabric = { clusterUuid: '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11', cliqueId: 3 };
    const published = labelsFromDetection(detection(times(8, (i) => h100(i, { fabric }))), undefined);
    expect(published).toHaveProperty([AGENT_CLIQUE_LABEL]);
    const keys = [
      ...Object.keys(published),
      'acceleratable.feature.gpustack.ai/nvidia-h100-80gb-hbm3.sliced.units',
      // The topology domain is node-profile's but for the one key.
      TOPOLOGY_PROFILE_LABEL,
      'topology.gpustack.ai/levels',
      'topology.gpustack.ai/other',
      'nvidia.com/gpu.clique',
      'gpustack.ai/managed',
    ];
    for (const key of keys) expect(allowed(key), key).toBe(isAgentLabel(key));
    for (const key of Object.keys(published)) expect(allowed(key), key).toBe(true);
  });

  it('names the clique key in the denials that list what the agent may set', () => {
    const messages = manifest.spec.validations.map((v) => v.messageExpression);
    const listing = messages.filter((m) => m.includes('only its acceleratable labels'));
    expect(listing).toHaveLength(2);
    for (const message of listing) expect(message).toContain(AGENT_CLIQUE_LABEL);
  });
});
