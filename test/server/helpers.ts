/**
 * @module What the server tests share: a JSON POST through `app.request` (no port), the example
 * hook requests of `examples/hooks/`, and checks on the wire form of an answer.
 */

export {
  EXAMPLES_DIR,
  EXAMPLE_ROUTES,
  REQUEST_PARTS,
  deepRequest,
  exampleBody,
  exampleText,
  type ExampleFile,
  type RequestPart,
} from '../../harness/hooks/examples.js';

/** The request init Metacontroller uses: POST, JSON content type. A non-string body is JSON-encoded. */
export function postInit(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  readonly json: unknown;
}

/** What `createApp()` returns, as far as the tests use it. */
export interface InMemoryApp {
  request(input: string, init?: RequestInit): Response | Promise<Response>;
}

/** POSTs `body` to `path` in memory and reads the whole answer. */
export async function post(
  app: InMemoryApp,
  path: string,
  body: unknown,
  headers?: Record<string, string>,
): Promise<Answer> {
  const res = await app.request(path, postInit(body, headers));
  return read(res);
}

/** Reads a response once: status, headers, text and (when it parses) JSON. */
export async function read(res: Response): Promise<Answer> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Every path (`a.b[2].c`) whose object keys are not in code-unit order; empty when all are sorted. */
export function unsortedKeyPaths(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => unsortedKeyPaths(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  const keys = Object.keys(value);
  const sorted = [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const here = keys.join('\0') === sorted.join('\0') ? [] : [path];
  return [...here, ...keys.flatMap((k) => unsortedKeyPaths((value as Record<string, unknown>)[k], `${path}.${k}`))];
}

/** Every path holding `null`; a composite answer must have none, a decorator only under `labels`/`annotations`. */
export function nullPaths(value: unknown, path = '$'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
}
