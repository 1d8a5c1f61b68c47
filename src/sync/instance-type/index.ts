export { customizeInstanceType, syncInstanceType } from './sync.js';
export * from './schema.js';
