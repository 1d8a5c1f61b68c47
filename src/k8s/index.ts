/** @module src/k8s: wire types, schemas and small pure helpers for the Kubernetes subset we touch. */
export * from './objects.js';
export * from './quantity.js';
export * from './validation.js';
export * from './selector.js';
export * from './scheduling.js';
export * from './order.js';
export * from './conditions.js';
export * from './kueue.js';
export * from './gpustack.js';
export * from './metacontroller.js';
export * from './paths.js';
