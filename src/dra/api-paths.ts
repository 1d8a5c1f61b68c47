/**
 * @module The resource.k8s.io collections we list, watch and write, and their API paths: one table
 * for the agent, the checker, the kubelet plugin and the CLI instead of a path spelled in each.
 */
import { RESOURCE_API_VERSION } from './constants.js';
import { DEVICE_TAINT_RULES_RESOURCE } from './device-taints.js';

/** The collection root of resource.k8s.io/v1. */
export const RESOURCE_API = `/apis/${RESOURCE_API_VERSION}`;

/** The resource.k8s.io collections we touch. */
export const RESOURCE_COLLECTIONS = [
  'resourceslices',
  'resourceclaims',
  'resourceclaimtemplates',
  DEVICE_TAINT_RULES_RESOURCE,
] as const;
export type ResourceCollection = (typeof RESOURCE_COLLECTIONS)[number];

export interface ResourcePathOptions {
  /** `resource.k8s.io/v1` unless given (DeviceTaintRule is served at the version discovery finds). */
  readonly groupVersion?: string | undefined;
  /** For a namespaced object (a ResourceClaim); cluster-wide collection otherwise. */
  readonly namespace?: string | undefined;
  /** One object of the collection. */
  readonly name?: string | undefined;
}

/** `/apis/<groupVersion>/[namespaces/<namespace>/]<collection>[/<name>]`, each segment encoded. */
export function resourcePath(collection: ResourceCollection, options: ResourcePathOptions = {}): string {
  const namespace = options.namespace === undefined ? '' : `/namespaces/${encodeURIComponent(options.namespace)}`;
  const name = options.name === undefined ? '' : `/${encodeURIComponent(options.name)}`;
  return `/apis/${options.groupVersion ?? RESOURCE_API_VERSION}${namespace}/${collection}${name}`;
}
