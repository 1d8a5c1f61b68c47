/**
 * @module Reading what `render` is given: a `kubectl get nodes -o json|yaml` List, a plain array
 * of Nodes or a single Node, and optionally a SchedulingChain. Errors name the item and field.
 */
import { parse } from 'yaml';
import type { z } from 'zod';
import { readFileSync } from 'node:fs';
import {
  NodeSchema,
  SCHEDULING_CHAIN_NAME,
  SchedulingChainSchema,
  formatPath,
  type Node,
  type SchedulingChain,
} from '../k8s/index.js';

export class InputError extends Error {
  override readonly name = 'InputError';
}

/** One YAML or JSON document; a syntax error is an InputError naming the source. */
export function parseDocument(text: string, source: string): unknown {
  try {
    return parse(text, { prettyErrors: true });
  } catch (error) {
    throw new InputError(`${source}: not YAML or JSON: ${(error as Error).message}`);
  }
}

/**
 * The one document an input must hold. Empty, blank or comment-only input is an error, not an
 * empty document: `helm get values … | kueue-config --merge -` after a failed helm would otherwise
 * print a bare configuration for the next `helm upgrade -f` to take.
 */
export function parseInput(text: string, source: string): unknown {
  const document = parseDocument(text, source);
  if (document === null || document === undefined)
    throw new InputError(
      `${source}: no YAML or JSON document (the input is empty or only comments` +
        `${source === 'stdin' ? '; did the command before the pipe fail?' : ''})`,
    );
  return document;
}

function describe(error: z.ZodError, prefix: string): string {
  return error.issues
    .slice(0, 5)
    .map(
      (issue) =>
        `${prefix}${formatPath(issue.path) === '(body)' ? '' : `.${formatPath(issue.path)}`}: ${issue.message}`,
    )
    .join('; ');
}

/** The Nodes of a dump: List/NodeList `items`, a plain array, or one Node. */
export function parseNodes(text: string, source: string): Node[] {
  const doc = parseInput(text, source);
  const record = doc as { kind?: unknown; items?: unknown } | null;
  const items = Array.isArray(doc)
    ? doc
    : record && Array.isArray(record.items)
      ? record.items
      : record && record.kind === 'Node'
        ? [doc]
        : undefined;
  if (items === undefined)
    throw new InputError(
      `${source}: expected a List of Nodes (kubectl get nodes -o yaml), an array of Nodes or one Node`,
    );
  return items.map((item, index) => {
    // `kubectl get nodes,pods -o yaml` lists other kinds too; a Pod must not render as a Node.
    const kind = (item as { kind?: unknown } | null)?.kind;
    if (kind !== undefined && kind !== 'Node')
      throw new InputError(`${source}: items[${index}].kind: expected Node, got ${JSON.stringify(kind)}`);
    const parsed = NodeSchema.safeParse(item);
    if (!parsed.success) throw new InputError(`${source}: ${describe(parsed.error, `items[${index}]`)}`);
    return parsed.data;
  });
}

/** A SchedulingChain object (its spec is checked later, by the same rules as the hook). */
export function parseChain(text: string, source: string): SchedulingChain {
  const parsed = SchedulingChainSchema.safeParse(parseInput(text, source));
  if (!parsed.success) throw new InputError(`${source}: ${describe(parsed.error, 'SchedulingChain')}`);
  // The hooks read only the SchedulingChain named `default`; rendering another would show a chain
  // the cluster never builds.
  if (parsed.data.metadata.name !== SCHEDULING_CHAIN_NAME)
    throw new InputError(
      `${source}: SchedulingChain "${parsed.data.metadata.name}" is not read by ` +
        `the chain: only the one named "${SCHEDULING_CHAIN_NAME}" holds the settings`,
    );
  return parsed.data;
}

/**
 * The text of an input file, `-` for stdin; a missing file, a folder or an unreadable file is an
 * InputError naming the path (Node's own messages leave it out or bury it).
 */
export function readInput(file: string, flag: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory, not a file'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new InputError(`${flag} ${file === '-' ? '- (stdin)' : file}: ${why}`);
  }
}
