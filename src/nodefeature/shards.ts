/**
 * @module Node shards: node-profile puts each NodeProfile in one of K shards by a hash of the Node's
 * name, a NodeShard summarises its shard's profiles, and the chain reads the K summaries instead of
 * every profile (docs/architecture.md#node-shards).
 */
import { fnv1a64Hex } from './fnv.js';

/** The NodeShard of shard `index`; the chain names its children so. */
export function nodeShardName(index: number): string {
  return `shard-${index}`;
}

/**
 * The shard of a Node: FNV-1a of its name mod `shards` (the low 32 bits; a Node's name never
 * changes, so neither does its shard while `shards` stays).
 * @example nodeShardOf('gpu-node-1', 2) // 0 or 1, always the same
 */
export function nodeShardOf(name: string, shards: number): number {
  return Number.parseInt(fnv1a64Hex(name).slice(8), 16) % shards;
}

/** The shard a NodeProfile's label names, if it is one (a non-negative whole number without leading zero). */
export function parseNodeShard(value: string | undefined): number | undefined {
  if (value === undefined || !/^(0|[1-9]\d{0,5})$/.test(value)) return undefined;
  return Number(value);
}
