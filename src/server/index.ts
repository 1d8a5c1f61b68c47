/** @module src/server: the hono hook server (docs/architecture.md#hook-server). */
export { createApp, createServiceApp, type AppOptions } from './app.js';
export {
  CredentialError,
  callerRequirements,
  checkCredentialFiles,
  readCredentials,
  refusal,
  type Caller,
  type CallerRequirements,
  type CredentialFiles,
  type Credentials,
} from './credentials.js';
export * from './limits.js';
export {
  HOOKS,
  defineHook,
  hookRoutes,
  hookTable,
  type ControllerName,
  type Hook,
  type HookDefinition,
  type HookKind,
  type HookRoute,
  type PreparedHook,
} from './hooks.js';
export { createMetrics, type HookMetrics } from './metrics.js';
export {
  DEFAULT_JOIN_PACING_SECONDS,
  HOLD_MARGIN_SECONDS,
  JoinPacing,
  PACED_HOOK_TIMEOUT_SECONDS,
  pacingProblem,
  type PacingOptions,
} from './join-pacing.js';
export { errorBody, statusOf, type ErrorBody, type ErrorCode } from './errors.js';
export {
  applyCredentials,
  createHookServer,
  drainServer,
  watchCredentials,
  type CredentialEvents,
  readContainerMemoryLimit,
  runServer,
  startupBanner,
  type MemoryLimit,
  type ServeOptions,
} from './serve.js';
