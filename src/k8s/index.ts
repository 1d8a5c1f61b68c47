/**
 * @module src/k8s: wire types, schemas and small pure helpers for the Kubernetes subset we touch.
 *
 * Schema names, here and in every folder: a loose schema of something we receive is
 * `Received<Thing>Schema` wherever the plain name is the strict schema of what we send
 * (`ReceivedTolerationSchema` / `TolerationSchema`, `ReceivedResourceSliceSchema` /
 * `ResourceSliceSchema`) or another reading of the same thing exists (the checker's
 * `ReceivedInstanceTypeSchema`); a kind we only ever receive keeps its plain name (`NodeSchema`,
 * `PodSchema`), and our own kinds pair `<Kind>Schema` (as received) with `<Kind>OutputSchema`
 * (as emitted). "Observed" is Metacontroller's word for a controller's children, not a prefix.
 */
export * from './objects.js';
export * from './pod.js';
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
