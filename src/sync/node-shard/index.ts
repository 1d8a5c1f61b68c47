export { customizeNodeShard, syncNodeShard } from './sync.js';
export {
  ARRIVAL_GAP_SECONDS,
  ARRIVING_WITHIN_SECONDS,
  CLOCK_SKEW_SECONDS,
  MIN_ARRIVAL_NODES,
  MIN_ARRIVAL_SECONDS,
  chainPace,
  holdForArrival,
  profileArrival,
  shardPace,
  type Created,
  type Pace,
} from './arrivals.js';
export { summarizeShard } from './summary.js';
export * from './schema.js';
