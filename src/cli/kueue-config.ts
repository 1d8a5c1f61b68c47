/**
 * @module `gpustack-operator kueue-config`: the Kueue manager configuration with ours merged in,
 * for the Kueue version given. `--merge` takes the configuration a cluster runs — a Configuration
 * document, the `kueue-manager-config` ConfigMap that holds it, or the values of Kueue's Helm chart
 * (`helm get values kueue --all`) — so that
 * `kubectl get configmap kueue-manager-config -n kueue-system -o yaml | gpustack-operator kueue-config --merge - | kubectl apply -f -`
 * or `helm get values kueue -n kueue-system --all -o yaml | gpustack-operator kueue-config --merge - | helm upgrade … -f -`
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
import { InputError, parseDocument, parseInput, parseNodes, readInput } from './render-input.js';

/** The key of Kueue's ConfigMap that holds the manager configuration (Kueue's own manifests). */
export const KUEUE_CONFIG_KEY = 'controller_manager_config.yaml';
/** The value of Kueue's Helm chart (under `managerConfig`) that becomes that ConfigMap key. */
export const KUEUE_CHART_CONFIG_VALUE = 'controllerManagerConfigYaml';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isConfigMap = (value: unknown): value is Json & { kind: 'ConfigMap' } =>
  isObject(value) && value.kind === 'ConfigMap';
/** Values of Kueue's Helm chart: the manager configuration is the string `managerConfig.controllerManagerConfigYaml`. */
const isHelmValues = (value: unknown): value is Json & { managerConfig: Json } =>
  isObject(value) && value.kind === undefined && isObject(value.managerConfig);

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

/** Where `document` keeps the manager configuration as YAML text: ConfigMap data or Kueue's chart values. */
interface Embedding {
  readonly field: string;
  readonly text: unknown;
  readonly put: (yaml: string) => unknown;
}

function embeddingOf(document: unknown): Embedding | undefined {
  if (isConfigMap(document)) {
    const data = isObject(document.data) ? document.data : {};
    return {
      field: `data.${KUEUE_CONFIG_KEY}`,
      text: data[KUEUE_CONFIG_KEY],
      put: (yaml) => ({ ...document, data: { ...data, [KUEUE_CONFIG_KEY]: yaml } }),
    };
  }
  if (isHelmValues(document)) {
    const managerConfig = document.managerConfig;
    return {
      field: `managerConfig.${KUEUE_CHART_CONFIG_VALUE}`,
      text: managerConfig[KUEUE_CHART_CONFIG_VALUE],
      put: (yaml) => ({ ...document, managerConfig: { ...managerConfig, [KUEUE_CHART_CONFIG_VALUE]: yaml } }),
    };
  }
  return undefined;
}

/**
 * Merges ours into `document` — a Configuration, the ConfigMap holding one, or the values of
 * Kueue's Helm chart — and gives the same shape back; notes go to stderr.
 */
export function mergeDocument(document: unknown, target: KueueTarget | number, source: string): unknown {
  const { minor, productKeys = [] } = typeof target === 'number' ? { minor: target } : target;
  const embedding = embeddingOf(document);
  if (embedding !== undefined && typeof embedding.text !== 'string')
    throw new InputError(`${source}: ${embedding.field} is missing or not a string`);
  const existing =
    embedding === undefined ? document : parseDocument(embedding.text as string, `${source} ${embedding.field}`);
  const merged = mergeKueueConfig(existing, { minor, productKeys });
  if (!merged.ok) throw new InputError(`${source}: ${merged.message}`);
  for (const note of merged.notes) process.stderr.write(`note: ${note}\n`);
  for (const left of planDeviceClassMappings({ minor, productKeys }).leftOut)
    process.stderr.write(`warning: DeviceClass ${left} is not mapped (a Kueue mapping lists at most 8 classes)\n`);
  return embedding === undefined ? merged.config : embedding.put(stringify(merged.config, { lineWidth: 0 }));
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
  const document = values.merge === undefined ? {} : parseInput(readInput(values.merge, '--merge'), source);
  const productKeys =
    values.nodes === undefined
      ? []
      : productKeysOf(readInput(values.nodes, '--nodes'), values.nodes === '-' ? 'stdin' : values.nodes);
  const output = mergeDocument(document, { minor, productKeys }, source);
  process.stdout.write(
    values.output === 'json' ? `${JSON.stringify(output, null, 2)}\n` : stringify(output, { lineWidth: 0 }),
  );
}
