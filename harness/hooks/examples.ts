/**
 * @module The example hook requests of `examples/hooks/`, one per route, and deep variants of them:
 * what the server tests and the hook benches send.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/hooks/', import.meta.url));

/** The hook routes and the example request file of each (`examples/hooks/<controller>.<hook>.json`). */
export const EXAMPLE_ROUTES = [
  { route: '/hooks/node-profile/customize', file: 'node-profile.customize.json', kind: 'customize' },
  { route: '/hooks/node-profile/sync', file: 'node-profile.sync.json', kind: 'decorator' },
  { route: '/hooks/node-shard/customize', file: 'node-shard.customize.json', kind: 'customize' },
  { route: '/hooks/node-shard/sync', file: 'node-shard.sync.json', kind: 'composite' },
  { route: '/hooks/scheduling-chain/customize', file: 'scheduling-chain.customize.json', kind: 'customize' },
  { route: '/hooks/scheduling-chain/sync', file: 'scheduling-chain.sync.json', kind: 'composite' },
  { route: '/hooks/instance-type/customize', file: 'instance-type.customize.json', kind: 'customize' },
  { route: '/hooks/instance-type/sync', file: 'instance-type.sync.json', kind: 'composite' },
  { route: '/hooks/instance-type/finalize', file: 'instance-type.finalize.json', kind: 'composite' },
  { route: '/hooks/node-devices-check/sync', file: 'node-devices-check.sync.json', kind: 'decorator' },
] as const;

export type ExampleFile = (typeof EXAMPLE_ROUTES)[number]['file'];

/** The raw text of an example request, exactly as `curl -d @file` would send it. */
export function exampleText(file: ExampleFile): string {
  return readFileSync(`${EXAMPLES_DIR}${file}`, 'utf8');
}

/** An example request, parsed (a fresh copy each call, so a test may change it). */
export function exampleBody(file: ExampleFile): Record<string, unknown> {
  return JSON.parse(exampleText(file)) as Record<string, unknown>;
}

/** The top-level parts of a hook request, by route kind (a decorator reads v1's `object` and `attachments` too). */
export const REQUEST_PARTS = {
  customize: ['controller', 'parent'],
  composite: ['controller', 'parent', 'children', 'related'],
  decorator: ['controller', 'parent', 'children', 'related', 'object', 'attachments'],
} as const;

export type RequestPart = (typeof REQUEST_PARTS)[keyof typeof REQUEST_PARTS][number];

const DEEP_PLACEHOLDER = 'deep-value-goes-here';

/**
 * An example request as text with `depth` arrays nested in one another at `spec.x` of an object of
 * `part`: the part itself (`controller`, `parent`, `object`), or the first object of its map (a new
 * one when the map is empty). `object` and `attachments` replace `parent` and `children`, as a v1
 * decorator request names them. Also the path of that `x`.
 */
export function deepRequest(file: ExampleFile, part: RequestPart, depth: number): { text: string; path: string[] } {
  const body = exampleBody(file);
  const v2 = { object: 'parent', attachments: 'children' }[part as string];
  if (v2 !== undefined) {
    body[part] = body[v2] ?? {};
    delete body[v2];
  }
  const value = body[part] as Record<string, Record<string, Record<string, unknown>>>;
  let holder: Record<string, unknown> | undefined;
  let path: string[] = [part];
  if (part === 'controller' || part === 'parent' || part === 'object') holder = value as Record<string, unknown>;
  else {
    for (const [kind, objects] of Object.entries(value)) {
      const name = Object.keys(objects)[0];
      if (name === undefined) continue;
      holder = objects[name];
      path = [part, kind, name];
      break;
    }
    if (holder === undefined) {
      holder = { apiVersion: 'example.com/v1', kind: 'Deep', metadata: { name: 'deep' } };
      value['Deep.example.com/v1'] = { deep: holder };
      path = [part, 'Deep.example.com/v1', 'deep'];
    }
  }
  holder = holder as Record<string, unknown>;
  holder['spec'] = { ...(holder['spec'] as object | undefined), x: DEEP_PLACEHOLDER };
  const text = JSON.stringify(body).replace(`"${DEEP_PLACEHOLDER}"`, '['.repeat(depth) + ']'.repeat(depth));
  return { text, path: [...path, 'spec', 'x'] };
}
