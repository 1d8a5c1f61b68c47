/**
 * @module Who may call the hooks: the serving certificate and key, the CA of client certificates
 * and the bearer token, read from files (a Secret mounted into the Pod) and read again when they
 * change, and the check of a caller against them (docs/architecture.md#hook-server, "Trust").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SecureContextOptions } from 'node:tls';

/** The files `serve` reads its credentials from; each absent one is a check not made. */
export interface CredentialFiles {
  /** The serving certificate (PEM, the chain after it): with `keyFile`, the hooks are served over HTTPS. */
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
  /** A caller must present a client certificate signed by this CA (PEM). Needs HTTPS. */
  readonly clientCaFile?: string | undefined;
  /** A caller must send `Authorization: Bearer <the file's content, trimmed>`. */
  readonly tokenFile?: string | undefined;
}

/** What the files held at one reading. */
export interface Credentials {
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca?: Buffer };
  /** SHA-256 of the token: what a presented token's digest is compared with. */
  readonly tokenDigest?: Buffer;
}

/** A credential file that cannot be used, naming the file and the flag it came from. */
export class CredentialError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'CredentialError';
  }
}

/** The flag of each file, for errors and the startup log. */
const FLAGS: Readonly<Record<keyof CredentialFiles, string>> = {
  certFile: '--tls-cert',
  keyFile: '--tls-key',
  clientCaFile: '--client-ca',
  tokenFile: '--token-file',
};

function read(files: CredentialFiles, which: keyof CredentialFiles): Buffer | undefined {
  const file = files[which];
  if (file === undefined) return undefined;
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch (error) {
    throw new CredentialError(file, `${FLAGS[which]} cannot be read: ${(error as Error).message}`);
  }
  if (content.toString('utf8').trim() === '') throw new CredentialError(file, `${FLAGS[which]} is empty`);
  return content;
}

const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();

/** Which files go together: a key without a certificate, or a client CA without HTTPS, is a mistake. */
export function checkCredentialFiles(files: CredentialFiles): void {
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    throw new CredentialError(files.certFile ?? files.keyFile ?? '', '--tls-cert and --tls-key go together');
  if (files.clientCaFile !== undefined && files.certFile === undefined)
    throw new CredentialError(
      files.clientCaFile,
      '--client-ca needs --tls-cert and --tls-key (client certificates are TLS)',
    );
}

/** Reads every file once; throws {@link CredentialError} naming the first one that is missing or empty. */
export function readCredentials(files: CredentialFiles): Credentials {
  checkCredentialFiles(files);
  const cert = read(files, 'certFile');
  const key = read(files, 'keyFile');
  const ca = read(files, 'clientCaFile');
  const token = read(files, 'tokenFile');
  return {
    ...(cert && key ? { tls: { cert, key, ...(ca ? { ca } : {}) } } : {}),
    ...(token ? { tokenDigest: sha256(token.toString('utf8').trim()) } : {}),
  };
}

/** The options of a TLS context for `credentials`: a client certificate asked for when a CA is set, judged per request. */
export function secureContextOptions(credentials: Credentials): SecureContextOptions {
  const tls = credentials.tls;
  if (tls === undefined) return {};
  return { cert: tls.cert, key: tls.key, ...(tls.ca ? { ca: tls.ca } : {}) };
}

/** True when two readings differ (a rotated certificate, a new token). */
export function credentialsChanged(a: Credentials, b: Credentials): boolean {
  const same = (x: Buffer | undefined, y: Buffer | undefined) =>
    x === undefined ? y === undefined : !!y && x.equals(y);
  return !(
    same(a.tls?.cert, b.tls?.cert) &&
    same(a.tls?.key, b.tls?.key) &&
    same(a.tls?.ca, b.tls?.ca) &&
    same(a.tokenDigest, b.tokenDigest)
  );
}

/** What a request shows of its caller. */
export interface Caller {
  /** The Authorization header, if any. */
  readonly authorization: string | undefined;
  /** Whether the TLS connection carried a client certificate that the client CA verified. */
  readonly verifiedClientCertificate: boolean;
}

/** What a caller must show. */
export interface CallerRequirements {
  readonly tokenDigest?: Buffer | undefined;
  readonly clientCertificate: boolean;
}

/**
 * Why `caller` may not call the hooks, or undefined when it may: every credential required must be
 * shown. The token is compared as SHA-256 digests with timingSafeEqual, so the time taken says
 * nothing about how much of it matched, nor about its length.
 * @example refusal({ authorization: 'Bearer x', verifiedClientCertificate: false }, { clientCertificate: true }) // 'no verified client certificate'
 */
export function refusal(caller: Caller, required: CallerRequirements): string | undefined {
  if (required.clientCertificate && !caller.verifiedClientCertificate) return 'no verified client certificate';
  if (required.tokenDigest === undefined) return undefined;
  const match = /^bearer +(\S+) *$/i.exec(caller.authorization ?? '');
  if (!match) return caller.authorization === undefined ? 'no bearer token' : 'not a bearer token';
  return timingSafeEqual(sha256(match[1] as string), required.tokenDigest) ? undefined : 'wrong bearer token';
}
