export { buildNodeProfile, customizeNodeProfile, syncNodeProfile } from './sync.js';
export * from './schema.js';
