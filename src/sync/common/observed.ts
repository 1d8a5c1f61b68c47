/** @module Sending observed children back unchanged: how a controller keeps its last good state while it cannot compute a new one. */
import { sortObjects, type CompositeSyncResponse, type KubeObject } from '../../k8s/index.js';

type DesiredObject = CompositeSyncResponse['children'][number];

/** A child as observed: its spec, if any, is sent back as it came (`EchoedValueSchema` bounds its depth). */
type ObservedChild = KubeObject & { readonly spec?: unknown };

/**
 * Our last good children, re-sent as they are observed (identity, labels, our annotations and the
 * spec; not status or server-set metadata), so Metacontroller keeps every one of them. Used where
 * the answer would otherwise be an empty list, which deletes them all.
 */
export function keepObservedChildren(
  children: Readonly<Record<string, Readonly<Record<string, ObservedChild>> | undefined>>,
): DesiredObject[] {
  const kept: DesiredObject[] = [];
  for (const byName of Object.values(children)) {
    for (const child of Object.values(byName ?? {})) {
      if (!child.apiVersion || !child.kind) continue;
      const { name, namespace, labels, annotations } = child.metadata;
      const ownAnnotations = Object.fromEntries(
        Object.entries(annotations ?? {}).filter(([k]) => !k.startsWith('metacontroller.k8s.io/')),
      );
      kept.push({
        apiVersion: child.apiVersion,
        kind: child.kind,
        metadata: {
          name,
          ...(namespace ? { namespace } : {}),
          ...(labels ? { labels } : {}),
          ...(Object.keys(ownAnnotations).length ? { annotations: ownAnnotations } : {}),
        },
        ...(child.spec !== undefined ? { spec: child.spec } : {}),
      });
    }
  }
  return sortObjects(kept);
}
