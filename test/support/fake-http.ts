/**
 * @module Small pieces the fake API servers (agent, admission) share: reading a request body and
 * answering JSON or a Kubernetes `Status` failure.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A `metav1.Status` failure, as the API server sends it with an error code. */
export function failure(res: ServerResponse, code: number, message: string): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
}
