export { customizeNodeShard, syncNodeShard } from './sync.js';
export { summarizeShard } from './summary.js';
export * from './schema.js';
