/** @module The `render` subcommand: the whole chain offline for a node dump (no cluster). */
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { canonicalize, rfc3339Seconds } from '../k8s/index.js';
import { renderChain } from '../render/index.js';
import { UsageError } from './errors.js';
import { parseNamespace } from './flags.js';
import { InputError, parseChain, parseNodes, readInput } from './render-input.js';

/** `render`: the whole chain offline for a node dump. */
export function renderCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      nodes: { type: 'string' },
      chain: { type: 'string' },
      namespaces: { type: 'string', default: 'default' },
      output: { type: 'string', short: 'o', default: 'yaml' },
      'objects-only': { type: 'boolean', default: false },
    },
  });
  if (!values.nodes) throw new UsageError('render: --nodes FILE is required (- reads stdin)');
  if (values.output !== 'yaml' && values.output !== 'json')
    throw new UsageError(`-o: "${values.output}" must be yaml or json`);
  if (values.nodes === '-' && values.chain === '-')
    throw new UsageError('render: --nodes and --chain cannot both read stdin');
  const namespaces = values.namespaces
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)
    .map((n) => parseNamespace(n, '--namespaces'));
  const nodes = parseNodes(readInput(values.nodes, '--nodes'), values.nodes === '-' ? 'stdin' : values.nodes);
  const chain =
    values.chain === undefined
      ? undefined
      : parseChain(readInput(values.chain, '--chain'), values.chain === '-' ? 'stdin' : values.chain);
  const now = rfc3339Seconds(new Date());
  const result = renderChain({ nodes, namespaces, chain }, { now });
  if (!result.ok) throw new InputError(`${result.error.code}: ${result.error.message}`);
  for (const skip of result.skipped)
    process.stderr.write(`warning: node ${skip.name} left out of a pool: ${skip.reason}: ${skip.message}\n`);
  for (const label of result.unreadable ?? [])
    process.stderr.write(`warning: node ${label.name} has a label we cannot read: ${label.reason}: ${label.message}\n`);
  process.stdout.write(
    values['objects-only']
      ? formatObjects(
          result.objects.map((object) => canonicalize(object)),
          values.output,
        )
      : formatDocument(
          canonicalize({ nodes: result.nodes, objects: result.objects }, { keepNull: true }),
          values.output,
        ),
  );
}

function formatDocument(document: unknown, output: 'yaml' | 'json'): string {
  return output === 'json' ? `${JSON.stringify(document, null, 2)}\n` : stringify(document, { lineWidth: 0 });
}

/** The objects alone, as `kubectl apply -f -` takes them: a YAML stream, or a JSON `List`. */
function formatObjects(objects: readonly unknown[], output: 'yaml' | 'json'): string {
  if (output === 'json') return formatDocument({ apiVersion: 'v1', kind: 'List', items: objects }, 'json');
  return objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join('');
}
