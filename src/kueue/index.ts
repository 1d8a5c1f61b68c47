/**
 * @module src/kueue: the Kueue manager configuration the chain needs, built from the manufacturer
 * table and merged into an existing one for a given Kueue version (pure; `kueue-config` prints it,
 * `npm run generate:manifests` writes it).
 */
export {
  DEFAULT_KUEUE_MINOR,
  DRA_COUNTER_MINOR,
  KUEUE_MAX_CLASSES_PER_MAPPING,
  KUEUE_MAX_DEVICE_CLASS_MAPPINGS,
  draQuotaResource,
  planDeviceClassMappings,
  type DeviceClassMapping,
  type DeviceClassMappingPlan,
  KUEUE_CONFIG_API_VERSION,
  KUEUE_FRAMEWORKS,
  OLDEST_KUEUE_MINOR,
  QUOTA_CHECK_STRATEGY_MINOR,
  buildKueueConfig,
  buildTransformations,
  kueueMinor,
  mergeKueueConfig,
  type KueueTarget,
  type MergeError,
  type MergeResult,
} from './config.js';
