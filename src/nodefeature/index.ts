/** @module src/nodefeature: the pure label algebra of the scheduling chain (docs/architecture.md#label-algebra). */
export * from './constants.js';
export * from './derived-from-manufacturer.js';
export * from './names.js';
export * from './memory.js';
export * from './fnv.js';
export * from './keys.js';
export * from './object-names.js';
export * from './node-facts.js';
export * from './chain-view.js';
export * from './shards.js';
export * from './labels.js';
export * from './vendor-labels.js';
export * from './derived-labels.js';
export * from './profile-labels.js';
export * from './presets.js';
export * from './topology.js';
