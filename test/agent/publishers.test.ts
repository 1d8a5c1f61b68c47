import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DetectResult } from '../../native/index.js';
import {
  FEATURE_FILE_NAME,
  createAgentState,
  featureFilePublisher,
  labelsFromDetection,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  runCycle,
  sameLabels,
  type AgentOptions,
  type AgentState,
  type Labels,
  type Publisher,
} from '../../src/agent/index.js';
import {
  A,
  ACCELERATABLE,
  H100_LABELS,
  TOKEN,
  detection,
  h100,
  mi300x,
  recordingLogger,
  times,
  useFakeApiServer,
} from './support.js';

const NODE = 'gpu-h100-01';
const NAMESPACE = 'gpustack-system';
const NF_PATH = `/apis/nfd.k8s-sigs.io/v1alpha1/namespaces/${NAMESPACE}/nodefeatures/${NODE}-gpustack-agent`;
const NODE_PATH = `/api/v1/nodes/${NODE}`;

/** Labels on the node that belong to others: the agent must never touch them. */
const FOREIGN: Labels = {
  'kubernetes.io/hostname': NODE,
  'kubernetes.io/arch': 'amd64',
  'gpustack.ai/managed': 'true',
  'general.feature.gpustack.ai/generic': 'true',
  [`${A}nvidia-h100-80gb-hbm3.sliced.units`]: '1600000',
  [`${A}nvidia-h100-80gb-hbm3.sliced.memory-mib`]: '81920',
  'feature.node.kubernetes.io/pci-10de.present': 'true',
};

function options(publisher: Publisher, detect: () => Promise<DetectResult>): AgentOptions {
  return { detect, publisher, intervalMs: 60_000, logger: recordingLogger() };
}

/** A detect() whose answer the test changes between cycles. */
function switchable(initial: DetectResult): { detect: () => Promise<DetectResult>; set(result: DetectResult): void } {
  let current = initial;
  return {
    detect: () => Promise.resolve(current),
    set: (result) => {
      current = result;
    },
  };
}

const H100_X8 = detection(times(8, h100));
const MI300X_X8 = detection(times(8, mi300x));
const MI300X_LABEL_KEYS = (labels: Labels) => Object.keys(labels).filter((k) => k.startsWith(`${A}amd`));

describe('nodefeature publisher against the stand-in API server', () => {
  const standIn = useFakeApiServer({ [NODE]: FOREIGN });

  it('server-side applies NodeFeature <node>-gpustack-agent with the node-name label', async () => {
    const publisher = nodeFeaturePublisher(standIn.client(), NODE, NAMESPACE);
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');

    // First a GET (nothing published yet → 404), then one apply.
    expect(standIn.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET ${NF_PATH}`,
      `PATCH ${NF_PATH}?fieldManager=gpustack-agent&force=true`,
    ]);
    for (const request of standIn.api.requests) expect(request.authorization).toBe(`Bearer ${TOKEN}`);
    const [, apply] = standIn.api.requests;
    expect(apply?.contentType).toBe('application/apply-patch+yaml');
    expect(apply?.body).toEqual({
      apiVersion: 'nfd.k8s-sigs.io/v1alpha1',
      kind: 'NodeFeature',
      metadata: {
        name: `${NODE}-gpustack-agent`,
        namespace: NAMESPACE,
        labels: { 'nfd.node.kubernetes.io/node-name': NODE },
      },
      spec: { labels: H100_LABELS },
    });
    expect(standIn.api.nodeFeatures.get(`${NAMESPACE}/${NODE}-gpustack-agent`)?.spec.labels).toEqual(H100_LABELS);
    // The Node itself is never written in this mode.
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual(FOREIGN);
    expect(await publisher.read()).toEqual(H100_LABELS);
  });

  it('a changed detection applies the full new set (labels no longer sent are dropped by the apply)', async () => {
    const publisher = nodeFeaturePublisher(standIn.client(), NODE, NAMESPACE);
    const source = switchable(H100_X8);
    const state = createAgentState();
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    source.set(MI300X_X8);
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    const labels = standIn.api.nodeFeatures.get(`${NAMESPACE}/${NODE}-gpustack-agent`)?.spec.labels ?? {};
    expect(Object.keys(labels).some((k) => k.includes('nvidia'))).toBe(false);
    expect(MI300X_LABEL_KEYS(labels)).toHaveLength(10);
    expect(standIn.api.patches()).toHaveLength(2);
  });

  it('escapes the node name and namespace in the path', async () => {
    const publisher = nodeFeaturePublisher(standIn.client(), 'a b', 'n/s');
    await publisher.write({ [ACCELERATABLE]: 'false' });
    expect(standIn.api.patches()[0]?.path).toBe(
      '/apis/nfd.k8s-sigs.io/v1alpha1/namespaces/n%2Fs/nodefeatures/a%20b-gpustack-agent?fieldManager=gpustack-agent&force=true',
    );
  });
});

describe('node-labels publisher against the stand-in API server', () => {
  const standIn = useFakeApiServer({ [NODE]: FOREIGN });

  it('merge-patches its labels onto the Node and leaves foreign labels alone', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    const patches = standIn.api.patches();
    expect(patches).toHaveLength(1);
    expect(patches[0]?.path).toBe(NODE_PATH);
    expect(patches[0]?.contentType).toBe('application/merge-patch+json');
    expect(patches[0]?.authorization).toBe(`Bearer ${TOKEN}`);
    // Only our keys in the patch, none of the foreign ones (not even as null), and the list of them.
    expect(patches[0]?.body).toEqual({
      metadata: {
        labels: H100_LABELS,
        annotations: { 'feature.gpustack.ai/agent-labels': Object.keys(H100_LABELS).sort().join(',') },
      },
    });
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...H100_LABELS });
    expect(await publisher.read()).toEqual(H100_LABELS);
  });

  it('a card model that disappears has its keys patched to null; foreign labels stay', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const source = switchable(detection([...times(8, h100), ...times(8, mi300x)]));
    const state = createAgentState();
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    source.set(H100_X8);
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');

    const second = standIn.api.patches()[1]?.body as { metadata: { labels: Record<string, string | null> } };
    const nulled = Object.entries(second.metadata.labels)
      .filter(([, v]) => v === null)
      .map(([k]) => k)
      .sort();
    expect(nulled).toEqual([
      `${A}amd`,
      `${A}amd-instinct-mi300x`,
      `${A}amd-instinct-mi300x.comcap`,
      `${A}amd-instinct-mi300x.cores`,
      `${A}amd-instinct-mi300x.count`,
      `${A}amd-instinct-mi300x.family`,
      `${A}amd-instinct-mi300x.memory`,
      `${A}amd-instinct-mi300x.product`,
      `${A}amd.driver-version`,
      `${A}amd.runtime-version`,
    ]);
    for (const key of Object.keys(FOREIGN)) expect(key in second.metadata.labels, key).toBe(false);
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...H100_LABELS });
  });

  it('publishes the NVLink clique, keeps it while NVIDIA detection fails, patches it to null once the cards disagree', async () => {
    const CLIQUE = 'topology.gpustack.ai/nvlink-clique';
    const cluster = '7f1d3c52-0b7e-4a6e-9c1d-6a2b8e4f0c11';
    const inClique = (cliqueId: number) => (i: number) => h100(i, { fabric: { clusterUuid: cluster, cliqueId } });
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const source = switchable(detection(times(8, inClique(3))));
    const state = createAgentState();
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    expect(standIn.api.nodes.get(NODE)?.metadata.labels[CLIQUE]).toBe(`${cluster}.3`);
    expect(standIn.api.nodes.get(NODE)?.metadata.annotations?.['feature.gpustack.ai/agent-labels']).toContain(CLIQUE);

    // The driver fails: nothing changes, nothing is written.
    source.set(detection([], { nvidia: 'DriverMismatch' }));
    expect(await runCycle(state, options(publisher, source.detect))).toBe('unchanged');
    expect(standIn.api.patches()).toHaveLength(1);

    // Back, with one card in another clique: the label goes, by null in the merge patch.
    source.set(detection([...times(7, inClique(3)), inClique(4)(7)]));
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    const patch = standIn.api.patches()[1]?.body as { metadata: { labels: Record<string, string | null> } };
    expect(patch.metadata.labels[CLIQUE]).toBeNull();
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...H100_LABELS });
  });

  it('a GPU node that becomes a CPU node keeps only acceleratable=false of ours', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const source = switchable(H100_X8);
    const state = createAgentState();
    await runCycle(state, options(publisher, source.detect));
    source.set(detection([]));
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, [ACCELERATABLE]: 'false' });
  });

  it('labels it owned from an earlier run (stale on the node) are removed as well', async () => {
    standIn.api.nodes.get(NODE)!.metadata.labels[`${A}nvidia-a100.count`] = '2';
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    expect(
      await runCycle(
        createAgentState(),
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    const patch = standIn.api.patches()[0]?.body as { metadata: { labels: Record<string, string | null> } };
    expect(patch.metadata.labels[`${A}nvidia-a100.count`]).toBeNull();
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...H100_LABELS });
  });

  it('never removes device labels node-profile derived from a vendor’s labels (no annotation of ours yet)', async () => {
    const derived = {
      [`${A}amd`]: 'true',
      [`${A}amd-instinct-mi300x-oam`]: 'true',
      [`${A}amd-instinct-mi300x-oam.count`]: '8',
    };
    const node = standIn.api.nodes.get(NODE)!;
    Object.assign(node.metadata.labels, derived);
    node.metadata.annotations = { 'feature.gpustack.ai/derived-device-labels': JSON.stringify(derived) };
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    expect(await publisher.read()).toBeUndefined();
    expect(
      await runCycle(
        createAgentState(),
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    const patch = standIn.api.patches()[0]?.body as { metadata: { labels: Record<string, string | null> } };
    for (const key of Object.keys(derived)) expect(key in patch.metadata.labels, key).toBe(false);
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...derived, ...H100_LABELS });
  });

  it('owns what its annotation declares: a derived label under the agent prefix stays when the agent publishes less', async () => {
    const derived = { [`${A}amd`]: 'true', [`${A}amd-instinct-mi300x-oam`]: 'true' };
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const source = switchable(H100_X8);
    const state = createAgentState();
    await runCycle(state, options(publisher, source.detect));
    Object.assign(standIn.api.nodes.get(NODE)!.metadata.labels, derived);
    source.set(detection([]));
    expect(await runCycle(state, options(publisher, source.detect))).toBe('published');
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...derived, [ACCELERATABLE]: 'false' });
    expect(standIn.api.nodes.get(NODE)?.metadata.annotations).toEqual({
      'feature.gpustack.ai/agent-labels': ACCELERATABLE,
    });
  });

  it('an http: server without insecure-skip-tls-verify is refused by client-node: the cycle fails, nothing is sent', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(false), NODE);
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('failed');
    expect(state.lastError).toMatch(/skipTLSVerify/);
    expect(standIn.api.requests).toHaveLength(0);
  });

  it('a missing Node fails the cycle without writing', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), 'no-such-node');
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('failed');
    expect(state.lastError).toContain('node no-such-node not found');
    expect(standIn.api.patches()).toHaveLength(0);
  });
});

describe('node-labels publisher behind a path prefix', () => {
  const standIn = useFakeApiServer({ [NODE]: FOREIGN }, '/k8s/clusters/c-1');

  it('reaches an API server whose URL has a path prefix (e.g. a Rancher proxy)', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    expect(
      await runCycle(
        createAgentState(),
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    expect(standIn.api.requests.map((r) => r.path)).toEqual([
      `/k8s/clusters/c-1${NODE_PATH}`,
      `/k8s/clusters/c-1${NODE_PATH}`,
      `/k8s/clusters/c-1${NODE_PATH}`,
    ]);
    expect(standIn.api.nodes.get(NODE)?.metadata.labels).toEqual({ ...FOREIGN, ...H100_LABELS });
  });
});

describe('feature-file publisher', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gpustack-agent-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a features folder that does not exist yet', async () => {
    const nested = join(dir, 'features.d', 'deeper');
    const publisher = featureFilePublisher(nested);
    expect(await publisher.read()).toBeUndefined();
    await publisher.write({ [ACCELERATABLE]: 'true' });
    expect(await publisher.read()).toEqual({ [ACCELERATABLE]: 'true' });
  });

  it('writes key=value lines through a dot-file and reads them back', async () => {
    const publisher = featureFilePublisher(dir);
    expect(await publisher.read()).toBeUndefined();
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('published');
    expect(await readdir(dir)).toEqual([FEATURE_FILE_NAME]);
    const text = await readFile(join(dir, FEATURE_FILE_NAME), 'utf8');
    const lines = text.split('\n');
    expect(lines[0]?.startsWith('#')).toBe(true);
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(1, -1)).toEqual(
      Object.keys(H100_LABELS)
        .sort()
        .map((k) => `${k}=${H100_LABELS[k]}`),
    );
    expect(await publisher.read()).toEqual(H100_LABELS);
  });

  it('a concurrent reader only ever sees a complete file', async () => {
    const publisher = featureFilePublisher(dir);
    const sets = [H100_X8, MI300X_X8, detection([...times(8, h100), ...times(8, mi300x)]), detection([])];
    const wanted = sets.map((s) => labelsFromDetection(s, undefined));
    await publisher.write(wanted[0] as Labels);
    let writing = true;
    const seen: Labels[] = [];
    const reader = (async () => {
      while (writing) {
        const labels = await publisher.read();
        if (labels) seen.push(labels);
      }
    })();
    for (let i = 0; i < 200; i++) await publisher.write(wanted[i % wanted.length] as Labels);
    writing = false;
    await reader;
    expect(seen.length).toBeGreaterThan(0);
    for (const labels of seen)
      expect(
        wanted.some((w) => sameLabels(w, labels)),
        JSON.stringify(labels),
      ).toBe(true);
    expect(await readdir(dir)).toEqual([FEATURE_FILE_NAME]);
    expect(await publisher.read()).toEqual(wanted[199 % wanted.length]);
  });

  it('read() skips comments and blank lines and keeps "=" inside values', async () => {
    await writeFile(
      join(dir, FEATURE_FILE_NAME),
      '# comment\n\nfeature.gpustack.ai/acceleratable=true\nodd=a=b\n=nokey\n',
    );
    expect(await featureFilePublisher(dir).read()).toEqual({ [ACCELERATABLE]: 'true', odd: 'a=b' });
  });

  it('a file written by a previous run is not rewritten when nothing changed', async () => {
    const publisher = featureFilePublisher(dir);
    await runCycle(
      createAgentState(),
      options(publisher, () => Promise.resolve(H100_X8)),
    );
    await writeFile(
      join(dir, FEATURE_FILE_NAME),
      `# hand-marked\n${Object.entries(H100_LABELS)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
    );
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('unchanged');
    expect((await readFile(join(dir, FEATURE_FILE_NAME), 'utf8')).startsWith('# hand-marked')).toBe(true);
    expect(state.writes).toBe(0);
  });

  it('a directory that cannot be written fails the cycle without throwing', async () => {
    // A file where a folder should be: no folder can be made there (root ignores permissions).
    await writeFile(join(dir, 'not-a-folder'), '');
    const publisher = featureFilePublisher(join(dir, 'not-a-folder', 'features.d'));
    const state = createAgentState();
    expect(
      await runCycle(
        state,
        options(publisher, () => Promise.resolve(H100_X8)),
      ),
    ).toBe('failed');
    expect(state.failures).toBe(1);
    expect(state.lastError).toMatch(/ENOTDIR|EEXIST/);
  });
});

describe('change detection', () => {
  const standIn = useFakeApiServer({ [NODE]: FOREIGN });

  const modes: { mode: string; make: () => Publisher }[] = [
    { mode: 'nodefeature', make: () => nodeFeaturePublisher(standIn.client(), NODE, NAMESPACE) },
    { mode: 'node-labels', make: () => nodeLabelsPublisher(standIn.client(), NODE) },
  ];

  it.each(modes)('$mode: the same detection twice writes once', async ({ make }) => {
    const publisher = make();
    const state: AgentState = createAgentState();
    const opts = options(publisher, () => Promise.resolve(H100_X8));
    expect(await runCycle(state, opts)).toBe('published');
    expect(await runCycle(state, opts)).toBe('unchanged');
    expect(await runCycle(state, opts)).toBe('unchanged');
    expect(standIn.api.patches()).toHaveLength(1);
    expect(state.writes).toBe(1);
  });

  it.each(modes)(
    '$mode: after a restart the published labels are found equal and nothing is written',
    async ({ make }) => {
      await runCycle(
        createAgentState(),
        options(make(), () => Promise.resolve(H100_X8)),
      );
      expect(standIn.api.patches()).toHaveLength(1);
      const restarted = createAgentState();
      const opts = options(make(), () => Promise.resolve(H100_X8));
      expect(await runCycle(restarted, opts)).toBe('unchanged');
      expect(await runCycle(restarted, opts)).toBe('unchanged');
      expect(standIn.api.patches()).toHaveLength(1);
      expect(restarted.writes).toBe(0);
      expect(restarted.published).toEqual(H100_LABELS);
    },
  );

  it.each(modes)('$mode: a changed detection writes again', async ({ make }) => {
    const publisher = make();
    const source = switchable(H100_X8);
    const state = createAgentState();
    const opts = options(publisher, source.detect);
    await runCycle(state, opts);
    await runCycle(state, opts);
    source.set(detection(times(7, h100)));
    expect(await runCycle(state, opts)).toBe('published');
    expect(await runCycle(state, opts)).toBe('unchanged');
    expect(standIn.api.patches()).toHaveLength(2);
    expect(state.writes).toBe(2);
    expect(state.published?.[`${A}nvidia-h100-80gb-hbm3.count`]).toBe('7');
  });

  it('feature-file: same detection twice writes once; a restart writes nothing; a change writes again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpustack-agent-'));
    try {
      const writes: Labels[] = [];
      const wrap = (inner: Publisher): Publisher => ({
        mode: inner.mode,
        read: () => inner.read(),
        write: async (l) => {
          writes.push(l);
          await inner.write(l);
        },
      });
      const source = switchable(H100_X8);
      const state = createAgentState();
      await runCycle(state, options(wrap(featureFilePublisher(dir)), source.detect));
      await runCycle(state, options(wrap(featureFilePublisher(dir)), source.detect));
      expect(writes).toHaveLength(1);
      const restarted = createAgentState();
      expect(await runCycle(restarted, options(wrap(featureFilePublisher(dir)), source.detect))).toBe('unchanged');
      expect(writes).toHaveLength(1);
      source.set(detection([]));
      expect(await runCycle(restarted, options(wrap(featureFilePublisher(dir)), source.detect))).toBe('published');
      expect(writes).toHaveLength(2);
      expect(await featureFilePublisher(dir).read()).toEqual({ [ACCELERATABLE]: 'false' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a CPU node publishes acceleratable=false once and keeps running', async () => {
    const publisher = nodeLabelsPublisher(standIn.client(), NODE);
    const state = createAgentState();
    const opts = options(publisher, () => Promise.resolve(detection([])));
    expect(await runCycle(state, opts)).toBe('published');
    expect(await runCycle(state, opts)).toBe('unchanged');
    expect(standIn.api.nodes.get(NODE)?.metadata.labels[ACCELERATABLE]).toBe('false');
    expect(standIn.api.patches()).toHaveLength(1);
  });
});
