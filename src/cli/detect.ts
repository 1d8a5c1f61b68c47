/**
 * @module The `detect` subcommand: what the addon finds on this machine, the labels and the
 * ResourceSlices the agent would publish for it, and who owns each manufacturer's cards. Loaded
 * only when it runs.
 */
import { parseArgs } from 'node:util';
import type { DetectResult } from '../../native/index.js';
import {
  apiOwnerDecider,
  draOwnedCards,
  failedManufacturers,
  labelsFromDetection,
  screenDetection,
  sliceCardsOf,
  type OwnerDecisions,
} from '../agent/index.js';
import { createKubeApi, loadKubeConfig } from '../api-client/index.js';
import { isManufacturer } from '../contracts/index.js';
import { desiredSlices } from '../dra/index.js';
import { canonicalize } from '../k8s/index.js';
import { DETECT_FLAGS } from './agent-flags.js';
import { detectFor } from './detection.js';
import { UsageError } from './errors.js';

function detectText(result: DetectResult, labels: Record<string, string>): string {
  const rows = result.devices.map((d) => [
    d.manufacturer,
    String(d.index),
    d.product,
    `${d.memoryMiB} MiB`,
    String(d.cores),
    d.computeCapability ?? '',
    d.uuid,
  ]);
  const header = ['MANUFACTURER', 'INDEX', 'PRODUCT', 'MEMORY', 'CORES', 'COMCAP', 'UUID'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const errors = result.errors.map((e) => `  ${e.manufacturer}: ${e.code}: ${e.message}`);
  return [
    result.devices.length > 0 ? [line(header), ...rows.map(line)].join('\n') : 'no accelerators found',
    ...(errors.length > 0 ? ['', 'errors:', ...errors] : []),
    '',
    'labels:',
    ...Object.keys(labels)
      .sort()
      .map((k) => `  ${k}=${labels[k]}`),
    '',
  ].join('\n');
}

/**
 * Who owns each detected manufacturer's cards on the node `$NODE_NAME` (docs/architecture.md#device-owner), read
 * as the agent reads it (the Node, the ChainSettings, the holders when a change is due) through
 * the kubeconfig or the in-cluster account; without one, `error` says why.
 */
async function deviceOwnersOf(
  raw: DetectResult,
  kubeconfig: string | undefined,
): Promise<{ owners?: OwnerDecisions; report: unknown }> {
  const node = process.env['NODE_NAME'];
  if (node === undefined || node === '')
    return { report: { error: "NODE_NAME is not set: the owners are the node's" } };
  const manufacturers = [...sliceCardsOf(raw).map((c) => c.manufacturer), ...failedManufacturers(raw)];
  try {
    const source = apiOwnerDecider(createKubeApi(await loadKubeConfig(kubeconfig)), node);
    const owners = await source.decide(manufacturers.filter(isManufacturer));
    return { owners, report: Object.fromEntries(owners) };
  } catch (error) {
    return { report: { error: `the node's owners could not be read: ${(error as Error).message}` } };
  }
}

/**
 * What the agent would publish as ResourceSlices, for the node `$NODE_NAME`, without an owner
 * reference (that needs the Node's uid from the API server, which `detect` does not ask) and with
 * pool generation 0; cards the device plugin owns are left out when the owners could be read.
 * Without `$NODE_NAME` the slices cannot be named: `resourceSlices` then says so instead of
 * inventing a node.
 */
function resourceSlicesOf(raw: DetectResult, owners: OwnerDecisions | undefined): unknown {
  const node = process.env['NODE_NAME'];
  const detected = { cards: sliceCardsOf(raw), keep: failedManufacturers(raw) };
  const { cards, keep } = owners === undefined ? detected : draOwnedCards(detected.cards, detected.keep, owners);
  if (node === undefined || node === '')
    return { error: 'NODE_NAME is not set: the slices are named after the node (pool = node name)' };
  const desired = desiredSlices({ name: node }, cards);
  return {
    node,
    slices: desired.pools.flatMap((pool) => pool.slices),
    ...(desired.problems.length > 0 ? { problems: desired.problems } : {}),
    ...(keep.size > 0 ? { keptFromFailedDetection: [...keep].sort() } : {}),
  };
}

export async function detectCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      output: { type: 'string', short: 'o', default: 'json' },
      kubeconfig: { type: 'string' },
      ...DETECT_FLAGS,
    },
  });
  if (values.output !== 'json' && values.output !== 'text')
    throw new UsageError(`-o: "${values.output}" must be json or text`);
  // The same screening the agent applies, so the printed errors include dropped cards.
  const raw = await detectFor(values)();
  const result = screenDetection(raw);
  const labels = labelsFromDetection(result, undefined);
  if (values.output !== 'json') {
    process.stdout.write(detectText(result, labels));
    return;
  }
  const owners = await deviceOwnersOf(raw, values.kubeconfig);
  const resourceSlices = resourceSlicesOf(raw, owners.owners);
  const out = { ...result, labels, deviceOwners: owners.report, resourceSlices };
  process.stdout.write(`${JSON.stringify(canonicalize(out), null, 2)}\n`);
}
