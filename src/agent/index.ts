/** @module src/agent: the node agent (docs/architecture.md#node-agent) — detect, build labels, publish on change. */
export {
  AGENT_RETRY,
  createAgentState,
  detectionStaleAfterMs,
  longestCycleGapMs,
  nextDelayMs,
  runAgent,
  runCycle,
  startHealthServer,
  type AgentOptions,
  type AgentState,
  type CycleResult,
  type HealthServerOptions,
} from './agent.js';
export {
  failedManufacturers,
  isAgentLabel,
  labelsFromDetection,
  sameLabels,
  screenDetection,
  sliceCardsOf,
  type Labels,
} from './labels.js';
export {
  SlicesNotServedError,
  resourceSlicePublisher,
  type SlicePublishOutcome,
  type SlicePublishResult,
  type SlicePublisher,
  type SlicePublisherOptions,
} from './slice-publisher.js';
export {
  FEATURE_FILE_NAME,
  PUBLISH_MODES,
  featureFilePublisher,
  nodeFeaturePublisher,
  nodeLabelsPublisher,
  type PublishMode,
  type Publisher,
} from './publishers.js';
export {
  NO_RECORDING,
  createAgentMetrics,
  type AgentMetrics,
  type AgentRecorder,
  type PublishResult,
} from './metrics.js';
export { apiOwnerDecider, draOwnedCards, type OwnerDecider, type OwnerDecisions } from './device-owners.js';
