/**
 * @module `gpustack-operator kueue-config`: the Kueue manager configuration with ours merged in,
 * for the Kueue version given. `--merge` takes the configuration a cluster runs — a Configuration
 * document, or the `kueue-manager-config` ConfigMap that holds it — so that
 * `kubectl get configmap kueue-manager-config -n kueue-system -o yaml | gpustack-operator kueue-config --merge - | kubectl apply -f -`
 * needs no hand merge.
 */
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { UsageError } from './errors.js';
import {
  DEFAULT_KUEUE_MINOR,
  OLDEST_KUEUE_MINOR,
  kueueMinor,
  mergeKueueConfig,
  planDeviceClassMappings,
  type KueueTarget,
} from '../kueue/index.js';
import { renderChain } from '../render/index.js';
import { InputError, parseDocument, parseNodes, readInput } from './render-input.js';

/** The key of Kueue's ConfigMap that holds the manager configuration (Kueue's own manifests). */
export const KUEUE_CONFIG_KEY = 'controller_manager_config.yaml';

type ConfigMapLike = { kind: 'ConfigMap'; data?: Record<string, unknown> } & Record<string, unknown>;
const isConfigMap = (value: unknown): value is ConfigMapLike =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'ConfigMap';

/**
 * The device models (aKeys) of a node dump, as the chain pools them: their `gpustack-<aKey>` classes
 * are mapped beside the manufacturers' (Kueue lists classes by name, and names follow the models).
 */
export function productKeysOf(nodesText: string, source: string): string[] {
  const result = renderChain({ nodes: parseNodes(nodesText, source), namespaces: [] }, { now: '1970-01-01T00:00:00Z' });
  if (!result.ok) throw new InputError(`${source}: ${result.error.code}: ${result.error.message}`);
  const keys = result.objects.flatMap((object) => {
    const spec = object['spec'] as { acceleratable?: unknown; acceleratorGroup?: unknown } | undefined;
    return object.kind === 'InstanceType' && spec?.acceleratable === true && typeof spec.acceleratorGroup === 'string'
      ? [spec.acceleratorGroup]
      : [];
  });
  return [...new Set(keys)].sort();
}

/** Merges ours into `document` (a Configuration or the ConfigMap holding one); notes go to stderr. */
export function mergeDocument(document: unknown, target: KueueTarget | number, source: string): unknown {
  const { minor, productKeys = [] } = typeof target === 'number' ? { minor: target } : target;
  const embedded = isConfigMap(document) ? document.data?.[KUEUE_CONFIG_KEY] : undefined;
  if (isConfigMap(document) && typeof embedded !== 'string')
    throw new InputError(`${source}: ConfigMap has no data.${KUEUE_CONFIG_KEY}`);
  const existing =
    typeof embedded === 'string' ? parseDocument(embedded, `${source} data.${KUEUE_CONFIG_KEY}`) : document;
  const merged = mergeKueueConfig(existing, { minor, productKeys });
  if (!merged.ok) throw new InputError(`${source}: ${merged.message}`);
  for (const note of merged.notes) process.stderr.write(`note: ${note}\n`);
  for (const left of planDeviceClassMappings({ minor, productKeys }).leftOut)
    process.stderr.write(`warning: DeviceClass ${left} is not mapped (a Kueue mapping lists at most 8 classes)\n`);
  if (!isConfigMap(document)) return merged.config;
  return { ...document, data: { ...document.data, [KUEUE_CONFIG_KEY]: stringify(merged.config, { lineWidth: 0 }) } };
}

export function kueueConfigCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      'kueue-version': { type: 'string', default: `0.${DEFAULT_KUEUE_MINOR}` },
      merge: { type: 'string' },
      nodes: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'yaml' },
    },
  });
  const minor = kueueMinor(values['kueue-version']);
  if (minor === undefined)
    throw new UsageError(
      `--kueue-version: "${values['kueue-version']}" is not a Kueue version ` +
        `we support (0.${OLDEST_KUEUE_MINOR} or newer, e.g. 0.19 or v0.19.2)`,
    );
  if (values.output !== 'yaml' && values.output !== 'json')
    throw new UsageError(`-o: "${values.output}" must be yaml or json`);
  if (values.merge === '-' && values.nodes === '-')
    throw new UsageError('kueue-config: --merge and --nodes cannot both read stdin');
  const source = values.merge === '-' ? 'stdin' : (values.merge ?? 'an empty configuration');
  const document = values.merge === undefined ? {} : parseDocument(readInput(values.merge, '--merge'), source);
  const productKeys =
    values.nodes === undefined
      ? []
      : productKeysOf(readInput(values.nodes, '--nodes'), values.nodes === '-' ? 'stdin' : values.nodes);
  const output = mergeDocument(document ?? {}, { minor, productKeys }, source);
  process.stdout.write(
    values.output === 'json' ? `${JSON.stringify(output, null, 2)}\n` : stringify(output, { lineWidth: 0 }),
  );
}
