export { decideNodeDevices, type NodeDevicesInput } from './decide.js';
export * from './schema.js';
