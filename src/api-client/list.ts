/** @module One list read whole: the helper the CLI commands share instead of one each. */
import type { KubeApi } from './client.js';

/** What a list item is checked with: a zod schema, or anything with its `safeParse`. */
export interface ItemParser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/**
 * Every item of the list at `path` that `parser` accepts, passed through `keep` (what a caller
 * keeps of each, e.g. the checker's slimmed copy); items the parser refuses are skipped.
 */
export async function listParsed<T, K = T>(
  api: KubeApi,
  path: string,
  parser: ItemParser<T>,
  keep: (item: T) => K = (item) => item as unknown as K,
): Promise<K[]> {
  const out: K[] = [];
  await api.listEach(path, (item) => {
    const parsed = parser.safeParse(item);
    if (parsed.success) out.push(keep(parsed.data));
  });
  return out;
}
