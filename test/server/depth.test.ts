/**
 * Deeply nested requests: every part of every route's request (parent, children, related, the
 * controller, and a decorator's v1 `object` and `attachments`) is bounded at 128 levels before
 * anything walks it — a 400 naming the field, not minutes of a blocked server. In memory for the
 * answers, then against the server in its own process on 127.0.0.1, where /healthz, asked while
 * each deep request is in flight, must answer too (a blocked event loop would hold it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, createApp } from '../../src/server/index.js';
import { EXAMPLE_ROUTES, REQUEST_PARTS, deepRequest, post } from './helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** Levels of the path a 400 names (MAX_NAMED_LEVELS); the rest are `…`. */
const NAMED_LEVELS = 12;
const DEPTHS = [2_000, 20_000, 100_000];
/** Hang guards, not speed claims: starting the server imports the program through tsx (seconds on a busy machine). */
const START_TIMEOUT_MS = 60_000;
const SWEEP_TIMEOUT_MS = 60_000;

const ROUTES = EXAMPLE_ROUTES.flatMap(({ route, file, kind }) =>
  REQUEST_PARTS[kind === 'customize' ? 'customize' : kind].map((part) => ({ route, file, part })),
);

/** The answer to a request `path` deep, as the server words it: its first 12 levels, then `…`. */
function expectedError(path: readonly string[]): unknown {
  const named = `${path.join('.')}${'[0]'.repeat(NAMED_LEVELS - path.length)}…`;
  const message = `request nests deeper than ${MAX_BODY_DEPTH} levels`;
  return {
    error: {
      code: 'BadHookRequest',
      message: `${named}: ${message}`,
      issues: [{ path: named, code: 'too_deep', message }],
    },
  };
}

describe('in memory', () => {
  it.each(ROUTES)('$route, 2,000 levels in $part → 400 naming the field', async ({ route, file, part }) => {
    const { text, path } = deepRequest(file, part, 2_000);

    const answer = await post(createApp(), route, text);

    expect(answer.status).toBe(400);
    expect(answer.json).toEqual(expectedError(path));
  });

  it('right at the bound is read as usual, one level past it is refused (a related ChainSettings spec)', async () => {
    // body → related → kind → default → spec: 5 levels, then x's arrays.
    const at = deepRequest('node-profile.sync.json', 'related', MAX_BODY_DEPTH - 5);
    const past = deepRequest('node-profile.sync.json', 'related', MAX_BODY_DEPTH - 4);

    const read = await post(createApp(), '/hooks/node-profile/sync', at.text);
    const refused = await post(createApp(), '/hooks/node-profile/sync', past.text);

    expect(read.status).toBe(429);
    expect((read.json as { error: { message: string } }).error.message).toBe(
      'ChainSettings default: spec: Unrecognized key: "x"',
    );
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual(expectedError(past.path));
  });
});

interface Timed {
  readonly status: number;
  readonly text: string;
  /** From the request's start to the end of its answer. */
  readonly ms: number;
}

/** One request on its own connection; `sent` resolves once the whole body is handed to the socket. */
function send(
  port: number,
  method: string,
  path: string,
  body?: string,
): { sent: Promise<void>; answer: Promise<Timed> } {
  const started = performance.now();
  let markSent = () => {};
  const sent = new Promise<void>((resolve) => (markSent = resolve));
  const answer = new Promise<Timed>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body, markSent);
  });
  return { sent, answer };
}

describe('the server in its own process on 127.0.0.1', () => {
  let server: ChildProcess | undefined;
  let port = 0;

  beforeAll(async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    server = child;
    port = await new Promise<number>((resolve, reject) => {
      let seen = '';
      child.stdout.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const match = /hook server on http:\/\/127\.0\.0\.1:(\d+)\n/.exec(seen);
        if (match?.[1]) resolve(Number(match[1]));
      });
      child.on('close', (code) => reject(new Error(`serve exited ${code} before listening:\n${seen}`)));
    });
  }, START_TIMEOUT_MS);

  afterAll(() => {
    if (server?.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  });

  it.for(DEPTHS)(
    '%i levels in every part of every route → 400 naming the field, /healthz answering while each is in flight',
    { timeout: SWEEP_TIMEOUT_MS },
    async (depth, { annotate }) => {
      const times: string[] = [];
      for (const { route, file, part } of ROUTES) {
        const { text, path } = deepRequest(file, part, depth);
        const deep = send(port, 'POST', route, text);
        await deep.sent;
        const health = send(port, 'GET', '/healthz').answer;

        const [answer, healthz] = await Promise.all([deep.answer, health]);

        expect(healthz.status).toBe(200);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.text)).toEqual(expectedError(path));
        times.push(`${route} ${part}: ${answer.ms.toFixed(0)} ms, /healthz ${healthz.ms.toFixed(0)} ms`);
      }
      await annotate(times.join('\n'));
    },
  );

  it('stops promptly on SIGTERM after the sweep', async () => {
    const child = server as ChildProcess;
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

    child.kill('SIGTERM');

    expect(await exited).toBe(0);
  });
});
