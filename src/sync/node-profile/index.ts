export { buildNodeProfile, createsProfile, customizeNodeProfile, syncNodeProfile } from './sync.js';
export * from './schema.js';
