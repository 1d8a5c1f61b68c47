/** @module The caller check: 401 for a caller without the hooks' credentials, before anything else. */
import type { IncomingMessage } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../runtime/index.js';
import { sendError, type AppEnv } from './app-env.js';
import { refusal, type CallerRequirements } from './credentials.js';
import { errorBody } from './errors.js';
import type { HookMetrics } from './metrics.js';

/**
 * Refuses a caller without the credentials with 401, before anything else is looked at (route,
 * media type, body): it learns nothing but that it needs them. The connection is closed after the
 * answer, so an unread body is not waited for.
 */
export function callerCheck(
  callers: () => CallerRequirements,
  logger: Logger,
  metrics: HookMetrics | undefined,
): MiddlewareHandler<AppEnv> {
  return async function checkCaller(c, next) {
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket as
      (IncomingMessage['socket'] & { authorized?: boolean }) | undefined;
    const why = refusal(
      { authorization: c.req.header('authorization'), verifiedClientCertificate: socket?.authorized === true },
      callers(),
    );
    if (why === undefined) return next();
    metrics?.refused.inc({ reason: why });
    logger.warn({ path: c.req.path, remoteAddress: socket?.remoteAddress, reason: why }, 'caller refused');
    c.header('WWW-Authenticate', 'Bearer');
    c.header('Connection', 'close');
    return sendError(c, 'Unauthorized', errorBody('Unauthorized', 'credentials required'));
  };
}
