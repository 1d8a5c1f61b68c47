/**
 * @module Test certificates made with the openssl command line: a CA, and leaf certificates it
 * signs (a server's for 127.0.0.1 and localhost, or a client's), as PEM files in a folder.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function openssl(dir: string, args: string[]): void {
  const run = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (run.error) throw new Error(`openssl is needed for the TLS tests: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

export interface PemPair {
  readonly cert: string;
  readonly key: string;
  /** Paths of the two files. */
  readonly certFile: string;
  readonly keyFile: string;
}

const pair = (dir: string, name: string): PemPair => {
  const certFile = path.join(dir, `${name}.crt`);
  const keyFile = path.join(dir, `${name}.key`);
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile, keyFile };
};

/** A self-signed CA `<name>.crt`/`<name>.key` in `dir` (EC P-256: quick to make). */
export function makeCa(dir: string, name: string): PemPair {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
  ]);
  return pair(dir, name);
}

/** A leaf certificate `<name>.crt`/`<name>.key` signed by `ca`: a server's (127.0.0.1, localhost) or a client's. */
export function makeLeaf(dir: string, name: string, ca: PemPair, usage: 'server' | 'client'): PemPair {
  const ext = path.join(dir, `${name}.ext`);
  const extensions =
    usage === 'server'
      ? 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n'
      : 'extendedKeyUsage=clientAuth\n';
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${name}`,
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
  ]);
  writeFileSync(ext, extensions);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    `${name}.crt`,
  ]);
  return pair(dir, name);
}
