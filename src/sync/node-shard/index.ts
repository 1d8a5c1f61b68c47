export { customizeNodeShard, syncNodeShard } from './sync.js';
export { shardArrival, ARRIVAL_GAP_SECONDS, ARRIVING_WITHIN_SECONDS } from './arrivals.js';
export { summarizeShard } from './summary.js';
export * from './schema.js';
