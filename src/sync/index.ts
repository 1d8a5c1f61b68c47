/**
 * @module src/sync: the pure hook functions, one folder per controller. Each takes a parsed
 * request (and a `now`) and returns the desired state or a refusal; no I/O, no clock, no env.
 */
export * from './common/index.js';
export * from './node-profile/index.js';
export * from './node-shard/index.js';
export * from './node-devices-check/index.js';
export * from './scheduling-chain/index.js';
export * from './instance-type/index.js';
