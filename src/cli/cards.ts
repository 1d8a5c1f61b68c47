/**
 * @module `gpustack-operator cards` (also `kubectl gpustack cards`): every card of the cluster from
 * a kubeconfig — who holds it, what is promised of it, its taints (docs/operations.md#cards). One
 * list per kind (ResourceSlices, ResourceClaims, managed Nodes, InstanceTypes, DeviceTaintRules),
 * never one call per node, each read with src/dra's and src/k8s's schemas (not the checker's
 * watch list); the rows are the ledger's (src/dra/card-view.ts). Loaded only when it runs.
 */
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import {
  createKubeApi,
  listParsed,
  loadKubeConfig,
  servedVersion,
  withQuery,
  type KubeApi,
} from '../api-client/index.js';
import {
  DEVICE_TAINT_RULES_RESOURCE,
  DEVICE_TAINT_RULE_VERSIONS,
  ReceivedDeviceTaintRuleSchema,
  ReceivedInstanceTypeSchema,
  ReceivedResourceClaimSchema,
  ReceivedResourceSliceSchema,
  buildCardRows,
  buildDeviceLedger,
  cardPoolsOf,
  filterCardRows,
  poolResolver,
  RESOURCE_API,
  resourcePath,
  type CardRow,
  type ReceivedDeviceTaintRule,
} from '../dra/index.js';
import { GPUSTACK_API_VERSION, NodeSchema } from '../k8s/index.js';
import { MANAGED_LABEL } from '../nodefeature/index.js';
import { UsageError } from './errors.js';
import { parseNamespace, parseObjectName } from './flags.js';
import { requireKubeClient } from './kube-client.js';

const OUTPUTS = ['table', 'wide', 'json', 'yaml'] as const;
type Output = (typeof OUTPUTS)[number];

/** What the cluster gave, read once. */
export interface CardsInput {
  readonly rows: CardRow[];
  readonly nodes: ReadonlySet<string>;
  readonly pools: ReadonlySet<string>;
  /** The served version of DeviceTaintRule (`v1`, `v1beta2`), or `undefined`: no cordon information. */
  readonly taintRuleVersion: string | undefined;
}

/** The group/version that serves DeviceTaintRule (v1 from Kubernetes 1.37; v1beta2 on 1.36 behind its gate), or `undefined`. */
export async function taintRuleVersion(api: KubeApi): Promise<string | undefined> {
  return servedVersion(api, DEVICE_TAINT_RULES_RESOURCE, DEVICE_TAINT_RULE_VERSIONS);
}

function listTaintRules(api: KubeApi, version: string): Promise<ReceivedDeviceTaintRule[]> {
  return listParsed(
    api,
    resourcePath(DEVICE_TAINT_RULES_RESOURCE, { groupVersion: version }),
    ReceivedDeviceTaintRuleSchema,
  );
}

/** Lists every kind once and builds the rows. */
export async function readCards(api: KubeApi): Promise<CardsInput> {
  const version = await taintRuleVersion(api);
  const [slices, claims, nodes, instanceTypes, rules] = await Promise.all([
    listParsed(api, resourcePath('resourceslices'), ReceivedResourceSliceSchema),
    listParsed(api, resourcePath('resourceclaims'), ReceivedResourceClaimSchema),
    // Only managed Nodes belong to a pool; their labels are all the view reads of them.
    listParsed(api, withQuery('/api/v1/nodes', { labelSelector: `${MANAGED_LABEL}=true` }), NodeSchema),
    listParsed(api, `/apis/${GPUSTACK_API_VERSION}/instancetypes`, ReceivedInstanceTypeSchema),
    version === undefined ? Promise.resolve([]) : listTaintRules(api, version),
  ]);
  const ledger = buildDeviceLedger(slices, claims, undefined, rules);
  const pools = cardPoolsOf(instanceTypes);
  const rows = buildCardRows(ledger, { poolOf: poolResolver(pools, nodes) });
  return {
    rows,
    nodes: new Set(ledger.nodeNames()),
    pools: new Set(pools.map((p) => p.name)),
    taintRuleVersion: version,
  };
}

const GI = 1024 ** 3;
const MI = 1024 ** 2;

/** `79.6Gi`, `20Gi`, `512Mi`: binary units, at most one decimal. */
export function formatBytes(bytes: number): string {
  const [unit, size] = bytes >= GI ? ['Gi', GI] : bytes >= MI ? ['Mi', MI] : ['', 1];
  return `${Number((bytes / size).toFixed(1))}${unit}`;
}

/** `1600k`, `320k`, `1234`. */
export function formatUnits(units: number): string {
  return units >= 1000 && units % 1000 === 0 ? `${units / 1000}k` : String(units);
}

function promised(row: CardRow): string {
  if (row.state === 'free') return '-';
  const percent = row.memoryBytes ? ` (${Math.round((row.promised.memoryBytes / row.memoryBytes) * 100)}%)` : '';
  return `${formatBytes(row.promised.memoryBytes)}${percent}`;
}

/** Its taints' keys, after `over-committed` when its claims hold more than it has; `ok` for neither. */
function health(row: CardRow): string {
  const problems = [...(row.overcommitted !== null ? ['over-committed'] : []), ...row.taints.map((t) => t.key)];
  return problems.length === 0 ? 'ok' : [...new Set(problems)].join(',');
}

/** The table `cards` prints (`-o wide`: pool, units, claims and every taint too). */
export function formatCardTable(rows: readonly CardRow[], wide: boolean): string {
  const header = ['NODE', 'CARD', 'MODEL', 'MEMORY', 'STATE', 'PROMISED', 'HOLDERS', 'CORDONED', 'HEALTH'];
  if (wide) header.push('POOL', 'UNITS', 'UNITS-PROMISED', 'CLAIMS', 'TAINTS');
  const lines = rows.map((row) => {
    const cells = [
      row.node,
      row.index === null ? row.card : String(row.index),
      row.model ?? '-',
      row.memoryBytes === null ? '-' : formatBytes(row.memoryBytes),
      row.state === 'shared' ? `shared (${row.claims.length})` : row.state,
      promised(row),
      row.holders.length === 0 ? '-' : row.holders.join(','),
      row.cordoned ? 'yes' : 'no',
      health(row),
    ];
    if (wide)
      cells.push(
        row.pool ?? '-',
        row.units === null ? '-' : formatUnits(row.units),
        row.state === 'free' ? '-' : formatUnits(row.promised.units),
        row.claims.length === 0 ? '-' : row.claims.map((c) => `${c.namespace}/${c.name}`).join(','),
        row.taints.length === 0
          ? '-'
          : row.taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(','),
      );
    return cells;
  });
  const table = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...table.map((cells) => (cells[i] ?? '').length)));
  return (
    table
      .map((cells) =>
        cells
          .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
          .join('   ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** The printed document of `-o json|yaml`: the rows under `cards`. */
export function formatCards(rows: readonly CardRow[], output: Output): string {
  if (output === 'json') return `${JSON.stringify({ cards: rows }, null, 2)}\n`;
  if (output === 'yaml') return stringify({ cards: rows }, { lineWidth: 0 });
  if (rows.length === 0) return 'No cards.\n';
  return formatCardTable(rows, output === 'wide');
}

function parseOutput(text: string): Output {
  if (text === '') return 'table';
  if ((OUTPUTS as readonly string[]).includes(text) && text !== 'table') return text as Output;
  throw new UsageError(`-o: "${text}" must be wide, json or yaml`);
}

export async function cardsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      kubeconfig: { type: 'string' },
      node: { type: 'string' },
      pool: { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      output: { type: 'string', short: 'o', default: '' },
    },
  });
  const [sub] = positionals;
  if (sub !== undefined) throw new UsageError(`cards: unknown subcommand "${sub}"`);
  const output = parseOutput(values.output);
  const filter = {
    node: values.node === undefined ? undefined : parseObjectName(values.node, '--node'),
    pool: values.pool === undefined ? undefined : parseObjectName(values.pool, '--pool'),
    namespace: values.namespace === undefined ? undefined : parseNamespace(values.namespace, '--namespace'),
  };
  requireKubeClient('cards');
  const api = createKubeApi(await loadKubeConfig(values.kubeconfig));
  const input = await readCards(api);
  if (input.taintRuleVersion === undefined)
    process.stderr.write(
      `warning: this cluster serves no DeviceTaintRule (${RESOURCE_API} or v1beta2): CORDONED shows only what the slices say\n`,
    );
  if (filter.node !== undefined && !input.nodes.has(filter.node))
    throw new Error(`node "${filter.node}" publishes no cards of ours (no ResourceSlice of our drivers names it)`);
  if (filter.pool !== undefined && !input.pools.has(filter.pool))
    throw new Error(`pool "${filter.pool}": no InstanceType of that name with cards (acceleratable)`);
  process.stdout.write(formatCards(filterCardRows(input.rows, filter), output));
}
