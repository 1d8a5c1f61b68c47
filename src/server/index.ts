/** @module src/server: the hono hook server (DESIGN §6). */
export { createApp, DEFAULT_MAX_BODY_BYTES, type AppOptions, type HookLogger } from './app.js';
export { HOOKS, hookRoutes, type ControllerName, type HookKind } from './hooks.js';
export { createMetrics, type HookMetrics } from './metrics.js';
export { errorBody, statusOf, type ErrorBody, type ErrorCode } from './errors.js';
export { runServer, type ServeOptions } from './serve.js';
