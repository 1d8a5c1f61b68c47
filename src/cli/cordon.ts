/**
 * @module `gpustack-operator cards cordon|uncordon` (docs/operations.md#cordon-a-card): takes one
 * card (or every card of a node) out of service through DRA device taints. A cordon creates one
 * DeviceTaintRule per device of the card (src/dra/cordon.ts), at the version the cluster serves;
 * `NoSchedule` keeps new claims off and lets running pods run, `--drain` (`NoExecute`) evicts
 * them too, only with `--yes` after the list of pods it evicts. Uncordon deletes the rules by
 * their labels. Every fault is one line and exit 1. Loaded only when run: it needs the
 * Kubernetes client.
 */
import { parseArgs } from 'node:util';
import {
  DEVICE_TAINT_RULES_NOT_SERVED,
  DEVICE_TAINT_RULES_RESOURCE,
  DEVICE_TAINT_RULE_VERSIONS,
  ReceivedDeviceTaintRuleSchema,
  ReceivedResourceClaimSchema,
  ReceivedResourceSliceSchema,
  CORDON_CARD_LABEL,
  buildCordonRules,
  buildDeviceLedger,
  resourcePath,
  cordonSelector,
  type CordonEffect,
  type CordonRule,
  type PublishedCard,
  type ReceivedDeviceTaintRule,
  type ReceivedResourceClaim,
  type ReceivedResourceSlice,
} from '../dra/index.js';
import {
  ApiError,
  createKubeApi,
  listParsed,
  loadKubeConfig,
  servedVersion,
  withQuery,
  type KubeApi,
} from '../api-client/index.js';
import { UsageError } from './errors.js';
import { requireKubeClient } from './kube-client.js';
import {
  cardLabel,
  cardsOfNode,
  describeHolder,
  forbiddenLine,
  holdersOf,
  parseTarget,
  resolveCards,
  type CordonTarget,
  type Holder,
} from './cordon-plan.js';

/** Where the command writes its report; the tests pass their own. */
export interface Output {
  write(text: string): void;
}

/** A 403 told as the verb and resource it lacks; anything else passes through. */
async function call<T>(
  what: { verb: string; resource: string; groupVersion: string },
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ApiError && error.status === 403)
      throw new Error(forbiddenLine(what.verb, what.resource, what.groupVersion), { cause: error });
    throw error;
  }
}

/** The cluster's view the command needs: the version serving DeviceTaintRule, the node's cards, and the claims. */
interface Cluster {
  readonly api: KubeApi;
  readonly version: string;
}

async function connect(kubeconfig: string | undefined, command: string): Promise<Cluster> {
  requireKubeClient(command);
  const api = createKubeApi(await loadKubeConfig(kubeconfig));
  const version = await servedVersion(api, DEVICE_TAINT_RULES_RESOURCE, DEVICE_TAINT_RULE_VERSIONS);
  if (version === undefined) throw new Error(DEVICE_TAINT_RULES_NOT_SERVED);
  return { api, version };
}

async function nodeExists(api: KubeApi, node: string): Promise<boolean> {
  const found = await call({ verb: 'get', resource: 'nodes', groupVersion: 'v1' }, () =>
    api.get(`/api/v1/nodes/${encodeURIComponent(node)}`),
  );
  return found !== undefined;
}

async function nodeSlices(api: KubeApi, node: string): Promise<ReceivedResourceSlice[]> {
  const path = withQuery(resourcePath('resourceslices'), { fieldSelector: `spec.nodeName=${node}` });
  return call({ verb: 'list', resource: 'resourceslices', groupVersion: 'resource.k8s.io/v1' }, () =>
    listParsed(api, path, ReceivedResourceSliceSchema),
  );
}

async function allClaims(api: KubeApi): Promise<ReceivedResourceClaim[]> {
  return call({ verb: 'list', resource: 'resourceclaims', groupVersion: 'resource.k8s.io/v1' }, () =>
    listParsed(api, resourcePath('resourceclaims'), ReceivedResourceClaimSchema),
  );
}

/** The node's slices and the cards of them the target names; unknown node or card: one line. */
async function targetSlices(api: KubeApi, target: CordonTarget): Promise<ReceivedResourceSlice[]> {
  if (!(await nodeExists(api, target.node))) throw new Error(`node "${target.node}" not found`);
  const slices = await nodeSlices(api, target.node);
  resolveCards(target, cardsOfNode(target.node, slices));
  return slices;
}

async function targetCards(api: KubeApi, target: CordonTarget): Promise<PublishedCard[]> {
  return resolveCards(target, cardsOfNode(target.node, await targetSlices(api, target)));
}

function rulesPath(version: string, name?: string): string {
  return resourcePath(DEVICE_TAINT_RULES_RESOURCE, { groupVersion: version, name });
}

function sameRule(live: ReceivedDeviceTaintRule, wanted: CordonRule): boolean {
  const { taint } = live.spec;
  return (
    taint.effect === wanted.spec.taint.effect &&
    (taint.value ?? '') === (wanted.spec.taint.value ?? '') &&
    JSON.stringify(live.metadata.annotations ?? {}) === JSON.stringify(wanted.metadata.annotations)
  );
}

/**
 * Creates one rule; one already there with the same taint stays, one with another effect or
 * reason is replaced (delete and create: the verbs the README asks for, no update).
 */
async function putRule(cluster: Cluster, rule: CordonRule): Promise<'created' | 'unchanged' | 'replaced'> {
  const { api, version } = cluster;
  const what = (verb: string) => ({ verb, resource: DEVICE_TAINT_RULES_RESOURCE, groupVersion: version });
  try {
    await call(what('create'), () => api.create(rulesPath(version), rule));
    return 'created';
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
  }
  const live = ReceivedDeviceTaintRuleSchema.safeParse(
    await call(what('get'), () => api.get(rulesPath(version, rule.metadata.name))),
  );
  if (live.success && sameRule(live.data, rule)) return 'unchanged';
  await call(what('delete'), () => api.remove(rulesPath(version, rule.metadata.name)));
  await call(what('create'), () => api.create(rulesPath(version), rule));
  return 'replaced';
}

interface CordonOptions {
  readonly reason: string;
  readonly drain: boolean;
  readonly yes: boolean;
}

function holdersLines(held: ReadonlyMap<PublishedCard, Holder[]>, twoDrivers: boolean): string[] {
  const lines: string[] = [];
  for (const [card, holders] of held)
    for (const holder of holders) lines.push(`  ${cardLabel(card, twoDrivers)}: ${describeHolder(holder)}`);
  return lines;
}

async function cordon(cluster: Cluster, target: CordonTarget, options: CordonOptions, out: Output): Promise<number> {
  const slices = await targetSlices(cluster.api, target);
  // The ledger of the node's slices and every claim: the target's cards, and who holds each.
  const ledger = buildDeviceLedger(slices, await allClaims(cluster.api));
  const cards = resolveCards(target, ledger.cards(target.node));
  const twoDrivers = new Set(cards.map((c) => c.driver)).size > 1;
  const held = new Map(
    cards.map((card) => [card, holdersOf(ledger.use(card))] as const).filter(([, h]) => h.length > 0),
  );
  const effect: CordonEffect = options.drain ? 'NoExecute' : 'NoSchedule';
  if (options.drain) {
    const lines = holdersLines(held, twoDrivers);
    out.write(
      lines.length === 0
        ? `--drain: no pod holds ${target.card === undefined ? `a card of ${target.node}` : cardLabel(cards[0] as PublishedCard, twoDrivers)}; nothing is evicted\n`
        : `WARNING: --drain taints with NoExecute: the kube-controller-manager evicts (deletes) these pods:\n${lines.join('\n')}\n`,
    );
    if (!options.yes) {
      out.write('nothing done: run again with --drain --yes to cordon and evict, or without --drain to cordon only\n');
      return 1;
    }
  }
  for (const card of cards) {
    const rules = buildCordonRules(card, options.reason, effect, cluster.version);
    const results = [];
    for (const rule of rules) results.push(await putRule(cluster, rule));
    const verb = results.every((r) => r === 'unchanged') ? 'already cordoned' : 'cordoned';
    out.write(
      `${verb} ${cardLabel(card, twoDrivers)} (${effect}): DeviceTaintRules ${rules.map((r) => r.metadata.name).join(', ')}\n`,
    );
  }
  if (!options.drain && held.size > 0)
    out.write(`keeps running (NoSchedule evicts nothing):\n${holdersLines(held, twoDrivers).join('\n')}\n`);
  return 0;
}

async function uncordon(cluster: Cluster, target: CordonTarget, out: Output): Promise<number> {
  const { api, version } = cluster;
  const what = (verb: string) => ({ verb, resource: DEVICE_TAINT_RULES_RESOURCE, groupVersion: version });
  // The rules by label first: a card gone from the slices (a node removed) can still be uncordoned.
  const cards = await targetCards(api, target).catch((error: unknown) => error as Error);
  const selectors =
    cards instanceof Error || target.card === undefined
      ? [cordonSelector(target.node)]
      : cards.map((card) => cordonSelector(target.node, card));
  const rules: ReceivedDeviceTaintRule[] = [];
  for (const labelSelector of selectors)
    rules.push(
      ...(await call(what('list'), () =>
        listParsed(api, withQuery(rulesPath(version), { labelSelector }), ReceivedDeviceTaintRuleSchema),
      )),
    );
  const named =
    target.card === undefined
      ? rules
      : rules.filter((r) => r.metadata.labels?.[CORDON_CARD_LABEL] === target.card?.name);
  if (named.length === 0) {
    if (cards instanceof Error) throw cards;
    out.write(
      `${target.card === undefined ? `no card of ${target.node}` : `${target.node}/${target.card.name}`} is not cordoned\n`,
    );
    return 0;
  }
  for (const rule of named.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
    await call(what('delete'), () => api.remove(rulesPath(version, rule.metadata.name)));
    out.write(`deleted DeviceTaintRule ${rule.metadata.name}\n`);
  }
  return 0;
}

const STDOUT: Output = { write: (text) => void process.stdout.write(text) };

/** `cards cordon …` / `cards uncordon …`: the exit code (1 after a `--drain` not confirmed). */
export async function cordonCommand(
  verb: 'cordon' | 'uncordon',
  args: string[],
  out: Output = STDOUT,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      reason: { type: 'string' },
      drain: { type: 'boolean', default: false },
      yes: { type: 'boolean', short: 'y', default: false },
      kubeconfig: { type: 'string' },
    },
  });
  if (positionals.length > 1) throw new UsageError(`one target at a time, got ${positionals.join(' ')}`);
  const target = parseTarget(positionals[0]);
  if (verb === 'uncordon') {
    if (values.drain || values.reason !== undefined) throw new UsageError('uncordon takes no --reason or --drain');
    return uncordon(await connect(values.kubeconfig, 'cards uncordon'), target, out);
  }
  const reason = values.reason?.trim();
  if (reason === undefined || reason === '')
    throw new UsageError('--reason TEXT is required: it is kept on the rules for whoever uncordons');
  if (values.yes && !values.drain) throw new UsageError('--yes confirms --drain; without --drain nothing is evicted');
  return cordon(
    await connect(values.kubeconfig, 'cards cordon'),
    target,
    { reason, drain: values.drain, yes: values.yes },
    out,
  );
}
