/** @module Reading `examples/clusters/` dumps: a `List` (YAML or JSON) or a bare array of Nodes. */
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { NodeSchema, type Node } from '../../src/k8s/index.js';
import { repoPath } from './fixtures.js';

export const CLUSTERS_DIR = 'examples/clusters';

/** Every node-dump file under `examples/clusters/` (YAML and JSON), sorted. */
export function listClusterFiles(): string[] {
  return readdirSync(repoPath(CLUSTERS_DIR))
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort();
}

/** The Nodes of one dump, each checked against the loose Node schema. */
export function loadClusterNodes(file: string): Node[] {
  const doc: unknown = parse(readFileSync(repoPath(`${CLUSTERS_DIR}/${file}`), 'utf8'));
  const items = Array.isArray(doc) ? doc : (doc as { items?: unknown[] } | null)?.items;
  if (!Array.isArray(items)) throw new Error(`${file}: neither a List nor an array of Nodes`);
  return items.map((item) => NodeSchema.parse(item));
}
