/** @module Helpers shared by the controllers' sync functions. */
export * from './related.js';
export * from './settings.js';
export * from './context.js';
export * from './observed.js';
export * from './observed-fields.js';
