export { decideNodeDevices, type NodeDevicesInput } from './decide.js';
export { NodeDevicesIndex, indexNodeDevices } from './pass-index.js';
export * from './schema.js';
