/**
 * @module Who may call the hooks: the serving certificate and key, the CA of client certificates
 * and the bearer token (and, during a rotation, the previous one), read from files (a Secret
 * mounted into the Pod) and read again when they change, and the check of a caller against them
 * (docs/architecture.md#hook-server, "Trust"; the rotation: docs/operations.md#token-rotation).
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
  /**
   * The token being rotated out, accepted beside `tokenFile`'s while this file holds one.
   * Metacontroller reads a hook's token only when its controller changes, so for a while after a
   * rotation it still sends the old one. A file that is absent (the Secret has no such key) or
   * empty holds none: no flag to change, the Secret alone says whether a rotation is under way.
   */
  readonly previousTokenFile?: string | undefined;
}

/** What the files held at one reading. */
export interface Credentials {
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer; readonly ca?: Buffer };
  /** SHA-256 of the token: what a presented token's digest is compared with. */
  readonly tokenDigest?: Buffer;
  /** SHA-256 of the previous token, while `previousTokenFile` holds one. */
  readonly previousTokenDigest?: Buffer;
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
  previousTokenFile: '--previous-token-file',
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

/** The previous token, or undefined where its file is absent or empty (no rotation under way). */
function readPrevious(files: CredentialFiles): Buffer | undefined {
  const file = files.previousTokenFile;
  if (file === undefined) return undefined;
  let content: string;
  try {
    content = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CredentialError(file, `${FLAGS.previousTokenFile} cannot be read: ${(error as Error).message}`);
  }
  return content === '' ? undefined : sha256(content);
}

/** Which files go together: a key without a certificate, or a client CA without HTTPS, is a mistake. */
export function checkCredentialFiles(files: CredentialFiles): void {
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    throw new CredentialError(files.certFile ?? files.keyFile ?? '', '--tls-cert and --tls-key go together');
  if (files.clientCaFile !== undefined && files.certFile === undefined)
    throw new CredentialError(
      files.clientCaFile,
      '--client-ca needs --tls-cert and --tls-key (client certificates are TLS)',
    );
  if (files.previousTokenFile !== undefined && files.tokenFile === undefined)
    throw new CredentialError(files.previousTokenFile, '--previous-token-file needs --token-file');
}

/** Reads every file once; throws {@link CredentialError} naming the first one that is missing or empty. */
export function readCredentials(files: CredentialFiles): Credentials {
  checkCredentialFiles(files);
  const cert = read(files, 'certFile');
  const key = read(files, 'keyFile');
  const ca = read(files, 'clientCaFile');
  const token = read(files, 'tokenFile');
  const previous = readPrevious(files);
  return {
    ...(cert && key ? { tls: { cert, key, ...(ca ? { ca } : {}) } } : {}),
    ...(token ? { tokenDigest: sha256(token.toString('utf8').trim()) } : {}),
    ...(previous ? { previousTokenDigest: previous } : {}),
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
    same(a.tokenDigest, b.tokenDigest) &&
    same(a.previousTokenDigest, b.previousTokenDigest)
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
  /** Accepted too, during a rotation ({@link CredentialFiles.previousTokenFile}). */
  readonly previousTokenDigest?: Buffer | undefined;
  readonly clientCertificate: boolean;
  /** Called when a caller got in with the previous token: Metacontroller has not read the new one yet. */
  readonly onPreviousToken?: (() => void) | undefined;
}

/** What a caller must show, from the credentials as last read. */
export function callerRequirements(
  credentials: Credentials,
  clientCertificate: boolean,
  onPreviousToken?: () => void,
): CallerRequirements {
  return {
    tokenDigest: credentials.tokenDigest,
    previousTokenDigest: credentials.previousTokenDigest,
    clientCertificate,
    onPreviousToken,
  };
}

/**
 * Why `caller` may not call the hooks, or undefined when it may: every credential required must be
 * shown. The token is compared as SHA-256 digests with timingSafeEqual, with the current and (during
 * a rotation) the previous token both, always both: the time taken says nothing about how much of
 * it matched, nor its length, nor which one.
 * @example refusal({ authorization: 'Bearer x', verifiedClientCertificate: false }, { clientCertificate: true }) // 'no verified client certificate'
 */
export function refusal(caller: Caller, required: CallerRequirements): string | undefined {
  if (required.clientCertificate && !caller.verifiedClientCertificate) return 'no verified client certificate';
  if (required.tokenDigest === undefined) return undefined;
  const match = /^bearer +(\S+) *$/i.exec(caller.authorization ?? '');
  if (!match) return caller.authorization === undefined ? 'no bearer token' : 'not a bearer token';
  const presented = sha256(match[1] as string);
  const current = timingSafeEqual(presented, required.tokenDigest);
  const previous = timingSafeEqual(presented, required.previousTokenDigest ?? required.tokenDigest);
  if (current) return undefined;
  if (!previous) return 'wrong bearer token';
  required.onPreviousToken?.();
  return undefined;
}
