/**
 * @module One cluster size, in one process: the admission checker's stores filled as the
 * informers fill them (schema, then the slim projection), then one reconcile pass timed —
 * `Reconciler.pass` with a writer that does nothing — for each share of Workloads awaiting a
 * verdict. Every timed pass decides every awaiting Workload (the decision runs before the
 * write is skipped as unchanged).
 * DRA: every node publishes its ResourceSlices, `claimShare` of the nodes hold cards through
 * ResourceClaims and `claimShare` of the Workloads ask through a ResourceClaimTemplate
 * (`admission-dra.ts`); the ledger is built once per pass, as the checker builds it.
 * Usage: `node --expose-gc --import tsx bench/admission/pass.ts <nodes> <workloads> <shares,…> <samples> <out.json> [claimShare]`
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
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** As the informer stores an object: parsed at the boundary, then slim. */
function stored<T extends KubeObject>(resource: WatchedResource<T>, raw: unknown): T {
  return resource.slim(resource.schema.parse(raw));
}

async function main(): Promise<void> {
  const [nodesText, workloadsText, sharesText, samplesText, out, claimShareText] = process.argv.slice(2);
  const claimShare = Number(claimShareText ?? '0.3');
  const size = Number(nodesText);
  const workloadCount = Number(workloadsText);
  const shares = (sharesText ?? '').split(',').map(Number);
  const samples = Number(samplesText);
  if (!Number.isInteger(size) || !Number.isInteger(workloadCount) || !Number.isInteger(samples) || !out) {
    throw new Error('usage: admission-pass.ts <nodes> <workloads> <shares,…> <samples> <out.json>');
  }
  const cluster = generateAdmissionCluster(size);
  const nodes = cluster.nodes.map((n) => stored(NODES, JSON.parse(JSON.stringify(n))));
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
    const workloads: ReturnType<typeof stored<KubeObject>>[] = [];
    const templates = new Map<string, ReturnType<typeof stored<KubeObject>>>();
    let index = 0;
    let awaitingWithClaims = 0;
    cluster.workloads(workloadCount, share, (w) => {
      const i = index++;
      // A fixed scatter independent of the awaiting ones' even spread (the two would alias).
      const withClaims = ((Math.imul(i + 1, 2654435761) >>> 0) % 10_000) / 10_000 < claimShare;
      if (!withClaims) return void workloads.push(stored(WORKLOADS, w));
      const converted = claimWorkload(w, aKey);
      const template = stored(RESOURCE_CLAIM_TEMPLATES, converted.template);
      templates.set(objectKey(template.metadata), template);
      const parsed = stored(WORKLOADS, converted.workload);
      const checks = (converted.workload['status'] as { admissionChecks?: { state: string }[] } | undefined)
        ?.admissionChecks;
      if (checks?.some((c) => c.state === 'Pending')) awaitingWithClaims++;
      workloads.push(parsed);
    });
    const verdicts = { Ready: 0, Retry: 0 };
    let counting = true;
    const writer = {
      write: (_: unknown, entry: { state: 'Ready' | 'Retry' }) => {
        if (counting) verdicts[entry.state]++;
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
    await reconciler.pass(snapshot);
    counting = false;
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let i = 0; i < samples; i++) {
      gc();
      const used = process.cpuUsage();
      const started = performance.now();
      await reconciler.pass(snapshot);
      wall.push(performance.now() - started);
      const spent = process.cpuUsage(used);
      cpu.push((spent.user + spent.system) / 1000);
    }
    const awaiting = verdicts.Ready + verdicts.Retry;
    const passMs = summarize(wall);
    results.push({
      nodes: size,
      pods: pods.length,
      workloads: workloadCount,
      awaiting,
      verdicts,
      passMs,
      cpuMs: summarize(cpu),
      msPerAwaiting: awaiting > 0 ? passMs.median / awaiting : 0,
      dra: { claimShare, slices: slices.size, claims: claims.size, templates: templates.size, awaitingWithClaims },
    });
    process.stderr.write(
      `[admission-pass] ${size} nodes, ${pods.length} pods, ${awaiting}/${workloadCount} awaiting (${awaitingWithClaims} with claims; ${slices.size} slices, ${claims.size} claims): pass ${passMs.median.toFixed(1)} ms (Ready ${verdicts.Ready}, Retry ${verdicts.Retry})\n`,
    );
  }
  writeFileSync(out, JSON.stringify(results, null, 2));
}

await main();
