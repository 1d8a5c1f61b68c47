export { customizeSchedulingChain, syncSchedulingChain } from './sync.js';
export { buildChainSettings } from './children.js';
export { planChain, type ChainPlan, type FlavorPlan, type PoolPlan, type SkippedNode } from './pools.js';
export * from './schema.js';
