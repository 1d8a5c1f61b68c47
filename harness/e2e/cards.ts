// Every card of one driver's slices and what the live claims hold of it, computed from the objects
// alone (not through src/dra): what the cards and dashboard scenarios compare the CLI, the checker's
// metrics and Prometheus' answers with.
import { parseQuantity } from '../../src/k8s/index.js';
import { attributeOf, type SliceDevice } from './agent.js';
import type { KubeClient, KubeObject } from './apply.js';
import { RESOURCE_API, type ResourceClaim } from './scheduling.js';

export interface ExpectedCard {
  node: string;
  card: string;
  model: string;
  pool: string | null;
  memoryBytes: number;
  units: number;
  state: 'free' | 'whole' | 'shared';
  claims: string[];
  holders: string[];
  promisedMemory: number;
  promisedUnits: number;
}

/** What one Pod holds through the claims reserved for it: `namespace/pod` → memory promised. */
export type HolderMemory = Map<string, number>;

type Slice = KubeObject & {
  spec: {
    driver: string;
    nodeName?: string;
    devices?: (SliceDevice & { capacity?: Record<string, { value: string }> })[];
  };
};

export function quantity(text: string | number | undefined): number {
  const value = typeof text === 'number' ? text : text === undefined ? undefined : parseQuantity(text);
  if (value === undefined) throw new Error(`not a quantity: ${String(text)}`);
  return value;
}

/** The cards of `driver`'s slices, sorted by node and card, and the memory each holder was promised. */
export async function liveCards(
  client: KubeClient,
  driver: string,
): Promise<{ cards: ExpectedCard[]; holders: HolderMemory }> {
  const slices = (await client.list<Slice>(RESOURCE_API, 'ResourceSlice')).filter((s) => s.spec.driver === driver);
  const claims = await client.list<ResourceClaim>(RESOURCE_API, 'ResourceClaim');
  const types = await client.list<KubeObject & { spec: { acceleratorGroup?: string } }>(
    'worker.gpustack.ai/v1alpha1',
    'InstanceType',
  );
  const cards = new Map<string, ExpectedCard>();
  for (const slice of slices) {
    for (const device of slice.spec.devices ?? []) {
      if (!device.name.endsWith('-shared')) continue;
      const model = attributeOf(device, driver, 'productKey')?.string ?? '';
      const node = slice.spec.nodeName ?? '';
      const card = device.name.replace(/-shared$/, '');
      cards.set(`${node}/${card}`, {
        node,
        card,
        model,
        pool: types.find((t) => t.spec.acceleratorGroup === model)?.metadata.name ?? null,
        memoryBytes: quantity(device.capacity?.['memory']?.value),
        units: quantity(device.capacity?.['units']?.value),
        state: 'free',
        claims: [],
        holders: [],
        promisedMemory: 0,
        promisedUnits: 0,
      });
    }
  }
  const holders: HolderMemory = new Map();
  for (const claim of claims) {
    const id = `${claim.metadata.namespace}/${claim.metadata.name}`;
    for (const result of claim.status?.allocation?.devices?.results ?? []) {
      if (result.driver !== driver) continue;
      const card = cards.get(`${result.pool}/${result.device.replace(/-shared$/, '')}`);
      if (card === undefined) throw new Error(`claim ${id} holds ${result.pool}/${result.device}, in no slice`);
      if (!card.claims.includes(id)) card.claims.push(id);
      let memory: number;
      if (result.device.endsWith('-shared')) {
        card.state = 'shared';
        memory = quantity(result.consumedCapacity?.['memory']);
        card.promisedMemory += memory;
        card.promisedUnits += quantity(result.consumedCapacity?.['units']);
      } else {
        card.state = 'whole';
        memory = card.memoryBytes;
        card.promisedMemory = card.memoryBytes;
        card.promisedUnits = card.units;
      }
      for (const r of claim.status?.reservedFor ?? []) {
        const holder = `${claim.metadata.namespace}/${r.name}`;
        if (!card.holders.includes(holder)) card.holders.push(holder);
        holders.set(holder, (holders.get(holder) ?? 0) + memory);
      }
    }
  }
  return {
    cards: [...cards.values()]
      .map((c) => ({ ...c, claims: c.claims.sort(), holders: c.holders.sort() }))
      .sort((a, b) => `${a.node}/${a.card}`.localeCompare(`${b.node}/${b.card}`, 'en', { numeric: true })),
    holders,
  };
}
