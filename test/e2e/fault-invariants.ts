// The invariants every fault scenario checks (issue 37, ../shared/DESIGN.md §2), written once: each
// reads the live cluster and answers its problems (empty = holds). `checkInvariants` runs a set and
// says in one line which ran and how they came out; the fault line of each scenario carries it.
import type { Node, SchedulingChain } from '../../src/k8s/index.js';
import { parseQuantity } from '../../src/k8s/index.js';
import { localQueueName } from '../../src/nodefeature/index.js';
import type { KubeClient, KubeObject } from '../../harness/e2e/apply.js';
import { diffAgainstRender, readLiveChain } from '../../harness/e2e/chain.js';

const GPUSTACK = 'worker.gpustack.ai/v1alpha1';
const KUEUE = 'kueue.x-k8s.io/v1beta2';
const RESOURCE = 'resource.k8s.io/v1';
const OUR_DRIVER = /^[a-z0-9-]+\.gpustack\.ai$/;

type Result = {
  driver: string;
  pool: string;
  device: string;
  shareID?: string;
  consumedCapacity?: Record<string, string>;
};
type Claim = KubeObject & {
  status?: { allocation?: { devices?: { results?: Result[] } }; reservedFor?: { resource: string; name: string }[] };
};
type Slice = KubeObject & {
  spec: {
    driver: string;
    nodeName?: string;
    pool: { name: string; generation: number; resourceSliceCount: number };
    devices?: { name: string; capacity?: Record<string, { value: string }> }[];
  };
};
type Pod = KubeObject & {
  spec: { nodeName?: string; resourceClaims?: { name: string }[] };
  status?: { phase?: string; resourceClaimStatuses?: { name: string; resourceClaimName?: string }[] };
};

export type Invariant = (client: KubeClient) => Promise<string[]>;

/**
 * The live chain equals what `render` prints for the live Nodes, namespaces and SchedulingChain —
 * but for what render cannot know, having no history: an InstanceType whose Nodes all left (a
 * settings change moved them) stays with its ClusterQueue held and its LocalQueues, on purpose
 * (derived InstanceTypes are sticky: docs/architecture.md, only an admin deletion removes one).
 * Those are accepted when the queue is held; anything else live and not rendered is not.
 */
export const chainEqualsRender: Invariant = async (client) => {
  const nodes = (await client.list('v1', 'Node')) as unknown as Node[];
  const namespaces = (await client.list('v1', 'Namespace')).map((n) => n.metadata.name).sort();
  const chain = await client.get<SchedulingChain & KubeObject>(GPUSTACK, 'SchedulingChain', 'default');
  const live = await readLiveChain(client);
  const problems = diffAgainstRender(live, nodes, namespaces, chain ?? undefined);
  const kept = new Set<string>();
  for (const problem of problems) {
    const name = /^unexpected InstanceType (\S+)$/.exec(problem)?.[1];
    const queue = name === undefined ? undefined : live.objects.get(`ClusterQueue ${name}`);
    if (name === undefined || (queue as { spec?: { stopPolicy?: string } } | undefined)?.spec?.stopPolicy !== 'Hold')
      continue;
    kept.add(`unexpected InstanceType ${name}`);
    kept.add(`unexpected ClusterQueue ${name}`);
    for (const ns of namespaces) kept.add(`unexpected LocalQueue ${ns}/${localQueueName(name)}`);
  }
  return problems.filter((p) => !kept.has(p));
};

/** `card-<i>` or `card-<i>-shared` → the card index and which device. */
function cardOf(device: string): { index: number; shared: boolean } | undefined {
  const match = /^card-(\d+)(-shared)?$/.exec(device);
  return match ? { index: Number(match[1]), shared: match[2] !== undefined } : undefined;
}

/**
 * What `claims` hold of each card beyond its counters: two whole claims on one card, a whole and a
 * shared one, or shares whose consumed capacity passes the shared device's capacity, per quantity.
 */
function overCommitted(claims: readonly Claim[], slices: readonly Slice[]): string[] {
  const capacity = new Map<string, Record<string, { value: string }>>();
  for (const slice of slices)
    for (const device of slice.spec.devices ?? [])
      capacity.set(`${slice.spec.driver}/${slice.spec.pool.name}/${device.name}`, device.capacity ?? {});
  const cards = new Map<string, { whole: string[]; shared: { claim: string; consumed: Record<string, string> }[] }>();
  for (const claim of claims) {
    const id = `${claim.metadata.namespace}/${claim.metadata.name}`;
    for (const result of claim.status?.allocation?.devices?.results ?? []) {
      if (!OUR_DRIVER.test(result.driver)) continue;
      const card = cardOf(result.device);
      if (!card) continue;
      const key = `${result.driver}/${result.pool}/card-${card.index}`;
      const entry = cards.get(key) ?? { whole: [], shared: [] };
      cards.set(key, entry);
      if (card.shared) entry.shared.push({ claim: id, consumed: result.consumedCapacity ?? {} });
      else entry.whole.push(id);
    }
  }
  const problems: string[] = [];
  for (const [key, { whole, shared }] of cards) {
    if (whole.length > 1) problems.push(`${key}: two whole claims (${whole.join(', ')})`);
    if (whole.length > 0 && shared.length > 0)
      problems.push(`${key}: whole (${whole.join(', ')}) and shared (${shared.map((s) => s.claim).join(', ')})`);
    const limits = capacity.get(`${key}-shared`) ?? {};
    for (const [name, { value }] of Object.entries(limits)) {
      const used = shared.reduce((sum, s) => sum + (parseQuantity(s.consumed[name] ?? '0') ?? 0), 0);
      const limit = parseQuantity(value) ?? Infinity;
      if (used > limit + 1e-9) problems.push(`${key}: shares consume ${used} ${name}, the card has ${limit}`);
    }
  }
  return problems;
}

/**
 * No card over its counters: never two whole claims on one card, never a whole and a shared one,
 * and the shares' consumed capacity within the shared device's capacity, per quantity.
 */
export const cardsNotOverCommitted: Invariant = async (client) =>
  overCommitted(
    (await client.list(RESOURCE, 'ResourceClaim')) as Claim[],
    (await client.list(RESOURCE, 'ResourceSlice')) as Slice[],
  );

/**
 * No Pod runs on an over-committed card (issue 46): the claims reserved for Running Pods hold no
 * card beyond its counters. A scheduler that counted an allocation twice may leave claims so
 * (`cardsNotOverCommitted` then fails, upstream's fault); the kubelet plugin must keep the excess
 * from running.
 */
export const noPodRunsOverCommitted: Invariant = async (client) => {
  const running = new Set(
    ((await client.list('v1', 'Pod')) as Pod[])
      .filter((p) => p.status?.phase === 'Running')
      .map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
  );
  const claims = ((await client.list(RESOURCE, 'ResourceClaim')) as Claim[]).filter((c) =>
    (c.status?.reservedFor ?? []).some(
      (r) => r.resource === 'pods' && running.has(`${c.metadata.namespace}/${r.name}`),
    ),
  );
  return overCommitted(claims, (await client.list(RESOURCE, 'ResourceSlice')) as Slice[]).map(
    (p) => `Running Pods' claims: ${p}`,
  );
};

/** Every bound Pod that names claims has each of them allocated, and reserved for it. */
export const boundPodsAllocated: Invariant = async (client) => {
  const claims = new Map(
    ((await client.list(RESOURCE, 'ResourceClaim')) as Claim[]).map((c) => [
      `${c.metadata.namespace}/${c.metadata.name}`,
      c,
    ]),
  );
  const problems: string[] = [];
  for (const pod of (await client.list('v1', 'Pod')) as Pod[]) {
    if (!pod.spec.nodeName || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
    for (const status of pod.status?.resourceClaimStatuses ?? []) {
      if (!status.resourceClaimName) continue;
      const claim = claims.get(`${pod.metadata.namespace}/${status.resourceClaimName}`);
      const id = `pod ${pod.metadata.namespace}/${pod.metadata.name} claim ${status.resourceClaimName}`;
      if (!claim) problems.push(`${id}: missing`);
      else if (!claim.status?.allocation) problems.push(`${id}: not allocated`);
      else if (!(claim.status.reservedFor ?? []).some((r) => r.resource === 'pods' && r.name === pod.metadata.name))
        problems.push(`${id}: not reserved for the Pod`);
    }
  }
  return problems;
};

/**
 * Our ResourceSlices: each pool at one generation with as many slices as it says, every device in
 * one slice only, every slice on a Node that exists (none orphaned, none duplicated).
 */
export const slicesConsistent: Invariant = async (client) => {
  const nodes = new Set((await client.list('v1', 'Node')).map((n) => n.metadata.name));
  const pools = new Map<string, Slice[]>();
  for (const slice of (await client.list(RESOURCE, 'ResourceSlice')) as Slice[]) {
    if (!OUR_DRIVER.test(slice.spec.driver)) continue;
    const key = `${slice.spec.driver}/${slice.spec.pool.name}`;
    pools.set(key, [...(pools.get(key) ?? []), slice]);
  }
  const problems: string[] = [];
  for (const [key, slices] of pools) {
    const generations = new Set(slices.map((s) => s.spec.pool.generation));
    if (generations.size > 1) problems.push(`${key}: slices of generations ${[...generations].join(', ')}`);
    const counts = new Set(slices.map((s) => s.spec.pool.resourceSliceCount));
    if (counts.size > 1 || !counts.has(slices.length))
      problems.push(`${key}: ${slices.length} slices, resourceSliceCount ${[...counts].join(', ')}`);
    const seen = new Map<string, string>();
    for (const slice of slices) {
      if (slice.spec.nodeName && !nodes.has(slice.spec.nodeName))
        problems.push(`${key}: slice ${slice.metadata.name} on missing node ${slice.spec.nodeName}`);
      for (const device of slice.spec.devices ?? []) {
        const other = seen.get(device.name);
        if (other) problems.push(`${key}: device ${device.name} in ${other} and ${slice.metadata.name}`);
        seen.set(device.name, slice.metadata.name);
      }
    }
  }
  return problems;
};

/** No Workload evicted: nothing in these scenarios asks for an eviction. */
export const noEvictions: Invariant = async (client) => {
  const workloads = await client.list(KUEUE, 'Workload');
  return workloads.flatMap((w) => {
    const conditions = ((w as { status?: { conditions?: { type: string; status: string; reason?: string }[] } }).status
      ?.conditions ?? []) as { type: string; status: string; reason?: string }[];
    const evicted = conditions.find((c) => c.type === 'Evicted' && c.status === 'True');
    return evicted ? [`workload ${w.metadata.namespace}/${w.metadata.name} evicted (${evicted.reason ?? '?'})`] : [];
  });
};

export const INVARIANTS = {
  'chain = render': chainEqualsRender,
  'no card over its counters': cardsNotOverCommitted,
  'no Pod runs over its card': noPodRunsOverCommitted,
  'bound Pods allocated': boundPodsAllocated,
  'slices consistent': slicesConsistent,
  'nothing evicted': noEvictions,
} as const satisfies Record<string, Invariant>;

export type InvariantName = keyof typeof INVARIANTS;

/** Runs `names` (default all); the summary names each with ✓ or its problem count. */
export async function checkInvariants(
  client: KubeClient,
  names: readonly InvariantName[] = Object.keys(INVARIANTS) as InvariantName[],
): Promise<{ summary: string; problems: string[] }> {
  const problems: string[] = [];
  const parts: string[] = [];
  for (const name of names) {
    const found = await INVARIANTS[name](client);
    problems.push(...found.map((p) => `${name}: ${p}`));
    parts.push(found.length === 0 ? `${name} ✓` : `${name} ✗${found.length}`);
  }
  return { summary: parts.join(', '), problems };
}

/** Objects of the chain by id → uid: what a restart must not delete and recreate. */
export async function chainUids(client: KubeClient): Promise<Map<string, string>> {
  const live = await readLiveChain(client);
  return new Map([...live.objects].map(([id, object]) => [id, object.metadata.uid ?? '']));
}

/** Ids whose uid changed between two snapshots (present in both): deleted and recreated. */
export function recreated(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  return [...before].filter(([id, uid]) => after.has(id) && after.get(id) !== uid).map(([id]) => id);
}
