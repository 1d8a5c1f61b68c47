/**
 * Only Metacontroller may call the hooks: over HTTPS with certificates made by openssl, a caller
 * without the bearer token or the client certificate gets 401 and nothing else, on every path;
 * health and metrics answer on their own port without credentials; a rotated certificate, CA or
 * token is in service for the next connection while an open one keeps working.
 */
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Agent, request, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CredentialError,
  applyCredentials,
  callerRequirements,
  createApp,
  createHookServer,
  createServiceApp,
  readCredentials,
  refusal,
  watchCredentials,
  type CredentialFiles,
  type Credentials,
} from '../../src/server/index.js';
import { makeCa, makeLeaf, type PemPair } from '../support/certs.js';

const HOOK = '/hooks/node-devices-check/sync';
const BODY = JSON.stringify({ parent: { metadata: { name: 'someone-elses-check' } } });
const TOKEN = 'metacontroller-token-0123456789';

let dir: string;
let ca: PemPair;
let server1: PemPair;
let client1: PemPair;
let strangerCa: PemPair;
let strangerClient: PemPair;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gpustack-credentials-'));
  ca = makeCa(dir, 'ca');
  server1 = makeLeaf(dir, 'server1', ca, 'server');
  client1 = makeLeaf(dir, 'client1', ca, 'client');
  strangerCa = makeCa(dir, 'stranger-ca');
  strangerClient = makeLeaf(dir, 'stranger', strangerCa, 'client');
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files a Secret mounted at `<dir>/mounted` would hold: tls.crt, tls.key, ca.crt, token. */
function mount(name: string, content: { cert: string; key: string; ca?: string; token?: string }): CredentialFiles {
  const at = path.join(dir, name);
  const files = {
    certFile: path.join(`${at}.tls.crt`),
    keyFile: path.join(`${at}.tls.key`),
    ...(content.ca ? { clientCaFile: `${at}.ca.crt` } : {}),
    ...(content.token ? { tokenFile: `${at}.token` } : {}),
  };
  writeFileSync(files.certFile, content.cert);
  writeFileSync(files.keyFile, content.key);
  if (content.ca) writeFileSync(`${at}.ca.crt`, content.ca);
  if (content.token) writeFileSync(`${at}.token`, `${content.token}\n`);
  return files;
}

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly peer: PeerCertificate;
}

interface CallOptions {
  readonly path?: string;
  readonly method?: string;
  readonly token?: string;
  readonly client?: PemPair;
  readonly agent?: Agent;
  readonly trust?: string;
}

function call(port: number, options: CallOptions = {}): Promise<Answer> {
  const method = options.method ?? 'POST';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: options.path ?? HOOK,
        method,
        ca: options.trust ?? ca.cert,
        ...(options.client ? { cert: options.client.cert, key: options.client.key } : {}),
        ...(options.agent ? { agent: options.agent } : { agent: false }),
        headers: {
          'content-type': 'application/json',
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
      },
      (res) => {
        // Now: a keep-alive agent takes the socket back once the answer is read.
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            headers: res.headers,
            peer,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? BODY : undefined);
  });
}

/** A hook call whose body is sent in two halves: `started` once the first is out, `finish()` sends the rest. */
function slowCall(port: number, token: string): { started: Promise<void>; finish: () => Promise<Answer> } {
  let answer!: Promise<Answer>;
  let req!: ReturnType<typeof request>;
  const started = new Promise<void>((resolve, reject) => {
    answer = new Promise((done, fail) => {
      req = request(
        {
          host: '127.0.0.1',
          port,
          path: HOOK,
          method: 'POST',
          ca: ca.cert,
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(BODY),
            authorization: `Bearer ${token}`,
          },
        },
        (res) => {
          const peer = (res.socket as TLSSocket).getPeerCertificate();
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => done({ status: res.statusCode ?? 0, body, headers: res.headers, peer }));
        },
      );
      req.on('error', fail);
    });
    answer.catch(reject);
    req.write(BODY.slice(0, 10), () => resolve());
  });
  return {
    started,
    finish: () => {
      req.end(BODY.slice(10));
      return answer;
    },
  };
}

const listen = (server: Server | HttpsServer): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

/** A hook server as runServer builds it: credentials read from `files`, checked per request, polled for changes. */
async function serve(files: CredentialFiles, pollMs = 50) {
  const hold: { current: Credentials } = { current: readCredentials(files) };
  const clientCertificate = files.clientCaFile !== undefined;
  const previousTokenCalls = { count: 0 };
  const app = createApp({
    serviceRoutes: false,
    callers: () => callerRequirements(hold.current, clientCertificate, () => previousTokenCalls.count++),
  });
  const server = createHookServer(app, hold.current);
  const failures: string[] = [];
  const stop = watchCredentials(files, hold.current, pollMs, {
    changed: (next) => applyCredentials(server, next, hold),
    failed: (error) => failures.push(error.message),
  });
  const port = await listen(server);
  running.push(() => {
    stop();
    server.closeAllConnections();
    server.close();
  });
  return { port, server, failures, previousTokenCalls };
}

const running: (() => void)[] = [];
afterEach(() => {
  for (const stop of running.splice(0)) stop();
});

const UNAUTHORIZED = { error: { code: 'Unauthorized', message: 'credentials required' } };

describe('refusal (who may call)', () => {
  // The digest the server keeps, as readCredentials makes it from a token file.
  const digest = createHash('sha256').update(TOKEN).digest();

  it.each([
    [undefined, 'no bearer token'],
    ['Basic dXNlcjpwYXNz', 'not a bearer token'],
    ['Bearer', 'not a bearer token'],
    [`Bearer ${TOKEN}x`, 'wrong bearer token'],
    [`Bearer ${TOKEN.slice(0, -1)}`, 'wrong bearer token'],
    [`Bearer ${TOKEN}`, undefined],
    [`bearer ${TOKEN}`, undefined],
  ])('Authorization %s → %s', (authorization, why) => {
    expect(
      refusal({ authorization, verifiedClientCertificate: false }, { tokenDigest: digest, clientCertificate: false }),
    ).toBe(why);
  });

  it('with a client certificate required, the token alone is not enough, and both together are', () => {
    const required = { tokenDigest: digest, clientCertificate: true };
    expect(refusal({ authorization: `Bearer ${TOKEN}`, verifiedClientCertificate: false }, required)).toBe(
      'no verified client certificate',
    );
    expect(refusal({ authorization: undefined, verifiedClientCertificate: true }, required)).toBe('no bearer token');
    expect(refusal({ authorization: `Bearer ${TOKEN}`, verifiedClientCertificate: true }, required)).toBeUndefined();
  });
});

describe('refusal during a token rotation: the current and the previous token', () => {
  const sha = (text: string) => createHash('sha256').update(text).digest();
  const required = (onPreviousToken?: () => void) => ({
    tokenDigest: sha('the-new-token'),
    previousTokenDigest: sha(TOKEN),
    clientCertificate: false,
    onPreviousToken,
  });
  const as = (token: string | undefined) => ({
    authorization: token === undefined ? undefined : `Bearer ${token}`,
    verifiedClientCertificate: false,
  });

  it('accepts both, says when the previous one got a caller in, and refuses any other', () => {
    let previous = 0;
    const count = () => previous++;
    expect(refusal(as('the-new-token'), required(count))).toBeUndefined();
    expect(previous).toBe(0);
    expect(refusal(as(TOKEN), required(count))).toBeUndefined();
    expect(previous).toBe(1);
    expect(refusal(as('a-third-token'), required(count))).toBe('wrong bearer token');
    expect(refusal(as(undefined), required(count))).toBe('no bearer token');
    expect(previous).toBe(1);
  });

  it('without a previous token, the old one is refused', () => {
    expect(refusal(as(TOKEN), { ...required(), previousTokenDigest: undefined })).toBe('wrong bearer token');
  });
});

describe('readCredentials names the file that is wrong', () => {
  it.each([
    [
      { certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key' },
      /\/nonexistent\/tls\.crt: --tls-cert cannot be read/,
    ],
    [{ keyFile: '/x/tls.key' }, /--tls-cert and --tls-key go together/],
    [{ clientCaFile: '/x/ca.crt' }, /\/x\/ca\.crt: --client-ca needs --tls-cert and --tls-key/],
  ])('%o', (files, message) => {
    expect(() => readCredentials(files)).toThrow(CredentialError);
    expect(() => readCredentials(files)).toThrow(message);
  });

  it('--previous-token-file without --token-file', () => {
    expect(() => readCredentials({ previousTokenFile: '/x/previous' })).toThrow(
      '/x/previous: --previous-token-file needs --token-file',
    );
  });

  it('a previous-token file that is absent or empty holds no token (a Secret without the key), and is no error', () => {
    const tokenFile = path.join(dir, 'current-token');
    writeFileSync(tokenFile, 'the-new-token\n');
    const previousTokenFile = path.join(dir, 'previous-token');
    expect(readCredentials({ tokenFile, previousTokenFile }).previousTokenDigest).toBeUndefined();
    writeFileSync(previousTokenFile, '\n');
    expect(readCredentials({ tokenFile, previousTokenFile }).previousTokenDigest).toBeUndefined();
    writeFileSync(previousTokenFile, `${TOKEN}\n`);
    expect(readCredentials({ tokenFile, previousTokenFile }).previousTokenDigest).toEqual(
      createHash('sha256').update(TOKEN).digest(),
    );
  });

  it('an empty token file', () => {
    const tokenFile = path.join(dir, 'empty-token');
    writeFileSync(tokenFile, '\n');
    expect(() => readCredentials({ tokenFile })).toThrow(`${tokenFile}: --token-file is empty`);
  });
});

describe('the hook server over HTTPS with a bearer token', () => {
  it('a caller without the token gets 401 and nothing else, on a hook, health, metrics and an unknown path', async () => {
    const { port } = await serve(mount('token', { ...server1, token: TOKEN }));
    for (const [method, where] of [
      ['POST', HOOK],
      ['GET', '/healthz'],
      ['GET', '/metrics'],
      ['GET', '/no/such/path'],
      ['POST', '/hooks/scheduling-chain/sync'],
    ] as const) {
      for (const token of [undefined, 'guess']) {
        const answer = await call(port, { method, path: where, ...(token ? { token } : {}) });
        expect(answer.status, `${method} ${where} token ${token}`).toBe(401);
        expect(JSON.parse(answer.body)).toEqual(UNAUTHORIZED);
        expect(answer.headers['www-authenticate']).toBe('Bearer');
      }
    }
    const allowed = await call(port, { token: TOKEN });
    expect(allowed.status).toBe(200);
    expect(JSON.parse(allowed.body)).toEqual({});
    // Health and metrics are not here at all, even for Metacontroller: they have their own port.
    expect((await call(port, { method: 'GET', path: '/healthz', token: TOKEN })).status).toBe(404);
  });

  it('health and metrics on their own port answer without credentials, and serve no hook', async () => {
    const service = createServiceApp();
    expect((await service.request('/healthz')).status).toBe(200);
    expect((await service.request('/readyz')).status).toBe(200);
    const hook = await service.request(HOOK, {
      method: 'POST',
      body: BODY,
      headers: { 'content-type': 'application/json' },
    });
    expect(hook.status).toBe(404);
  });

  it('a client that trusts another CA does not get through the handshake', async () => {
    const { port } = await serve(mount('token-trust', { ...server1, token: TOKEN }));
    await expect(call(port, { token: TOKEN, trust: strangerCa.cert })).rejects.toThrow(/certificate/i);
  });
});

describe('the hook server with client certificates (mutual TLS)', () => {
  it('without a certificate, or with one another CA signed: 401; with ours: 200', async () => {
    const { port } = await serve(mount('mtls', { ...server1, ca: ca.cert }));
    const none = await call(port);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual(UNAUTHORIZED);
    const stranger = await call(port, { client: strangerClient });
    expect(stranger.status).toBe(401);
    const ours = await call(port, { client: client1 });
    expect(ours.status).toBe(200);
  });
});

const until = async (check: () => Promise<boolean>, what: string): Promise<void> => {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

describe('rotation: the files change, the server follows without a restart', () => {
  it(
    'a new certificate serves the next connection; a request in flight finishes on its own, idle connections are closed so the next call verifies the new one',
    { timeout: 20_000 },
    async () => {
      const files = mount('rotate', { ...server1, token: TOKEN });
      const { port } = await serve(files);
      const fingerprint1 = new X509Certificate(server1.cert).fingerprint256;
      const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
      expect((await call(port, { token: TOKEN, agent: keepAlive })).peer.fingerprint256).toBe(fingerprint1);
      // A request whose body is still on its way when the certificate changes.
      const inFlight = slowCall(port, TOKEN);
      await inFlight.started;

      const server2 = makeLeaf(dir, 'server2', ca, 'server');
      writeFileSync(files.certFile as string, server2.cert);
      writeFileSync(files.keyFile as string, server2.key);
      const fingerprint2 = new X509Certificate(server2.cert).fingerprint256;
      await until(
        async () => (await call(port, { token: TOKEN })).peer.fingerprint256 === fingerprint2,
        'the new certificate',
      );

      const finished = await inFlight.finish();
      expect(finished.status).toBe(200);
      expect(finished.peer.fingerprint256).toBe(fingerprint1);
      // The idle keep-alive connection was closed: the agent's next call is a new handshake.
      expect((await call(port, { token: TOKEN, agent: keepAlive })).peer.fingerprint256).toBe(fingerprint2);
      keepAlive.destroy();
    },
  );

  it('a new token: the old one is refused, the new one accepted', async () => {
    const files = mount('rotate-token', { ...server1, token: TOKEN });
    const { port } = await serve(files);
    writeFileSync(files.tokenFile as string, 'the-next-token\n');
    await until(async () => (await call(port, { token: 'the-next-token' })).status === 200, 'the new token');
    expect((await call(port, { token: TOKEN })).status).toBe(401);
  });

  it('a token rotation: the new token and the previous one both answer 200 while the previous one is there, only the new one after', async () => {
    const files = mount('rotate-both', { ...server1, token: TOKEN });
    const previousTokenFile = `${files.tokenFile as string}.previous`;
    const { port, previousTokenCalls } = await serve({ ...files, previousTokenFile });
    expect((await call(port, { token: TOKEN })).status).toBe(200);
    // Step 1: the Secret gets the new token and keeps the old one as the previous (one write).
    writeFileSync(files.tokenFile as string, 'the-next-token\n');
    writeFileSync(previousTokenFile, `${TOKEN}\n`);
    await until(async () => (await call(port, { token: 'the-next-token' })).status === 200, 'the new token');
    // Metacontroller, not yet told, still sends the old token: let in, and counted.
    const before = previousTokenCalls.count;
    expect((await call(port, { token: TOKEN })).status).toBe(200);
    expect(previousTokenCalls.count).toBe(before + 1);
    expect((await call(port, { token: 'a-third-token' })).status).toBe(401);
    // Last step: the previous token leaves the Secret (its file disappears from the volume).
    unlinkSync(previousTokenFile);
    await until(async () => (await call(port, { token: TOKEN })).status === 401, 'the old token refused');
    expect((await call(port, { token: 'the-next-token' })).status).toBe(200);
  });

  it('a key that does not fit the certificate (a half-written rotation) is reported, and the last good pair keeps serving', async () => {
    const files = mount('rotate-bad', { ...server1, token: TOKEN });
    const { port, failures } = await serve(files);
    const other = makeLeaf(dir, 'server3', ca, 'server');
    writeFileSync(files.keyFile as string, other.key);
    await until(async () => failures.length > 0, 'the failed reload');
    expect(failures[0]).toMatch(/key values mismatch|key/i);
    const answer = await call(port, { token: TOKEN });
    expect(answer.status).toBe(200);
    writeFileSync(files.certFile as string, other.cert);
    const fingerprint3 = new X509Certificate(other.cert).fingerprint256;
    await until(
      async () => (await call(port, { token: TOKEN })).peer.fingerprint256 === fingerprint3,
      'the mended pair',
    );
  });
});
