export { customizeSchedulingChain, syncSchedulingChain } from './sync.js';
export { planChain, type ChainPlan, type FlavorPlan, type PoolPlan, type SkippedNode } from './pools.js';
export * from './schema.js';
