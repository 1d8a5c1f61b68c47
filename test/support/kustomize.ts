/**
 * @module What `kubectl apply -k manifests/` applies, computed without kustomize: the files of
 * `resources`, then the `images:` transformation. Only the fields our kustomization uses are
 * understood; any other field throws, so a new one cannot be ignored silently (the Helm chart's
 * equivalence test compares against this). Where kubectl is installed, the e2e suite also checks
 * it against `kubectl kustomize`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { parse, parseAllDocuments } from 'yaml';

export interface KustomizeImage {
  readonly name: string;
  readonly newName?: string;
  readonly newTag?: string;
  readonly digest?: string;
}

interface Kustomization {
  readonly resources: readonly string[];
  readonly images?: readonly KustomizeImage[];
}

export type ManifestObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

const UNDERSTOOD = new Set(['apiVersion', 'kind', 'resources', 'images']);

export function readKustomization(dir: string): Kustomization {
  const kustomization = parse(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8')) as Record<string, unknown>;
  const unknown = Object.keys(kustomization).filter((key) => !UNDERSTOOD.has(key));
  if (unknown.length > 0)
    throw new Error(`${dir}/kustomization.yaml: ${unknown.join(', ')} not understood by test/manifests/kustomize.ts`);
  return kustomization as unknown as Kustomization;
}

/** `name[:tag][@digest]` → its name (a registry port's colon is not a tag). */
function imageName(image: string): string {
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? withoutDigest : withoutDigest.slice(0, colon);
}

/** kustomize's image transformer: a matching image gets newName, and newTag or digest. */
function transformImage(image: string, images: readonly KustomizeImage[]): string {
  const name = imageName(image);
  const rule = images.find((i) => i.name === name);
  if (!rule) return image;
  const rest = image.slice(name.length);
  const tagOrDigest = rule.digest ? `@${rule.digest}` : rule.newTag ? `:${rule.newTag}` : rest;
  return `${rule.newName ?? name}${tagOrDigest}`;
}

/** Rewrites the image of every container and init container, at any depth (pod templates). */
function withImages(node: unknown, images: readonly KustomizeImage[]): unknown {
  if (Array.isArray(node)) return node.map((item) => withImages(item, images));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      out[key] = value.map((container: Record<string, unknown>) =>
        typeof container['image'] === 'string'
          ? { ...container, image: transformImage(container['image'], images) }
          : container,
      );
    } else out[key] = withImages(value, images);
  }
  return out;
}

/**
 * Every object of the kustomization in `dir`, in file order, after its `images:` (or `images`,
 * as `kustomize edit set image` would leave them).
 */
export function kustomizeBuild(dir: string, images?: readonly KustomizeImage[]): ManifestObject[] {
  const kustomization = readKustomization(dir);
  const rules = images ?? kustomization.images ?? [];
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))
      .map((doc) => doc.toJS() as unknown)
      .filter((value): value is Record<string, unknown> => value !== null && typeof value === 'object')
      .map((object) => withImages(object, rules) as ManifestObject),
  );
}
