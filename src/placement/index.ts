export { decideNodeDevices, type ClaimsInput, type NodeDevicesInput } from './decide.js';
export { describeAsks } from './claims.js';
export type { ClaimDemand, TemplateLookup } from './workload.js';
export { NodeDevicesIndex, indexNodeDevices } from './pass-index.js';
export * from './schema.js';
export {
  TopologyAssignmentSchema,
  expandTopologyAssignment,
  type TopologyAssignment,
  type TopologyDomain,
} from './topology.js';
export { explainWorkload } from './explain.js';
