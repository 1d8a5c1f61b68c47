export { syncNodeDevicesCheck } from './sync.js';
export * from './schema.js';
