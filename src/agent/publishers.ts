/**
 * @module Where the agent's labels go (`--publish`): an NFD NodeFeature (default), a feature file
 * in NFD's `features.d`, or the Node's own labels. Each can read back what is published, so the
 * agent writes only on change — also right after a restart.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeApi } from '../api-client/index.js';
import { AGENT_LABELS_ANNOTATION, DERIVED_LABELS_ANNOTATION, readDerivedRecord } from '../nodefeature/index.js';
import { isAgentLabel, type Labels } from './labels.js';

export type PublishMode = 'nodefeature' | 'feature-file' | 'node-labels';
export const PUBLISH_MODES: readonly PublishMode[] = ['nodefeature', 'feature-file', 'node-labels'];

export interface Publisher {
  readonly mode: PublishMode;
  /** The labels currently published by us; `undefined` when nothing is. */
  read(): Promise<Labels | undefined>;
  write(labels: Labels): Promise<void>;
}

const FIELD_MANAGER = 'gpustack-agent';
const NFD_API = '/apis/nfd.k8s-sigs.io/v1alpha1';
export const FEATURE_FILE_NAME = 'gpustack-agent';

/** NodeFeature `<node>-gpustack-agent`, server-side applied: labels we stop sending are dropped by the apply. */
export function nodeFeaturePublisher(api: KubeApi, node: string, namespace: string): Publisher {
  const name = `${node}-gpustack-agent`;
  const path = `${NFD_API}/namespaces/${encodeURIComponent(namespace)}/nodefeatures/${encodeURIComponent(name)}`;
  return {
    mode: 'nodefeature',
    async read() {
      const object = (await api.get(path)) as { spec?: { labels?: Labels } } | undefined;
      return object?.spec?.labels;
    },
    async write(labels) {
      await api.patch(
        `${path}?fieldManager=${FIELD_MANAGER}&force=true`,
        {
          apiVersion: 'nfd.k8s-sigs.io/v1alpha1',
          kind: 'NodeFeature',
          metadata: { name, namespace, labels: { 'nfd.node.kubernetes.io/node-name': node } },
          spec: { labels },
        },
        'application/apply-patch+yaml',
      );
    },
  };
}

/**
 * The Node's labels (merge patch): our keys are set, the ones we owned and no longer publish are
 * removed. What we own is what we declare in the annotation `feature.gpustack.ai/agent-labels`,
 * written with every patch, so node-profile can tell our device labels from the ones it derives
 * from a vendor's labels, and we never remove those. A node labelled before the annotation
 * existed: our keys are the agent-shaped ones except those node-profile recorded as derived.
 */
export function nodeLabelsPublisher(api: KubeApi, node: string): Publisher {
  const path = `/api/v1/nodes/${encodeURIComponent(node)}`;
  async function ownedLabels(): Promise<Labels> {
    const object = (await api.get(path)) as { metadata?: { labels?: Labels; annotations?: Labels } } | undefined;
    if (object === undefined) throw new Error(`node ${node} not found`);
    const labels = object.metadata?.labels ?? {};
    const annotations = object.metadata?.annotations ?? {};
    const declared = annotations[AGENT_LABELS_ANNOTATION];
    const derived = readDerivedRecord(annotations[DERIVED_LABELS_ANNOTATION]);
    const keys =
      declared !== undefined
        ? declared.split(',').filter((key) => key !== '')
        : Object.keys(labels).filter((key) => isAgentLabel(key) && derived[key] !== labels[key]);
    return Object.fromEntries(keys.flatMap((key) => (labels[key] !== undefined ? [[key, labels[key]]] : [])));
  }
  return {
    mode: 'node-labels',
    async read() {
      const owned = await ownedLabels();
      return Object.keys(owned).length > 0 ? owned : undefined;
    },
    async write(labels) {
      const patch: Record<string, string | null> = { ...labels };
      for (const key of Object.keys(await ownedLabels())) if (!(key in labels)) patch[key] = null;
      // "feature.gpustack.ai/agent-labels=<our keys, sorted, comma-separated>"
      const declared = Object.keys(labels).sort().join(',');
      await api.patch(
        path,
        { metadata: { labels: patch, annotations: { [AGENT_LABELS_ANNOTATION]: declared } } },
        'application/merge-patch+json',
      );
    },
  };
}

/** `<dir>/gpustack-agent` in NFD's `key=value` format, written to a dot-file then renamed (NFD skips dot-files). */
export function featureFilePublisher(dir: string): Publisher {
  const path = join(dir, FEATURE_FILE_NAME);
  return {
    mode: 'feature-file',
    async read() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      const labels: Labels = {};
      for (const line of text.split('\n')) {
        const eq = line.indexOf('=');
        if (eq > 0 && !line.startsWith('#')) labels[line.slice(0, eq)] = line.slice(eq + 1);
      }
      return labels;
    },
    async write(labels) {
      const body = `# written by gpustack-operator agent\n${Object.keys(labels)
        .sort()
        .map((k) => `${k}=${labels[k]}`)
        .join('\n')}\n`;
      const temp = join(dir, `.${FEATURE_FILE_NAME}.tmp`);
      // NFD creates features.d itself, but a first agent on a fresh node (or a run by hand) may come first.
      await mkdir(dir, { recursive: true });
      await writeFile(temp, body, { mode: 0o644 });
      await rename(temp, path);
    },
  };
}
