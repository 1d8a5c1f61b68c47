/**
 * @module What `cards cordon` / `cards uncordon` decide before they write: which cards a target
 * names, which running pods hold them, and the one line each fault is told in. Pure: the command
 * (cordon.ts) reads the cluster and writes the rules.
 */
import { buildDeviceLedger, type CardUse, type PublishedCard, type ReceivedResourceSlice } from '../dra/index.js';
import { isDnsSubdomain } from '../k8s/index.js';
import { UsageError } from './errors.js';

/** `NODE` (every card of it) or `NODE/CARD`; CARD is `3`, `card-3`, or `nvidia:card-3` where two manufacturers share an index. */
export interface CordonTarget {
  readonly node: string;
  readonly card?: { readonly name: string; readonly manufacturer?: string };
}

/**
 * @example parseTarget('gpu-a/3') // { node: 'gpu-a', card: { name: 'card-3' } }
 * @example parseTarget('gpu-a/amd:card-0') // { node: 'gpu-a', card: { name: 'card-0', manufacturer: 'amd' } }
 */
export function parseTarget(text: string | undefined): CordonTarget {
  if (text === undefined || text === '')
    throw new UsageError('name a node or a card: NODE or NODE/CARD (e.g. gpu-a/3)');
  const slash = text.indexOf('/');
  const node = slash < 0 ? text : text.slice(0, slash);
  if (!isDnsSubdomain(node)) throw new UsageError(`"${node}" is not a node name`);
  if (slash < 0) return { node };
  const match = /^(?:([a-z0-9]+):)?(?:card-)?(\d+)$/.exec(text.slice(slash + 1));
  if (match === null)
    throw new UsageError(`"${text.slice(slash + 1)}" is not a card: give its index (3), card-3, or nvidia:card-3`);
  return {
    node,
    card: { name: `card-${Number(match[2])}`, ...(match[1] === undefined ? {} : { manufacturer: match[1] }) },
  };
}

/** `gpu-a/card-3`, with the manufacturer where the node has cards of two. */
export function cardLabel(card: Pick<PublishedCard, 'node' | 'name' | 'driver'>, withDriver = false): string {
  return withDriver ? `${card.node}/${card.driver.split('.')[0] ?? ''}:${card.name}` : `${card.node}/${card.name}`;
}

/**
 * The cards the target names among the node's published cards; a target that names none (or two
 * manufacturers' cards at one index) is an error of one line naming it.
 */
export function resolveCards(target: CordonTarget, cards: readonly PublishedCard[]): PublishedCard[] {
  if (cards.length === 0)
    throw new Error(
      `node "${target.node}" publishes no cards of ours (no ResourceSlice of a gpustack.ai driver names it)`,
    );
  if (target.card === undefined) return [...cards];
  const { name, manufacturer } = target.card;
  const named = cards.filter(
    (c) => c.name === name && (manufacturer === undefined || c.driver.split('.')[0] === manufacturer),
  );
  if (named.length === 1) return named;
  if (named.length > 1)
    throw new Error(
      `node "${target.node}" has ${name} of ${named.map((c) => c.driver).join(' and ')}: name one, e.g. ${target.node}/${named[0]?.driver.split('.')[0] ?? ''}:${name}`,
    );
  const have = [...new Set(cards.map((c) => c.name))];
  throw new Error(
    `node "${target.node}" has no card "${manufacturer === undefined ? '' : `${manufacturer}:`}${name}" (it has ${have.join(', ')})`,
  );
}

/** The cards of `node` as its current slices publish them. */
export function cardsOfNode(node: string, slices: readonly ReceivedResourceSlice[]): readonly PublishedCard[] {
  return buildDeviceLedger(slices, []).cards(node);
}

/** A claim that holds a card, and the pods it is reserved for (`namespace/name`). */
export interface Holder {
  readonly claim: string;
  readonly pods: readonly string[];
}

/**
 * The claims holding a card (the ledger's `use(card).claims`: one computation of who holds what),
 * sorted, each with its pods as `namespace/name`.
 */
export function holdersOf(use: CardUse): Holder[] {
  return use.claims
    .map((c) => ({ claim: `${c.namespace}/${c.name}`, pods: c.pods.map((pod) => `${c.namespace}/${pod}`).sort() }))
    .sort((a, b) => (a.claim < b.claim ? -1 : a.claim > b.claim ? 1 : 0));
}

/** `team-a/train-0 (claim team-a/train-0-gpus)`, or the claim alone when no pod is reserved. */
export function describeHolder(holder: Holder): string {
  return holder.pods.length === 0
    ? `claim ${holder.claim} (no pod reserved)`
    : `${holder.pods.join(', ')} (claim ${holder.claim})`;
}

/** The one line for a 403: which verb on which resource the credentials lack. */
export function forbiddenLine(verb: string, resource: string, groupVersion: string): string {
  return (
    `forbidden: your credentials may not ${verb} ${resource} (${groupVersion}); ` +
    'cards cordon/uncordon need get, list, create and delete on devicetaintrules, and list on resourceslices and resourceclaims'
  );
}
