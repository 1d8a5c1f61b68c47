/**
 * @module The memory the admission checker's stores take, in a fresh process per mode: `slim`
 * keeps what the informers keep now (schema, then the slim projection), `whole` the parsed
 * objects as they were kept before. Each object is serialised and parsed again first, as if
 * received, so the store shares nothing with the generator; the generator's copies are dropped
 * before measuring. Reports V8 heap in use and RSS after a full GC, against the same process
 * before anything was generated, and the peak RSS.
 * Usage: `node --expose-gc --import tsx bench/admission/memory.ts <slim|whole> <nodes> <pods> <out.json>`
 */
import { writeFileSync } from 'node:fs';

import { NODES, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES, type WatchedResource } from '../../src/admission/index.js';
import type { KubeObject } from '../../src/k8s/index.js';
import { generateAdmissionCluster } from './cluster.js';
import { aKeyOfFlavor, generateDra } from './dra.js';

export interface StoreMemory {
  readonly mode: 'slim' | 'whole';
  readonly nodes: number;
  readonly pods: number;
  /** JSON bytes received (what the API server sent). */
  readonly receivedBytes: { readonly nodes: number; readonly pods: number };
  /** Heap in use by the stores: after a full GC, minus the same before generating. */
  readonly storeHeapBytes: number;
  readonly rssBytes: number;
  readonly rssBaselineBytes: number;
  readonly peakRssBytes: number;
  /** The ledger's stores on top (every node's slices, claims on 30 % of the nodes): JSON received and heap held. */
  readonly ledger: {
    readonly slices: number;
    readonly claims: number;
    readonly receivedBytes: number;
    readonly heapBytes: number;
  };
}

const gc = (globalThis as { gc?: () => void }).gc;

function settle(): NodeJS.MemoryUsage {
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage();
}

function main(): void {
  const [mode, nodesText, podsText, out] = process.argv.slice(2);
  const size = Number(nodesText);
  const podTotal = Number(podsText);
  if ((mode !== 'slim' && mode !== 'whole') || !Number.isInteger(size) || !Number.isInteger(podTotal) || !out) {
    throw new Error('usage: admission-memory.ts <slim|whole> <nodes> <pods> <out.json>');
  }
  const before = settle();
  const received = { nodes: 0, pods: 0 };
  const receive = <T extends KubeObject>(resource: WatchedResource<T>, raw: unknown, kind: 'nodes' | 'pods'): T => {
    const text = JSON.stringify(raw);
    received[kind] += Buffer.byteLength(text);
    const parsed = resource.schema.parse(JSON.parse(text));
    return mode === 'slim' ? resource.slim(parsed) : parsed;
  };
  const cluster = generateAdmissionCluster(size);
  const names = cluster.nodes.map((n) => n.metadata.name);
  const nodes = new Map<string, KubeObject>();
  for (let i = 0; i < cluster.nodes.length; i++) {
    const node = receive(NODES, cluster.nodes[i], 'nodes');
    nodes.set(node.metadata.name, node);
  }
  // The generator's Nodes go; only the stores stay.
  cluster.nodes.length = 0;
  const pods = new Map<string, KubeObject>();
  cluster.pods((raw) => {
    const pod = receive(PODS, raw, 'pods');
    // By uid: generated DaemonSet pod names (5 hex digits, as the API server makes them) may repeat across 5,000 nodes.
    pods.set(pod.metadata.uid ?? `${pod.metadata.namespace}/${pod.metadata.name}`, pod);
  }, podTotal);
  const withoutLedger = settle();
  const ledgerReceived = { bytes: 0 };
  const slices = new Map<string, KubeObject>();
  const claims = new Map<string, KubeObject>();
  {
    const dra = generateDra(names, aKeyOfFlavor(cluster.flavor), 0.3);
    for (const [resource, raws, store] of [
      [RESOURCE_SLICES, dra.slices, slices],
      [RESOURCE_CLAIMS, dra.claims, claims],
    ] as const) {
      for (const raw of raws) {
        const text = JSON.stringify(raw);
        ledgerReceived.bytes += Buffer.byteLength(text);
        const parsed = (resource as WatchedResource<KubeObject>).schema.parse(JSON.parse(text));
        const kept = mode === 'slim' ? (resource as WatchedResource<KubeObject>).slim(parsed) : parsed;
        store.set(`${kept.metadata.namespace ?? ''}/${kept.metadata.name}`, kept);
      }
    }
  }
  const after = settle();
  const result: StoreMemory = {
    mode,
    nodes: nodes.size,
    pods: pods.size,
    receivedBytes: received,
    storeHeapBytes: withoutLedger.heapUsed - before.heapUsed,
    rssBytes: after.rss,
    rssBaselineBytes: before.rss,
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    ledger: {
      slices: slices.size,
      claims: claims.size,
      receivedBytes: ledgerReceived.bytes,
      heapBytes: after.heapUsed - withoutLedger.heapUsed,
    },
  };
  writeFileSync(out, JSON.stringify(result, null, 2));
  process.stderr.write(
    `[admission-memory] ${mode}: ${nodes.size} nodes, ${pods.size} pods: store heap ${(result.storeHeapBytes / 1048576).toFixed(0)} MB (+ ${(result.ledger.heapBytes / 1048576).toFixed(0)} MB for ${slices.size} slices and ${claims.size} claims), RSS ${(after.rss / 1048576).toFixed(0)} MB (peak ${(result.peakRssBytes / 1048576).toFixed(0)} MB)\n`,
  );
  // Keep the stores alive until measured.
  if (nodes.size + pods.size + slices.size + claims.size < 0) process.stdout.write('');
}

main();
