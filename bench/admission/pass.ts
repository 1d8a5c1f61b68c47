/**
 * @module One cluster size, in one process: the admission checker's stores filled as the
 * informers fill them (schema, then the slim projection), then one reconcile pass timed —
 * `Reconciler.pass` with a writer that does nothing — for each share of Workloads awaiting a
 * verdict. Every timed pass decides every awaiting Workload (the decision runs before the
 * write is skipped as unchanged).
 * DRA: every node publishes its ResourceSlices, `claimShare` of the nodes hold cards through
 * ResourceClaims and `claimShare` of the Workloads ask through a ResourceClaimTemplate
 * (`admission-dra.ts`); the ledger is built once per pass, as the checker builds it.
 * Topology (`compare`, issue 44): the Nodes in blocks and racks, and the same Workloads timed
 * twice — as today, and with the domains Kueue's TAS assigned each PodSet (`topology.ts`) — one
 * pass of each in turn per sample, so both see the same machine load.
 * Usage: `node --expose-gc --import tsx bench/admission/pass.ts <nodes> <workloads> <shares,…> <samples> <out.json> [claimShare] [off|compare]`
 */
import { writeFileSync } from 'node:fs';

import {
  NODES,
  PODS,
  RESOURCE_CLAIMS,
  RESOURCE_CLAIM_TEMPLATES,
  RESOURCE_FLAVORS,
  RESOURCE_SLICES,
  Reconciler,
  WORKLOADS,
  objectKey,
  type WatchedResource,
} from '../../src/admission/index.js';
import { aKeyOfFlavor, claimWorkload, generateDra } from './dra.js';
import type { KubeObject } from '../../src/k8s/index.js';
import { resolveSettings } from '../../src/contracts/index.js';
import { generateAdmissionCluster } from './cluster.js';
import { DEFAULT_SHAPE, sceneOf, withAssignment, withDomainLabels, type TopologyScene } from './topology.js';
import { summarize, type Summary } from '../shared/stats.js';

export interface PassTiming {
  readonly nodes: number;
  readonly pods: number;
  readonly workloads: number;
  readonly awaiting: number;
  readonly verdicts: { readonly Ready: number; readonly Retry: number };
  /** Wall time of one pass. */
  readonly passMs: Summary;
  /** The same passes in process CPU time. */
  readonly cpuMs: Summary;
  readonly msPerAwaiting: number;
  /** The DRA objects of the scene; `claimWorkloads` of the awaiting ones ask through claims. */
  readonly dra: {
    readonly claimShare: number;
    readonly slices: number;
    readonly claims: number;
    readonly templates: number;
    readonly awaitingWithClaims: number;
  };
  /** Present on the passes whose Workloads carry TAS-assigned domains. */
  readonly topology?: TopologyScene;
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** As the informer stores an object: parsed at the boundary, then slim. */
function stored<T extends KubeObject>(resource: WatchedResource<T>, raw: unknown): T {
  return resource.slim(resource.schema.parse(raw));
}

type Stored = ReturnType<typeof stored<KubeObject>>;

/**
 * The Workloads of one share as the informer stores them; `claimShare` of them ask through a
 * ResourceClaimTemplate; with `tasNames` (the Nodes by index) each carries TAS-assigned domains.
 */
function workloadsOf(
  cluster: ReturnType<typeof generateAdmissionCluster>,
  count: number,
  share: number,
  dra: { readonly claimShare: number; readonly aKey: string },
  tasNames: readonly string[] | undefined,
): { workloads: Stored[]; templates: Map<string, Stored>; awaitingWithClaims: number } {
  const workloads: ReturnType<typeof stored<KubeObject>>[] = [];
  const templates = new Map<string, ReturnType<typeof stored<KubeObject>>>();
  let index = 0;
  let awaitingWithClaims = 0;
  cluster.workloads(count, share, (generated) => {
    const i = index++;
    const w = tasNames ? withAssignment(generated, i, tasNames, DEFAULT_SHAPE) : generated;
    // A fixed scatter independent of the awaiting ones' even spread (the two would alias).
    const withClaims = ((Math.imul(i + 1, 2654435761) >>> 0) % 10_000) / 10_000 < dra.claimShare;
    if (!withClaims) return void workloads.push(stored(WORKLOADS, w));
    const converted = claimWorkload(w, dra.aKey);
    const template = stored(RESOURCE_CLAIM_TEMPLATES, converted.template);
    templates.set(objectKey(template.metadata), template);
    const parsed = stored(WORKLOADS, converted.workload);
    const checks = (converted.workload['status'] as { admissionChecks?: { state: string }[] } | undefined)
      ?.admissionChecks;
    if (checks?.some((c) => c.state === 'Pending')) awaitingWithClaims++;
    workloads.push(parsed);
  });
  return { workloads, templates, awaitingWithClaims };
}

interface Timed {
  readonly reconciler: Reconciler;
  readonly snapshot: Parameters<Reconciler['pass']>[0];
  readonly wall: number[];
  readonly cpu: number[];
}

/** One pass of each variant in turn per sample: both see the same load on a shared machine. */
async function sampleInTurn(variants: readonly Timed[], samples: number): Promise<void> {
  for (let i = 0; i < samples; i++) {
    for (const variant of i % 2 === 0 ? variants : [...variants].reverse()) {
      gc();
      const used = process.cpuUsage();
      const started = performance.now();
      await variant.reconciler.pass(variant.snapshot);
      variant.wall.push(performance.now() - started);
      const spent = process.cpuUsage(used);
      variant.cpu.push((spent.user + spent.system) / 1000);
    }
  }
}

async function main(): Promise<void> {
  const [nodesText, workloadsText, sharesText, samplesText, out, claimShareText, topologyText] = process.argv.slice(2);
  const compare = (topologyText ?? 'off') === 'compare';
  const claimShare = Number(claimShareText ?? '0.3');
  const size = Number(nodesText);
  const workloadCount = Number(workloadsText);
  const shares = (sharesText ?? '').split(',').map(Number);
  const samples = Number(samplesText);
  if (!Number.isInteger(size) || !Number.isInteger(workloadCount) || !Number.isInteger(samples) || !out) {
    throw new Error('usage: admission-pass.ts <nodes> <workloads> <shares,…> <samples> <out.json>');
  }
  const cluster = generateAdmissionCluster(size);
  const nodes = cluster.nodes
    .map((n, i) => (compare ? withDomainLabels(n, i, DEFAULT_SHAPE) : n))
    .map((n) => stored(NODES, JSON.parse(JSON.stringify(n))));
  const names = nodes.map((n) => n.metadata.name);
  const flavors = Object.fromEntries(
    cluster.flavors.map((f) => stored(RESOURCE_FLAVORS, f)).map((f) => [f.metadata.name, f]),
  );
  const pods: ReturnType<typeof stored<KubeObject>>[] = [];
  cluster.pods((p) => pods.push(stored(PODS, p)));
  const aKey = aKeyOfFlavor(cluster.flavor);
  const dra = generateDra(
    nodes.map((n) => n.metadata.name),
    aKey,
    claimShare,
  );
  const byKey = <T extends KubeObject>(objects: T[]) => new Map(objects.map((o) => [objectKey(o.metadata), o]));
  const slices = byKey(dra.slices.map((s) => stored(RESOURCE_SLICES, s)));
  const claims = byKey(dra.claims.map((c) => stored(RESOURCE_CLAIMS, c)));
  const resolution = resolveSettings(undefined);
  if (!resolution.ok) throw new Error(resolution.message);
  const results: PassTiming[] = [];
  for (const share of shares) {
    const variants = (compare ? [false, true] : [false]).map((tas) => {
      const { workloads, templates, awaitingWithClaims } = workloadsOf(
        cluster,
        workloadCount,
        share,
        { claimShare, aKey },
        tas ? names : undefined,
      );
      const verdicts = { Ready: 0, Retry: 0 };
      const counting = { on: true };
      const writer = {
        write: (_: unknown, entry: { state: 'Ready' | 'Retry' }) => {
          if (counting.on) verdicts[entry.state]++;
          return Promise.resolve();
        },
      };
      const reconciler = new Reconciler({
        writer,
        checkName: 'gpustack-node-devices',
        logger: quiet,
        clock: () => new Date('2026-02-01T08:00:30Z'),
      });
      const snapshot = {
        workloads: workloads as never,
        flavors: flavors as never,
        nodes: nodes as never,
        pods: pods as never,
        settings: resolution.settings,
        dra: { slices, claims, templates } as never,
      };
      return {
        tas,
        reconciler,
        snapshot,
        verdicts,
        counting,
        templates,
        awaitingWithClaims,
        count: workloads.length,
        wall: [] as number[],
        cpu: [] as number[],
      };
    });
    for (const variant of variants) {
      await variant.reconciler.pass(variant.snapshot);
      variant.counting.on = false;
    }
    await sampleInTurn(variants, samples);
    for (const variant of variants) {
      const { verdicts, templates, awaitingWithClaims } = variant;
      const awaiting = verdicts.Ready + verdicts.Retry;
      const passMs = summarize(variant.wall);
      results.push({
        nodes: size,
        pods: pods.length,
        workloads: workloadCount,
        awaiting,
        verdicts,
        passMs,
        cpuMs: summarize(variant.cpu),
        msPerAwaiting: awaiting > 0 ? passMs.median / awaiting : 0,
        dra: { claimShare, slices: slices.size, claims: claims.size, templates: templates.size, awaitingWithClaims },
        ...(variant.tas ? { topology: sceneOf(size, DEFAULT_SHAPE, variant.count) } : {}),
      });
      process.stderr.write(
        `[admission-pass] ${size} nodes${variant.tas ? ' (TAS domains)' : ''}, ${pods.length} pods, ${awaiting}/${workloadCount} awaiting (${awaitingWithClaims} with claims; ${slices.size} slices, ${claims.size} claims): pass ${passMs.median.toFixed(1)} ms (Ready ${verdicts.Ready}, Retry ${verdicts.Retry})\n`,
      );
    }
  }
  writeFileSync(out, JSON.stringify(results, null, 2));
}

await main();
