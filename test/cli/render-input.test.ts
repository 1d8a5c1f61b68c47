/**
 * What `render` reads (src/cli/render-input.ts): a `kubectl get nodes -o yaml|json` List, a NodeList,
 * a plain array of Nodes or one Node, and a SchedulingChain. Errors are InputErrors that name the
 * file, the item and the field.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { InputError, parseChain, parseNodes } from '../../src/cli/render-input.js';

const CLUSTERS = new URL('../../examples/clusters/', import.meta.url);

function cluster(file: string): string {
  return readFileSync(new URL(file, CLUSTERS), 'utf8');
}

function node(
  name: string,
  labels: Record<string, unknown> = { 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
) {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, status: { capacity: { cpu: '16' } } };
}

/** The InputError `run` throws (fails the test when it throws nothing or something else). */
function inputError(run: () => unknown): InputError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an InputError, nothing was thrown');
}

describe('parseNodes', () => {
  describe('accepts', () => {
    it('a kubectl List in YAML', () => {
      const nodes = parseNodes(cluster('reference-4-node.yaml'), 'reference-4-node.yaml');

      expect(nodes.map((n) => n.metadata.name)).toEqual(['node-cpu', 'node-a10g', 'node-t4-a', 'node-t4-b']);
      expect(nodes[3]?.status?.capacity?.['cpu']).toBe('48');
    });

    it('a kubectl List in JSON', () => {
      const nodes = parseNodes(cluster('mixed.json'), 'mixed.json');

      expect(nodes.map((n) => n.metadata.name)).toEqual([
        'cpu-01',
        'gpu-h100-01',
        'gpu-mi300x-01',
        'npu-01',
        'gpu-mxc500-01',
        'dcu-k100-01',
      ]);
    });

    it('a NodeList', () => {
      const text = JSON.stringify({
        apiVersion: 'v1',
        kind: 'NodeList',
        metadata: { resourceVersion: '1' },
        items: [node('a'), node('b')],
      });

      expect(parseNodes(text, 'nodes.json').map((n) => n.metadata.name)).toEqual(['a', 'b']);
    });

    it('a plain YAML array', () => {
      expect(parseNodes(cluster('plain-array.yaml'), 'plain-array.yaml').map((n) => n.metadata.name)).toEqual([
        'cpu-edge-01',
        'gpu-h200-01',
      ]);
    });

    it('a plain array whose items carry no kind', () => {
      const text = stringify([{ metadata: { name: 'bare' }, status: { capacity: { cpu: 4 } } }]);

      expect(parseNodes(text, 'bare.yaml')).toEqual([{ metadata: { name: 'bare' }, status: { capacity: { cpu: 4 } } }]);
    });

    it('one Node (kubectl get node NAME -o yaml)', () => {
      expect(parseNodes(stringify(node('solo')), 'solo.yaml')).toEqual([node('solo')]);
    });

    it('an empty List', () => {
      expect(parseNodes('{"apiVersion":"v1","kind":"List","items":[]}', 'empty.json')).toEqual([]);
    });

    it('keeps every field it does not read', () => {
      const [parsed] = parseNodes(cluster('reference-4-node.yaml'), 'reference-4-node.yaml');

      expect(parsed).toMatchObject({
        spec: { providerID: 'aws:///us-west-2a/i-0146ed89b0a5cb19e' },
        status: { nodeInfo: { architecture: 'amd64' } },
      });
    });
  });

  describe('rejects with an InputError naming the place', () => {
    it('an item without metadata.name', () => {
      const text = stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [node('ok'), { apiVersion: 'v1', kind: 'Node', metadata: { labels: {} } }],
      });

      const error = inputError(() => parseNodes(text, 'nodes.yaml'));

      expect(error.message).toBe(
        'nodes.yaml: items[1].metadata.name: Invalid input: expected string, received undefined',
      );
    });

    it('an empty metadata.name', () => {
      const error = inputError(() => parseNodes(JSON.stringify([node('')]), 'nodes.json'));

      expect(error.message).toBe('nodes.json: items[0].metadata.name: metadata.name is required');
    });

    it('a label value that is not a string', () => {
      const error = inputError(() => parseNodes(JSON.stringify([node('a'), node('b', { foo: 3 })]), 'nodes.json'));

      expect(error.message).toBe(
        'nodes.json: items[1].metadata.labels.foo: Invalid input: expected string, received number',
      );
    });

    it('an item of another kind (kubectl get nodes,pods)', () => {
      const text = stringify({
        kind: 'List',
        items: [node('a'), { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'default' } }],
      });

      const error = inputError(() => parseNodes(text, 'dump.yaml'));

      expect(error.message).toBe('dump.yaml: items[1].kind: expected Node, got "Pod"');
    });

    it('an item that is not an object', () => {
      const error = inputError(() => parseNodes('[null]', 'nodes.json'));

      expect(error.message).toBe('nodes.json: items[0]: Invalid input: expected object, received null');
    });

    it.each([
      ['an empty file', ''],
      ['a comment-only file', '# kubectl: error: no context\n'],
    ])('%s: no document (not "no Nodes")', (_name, text) => {
      const error = inputError(() => parseNodes(text, 'in.yaml'));

      expect(error.message).toBe('in.yaml: no YAML or JSON document (the input is empty or only comments)');
    });

    it.each([
      ['a scalar', 'hello'],
      ['an object that is neither a List nor a Node', 'kind: Pod\nmetadata:\n  name: web-0\n'],
    ])('%s', (_name, text) => {
      const error = inputError(() => parseNodes(text, 'in.yaml'));

      expect(error.message).toBe(
        'in.yaml: expected a List of Nodes (kubectl get nodes -o yaml), an array of Nodes or one Node',
      );
    });

    it('text that is neither YAML nor JSON', () => {
      const error = inputError(() => parseNodes('items: [\n  {metadata: {name: a}\n', 'broken.yaml'));

      expect(error.message).toMatch(/^broken\.yaml: not YAML or JSON: /);
    });
  });
});

describe('parseChain', () => {
  it('reads a SchedulingChain and leaves its spec for the settings check', () => {
    const text = stringify({
      apiVersion: 'worker.gpustack.ai/v1alpha1',
      kind: 'SchedulingChain',
      metadata: { name: 'default' },
      spec: { generalKey: 'Bogus' },
    });

    expect(parseChain(text, 'chain.yaml')).toEqual({
      apiVersion: 'worker.gpustack.ai/v1alpha1',
      kind: 'SchedulingChain',
      metadata: { name: 'default' },
      spec: { generalKey: 'Bogus' },
    });
  });

  it('names a missing metadata.name', () => {
    const error = inputError(() => parseChain('kind: SchedulingChain\nmetadata: {}\n', 'chain.yaml'));

    expect(error.message).toBe(
      'chain.yaml: SchedulingChain.metadata.name: Invalid input: expected string, received undefined',
    );
  });

  it('rejects a document that is not an object', () => {
    const error = inputError(() => parseChain('- a\n- b\n', 'chain.yaml'));

    expect(error.message).toBe('chain.yaml: SchedulingChain: Invalid input: expected object, received array');
  });
});
