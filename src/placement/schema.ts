/**
 * @module What the `gpustack-node-devices` checker reads (Kueue v1beta2 Workloads and
 * ResourceFlavors, Nodes, Pods) and the one admission-check entry it writes. Received shapes are
 * loose: only the fields the decision reads are checked, everything else passes through.
 */
import { z } from 'zod';
import { TopologyAssignmentSchema } from './topology.js';
import {
  ConditionSchema,
  KubeObjectSchema,
  PodSpecSchema,
  ReceivedLabelsSchema,
  ReceivedTolerationSchema,
} from '../k8s/index.js';

// The Pod and its containers are src/k8s's (the agent reads the same Pods): re-exported for the
// decision's readers.
export { PodSchema, PodSpecSchema, type Container, type Pod, type PodSpec, type ResourceList } from '../k8s/index.js';

/** A pod's claim (DRA): by template (one claim per pod) or by name (one claim for all). */
export const PodResourceClaimSchema = z.looseObject({
  name: z.string(),
  resourceClaimName: z.string().nullish(),
  resourceClaimTemplateName: z.string().nullish(),
});
export type PodResourceClaim = z.infer<typeof PodResourceClaimSchema>;

/** A PodSet's pod spec: what each pod asks for (resources and claims), and the taints it tolerates. */
export const PodSetPodSpecSchema = PodSpecSchema.extend({
  tolerations: z.array(ReceivedTolerationSchema).optional(),
  resourceClaims: z.array(PodResourceClaimSchema).optional(),
});
export type PodSetPodSpec = z.infer<typeof PodSetPodSpecSchema>;

export const PodSetSchema = z.looseObject({
  name: z.string().min(1),
  count: z.number().int().nonnegative().default(1),
  template: z.looseObject({ spec: PodSetPodSpecSchema }),
});
export type PodSet = z.infer<typeof PodSetSchema>;

export const PodSetAssignmentSchema = z.looseObject({
  name: z.string().min(1),
  /** Resource name → flavor name, e.g. `credits.gpustack.ai/nvidia: gpustack-nvidia-…-8d`. */
  flavors: z.record(z.string(), z.string()).optional(),
  /** Pods admitted; below the PodSet's count under partial admission. */
  count: z.number().int().nonnegative().optional(),
  /** The domains Kueue's TAS assigned (a topology flavor); null/absent without TAS. */
  topologyAssignment: TopologyAssignmentSchema.nullish(),
});
export type PodSetAssignment = z.infer<typeof PodSetAssignmentSchema>;

/** One entry of `status.admissionChecks`, as Kueue or a check controller wrote it. */
export const AdmissionCheckStateSchema = z.looseObject({
  name: z.string(),
  state: z.string(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
  requeueAfterSeconds: z.number().optional(),
  retryCount: z.number().optional(),
});
export type AdmissionCheckState = z.infer<typeof AdmissionCheckStateSchema>;

/** A Kueue v1beta2 Workload: the subset the per-card decision reads. */
export const WorkloadSchema = KubeObjectSchema.extend({
  spec: z.looseObject({
    /** `false` once deactivated; absent means active. */
    active: z.boolean().optional(),
    podSets: z.array(PodSetSchema).default([]),
  }),
  status: z
    .looseObject({
      conditions: z.array(ConditionSchema).optional(),
      admission: z
        .looseObject({
          clusterQueue: z.string(),
          podSetAssignments: z.array(PodSetAssignmentSchema).default([]),
        })
        .nullish(),
      admissionChecks: z.array(AdmissionCheckStateSchema).optional(),
    })
    .nullish(),
});
export type Workload = z.infer<typeof WorkloadSchema>;

/**
 * A ResourceFlavor as received (ours or not): its name, the node labels it pins, and the
 * tolerations Kueue adds to the pods it admits on it.
 */
export const ReceivedResourceFlavorSchema = KubeObjectSchema.extend({
  spec: z
    .looseObject({
      nodeLabels: ReceivedLabelsSchema.optional(),
      tolerations: z.array(ReceivedTolerationSchema).optional(),
    })
    .optional(),
});
export type ReceivedResourceFlavor = z.infer<typeof ReceivedResourceFlavorSchema>;

/** Seconds Kueue waits before re-evaluating a Workload our check answered `Retry`. */
export const NODE_DEVICES_REQUEUE_SECONDS = 30;

/**
 * Our answer for one Workload: the fields of our `status.admissionChecks` entry except
 * `lastTransitionTime`, which the writer stamps (the decision reads no clock).
 */
export const NodeDevicesVerdictSchema = z.strictObject({
  name: z.string().min(1),
  state: z.enum(['Ready', 'Retry']),
  message: z.string().max(32768),
  requeueAfterSeconds: z.literal(NODE_DEVICES_REQUEUE_SECONDS).optional(),
});
export type NodeDevicesVerdict = z.infer<typeof NodeDevicesVerdictSchema>;
