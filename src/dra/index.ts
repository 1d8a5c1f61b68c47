/** @module Device allocation through DRA (docs/architecture.md#dra): pure, imports src/nodefeature, src/contracts and src/k8s. */
export * from './api-paths.js';
export * from './constants.js';
export * from './device-classes.js';
export * from './ledger.js';
export * from './pool-devices.js';
export * from './received-resource-objects.js';
export * from './requests.js';
export * from './resource-slice.js';
export * from './slices.js';
export * from './claim-allocation.js';
export * from './cdi.js';
export * from './device-health.js';
export * from './device-taints.js';
export * from './device-owner.js';
export * from './cordon.js';
export * from './card-view.js';
export * from './overcommit.js';
