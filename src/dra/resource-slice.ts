/**
 * @module The ResourceSlice (resource.k8s.io/v1) we send, as a strict schema: the fields we set
 * and nothing else, with the API limits docs/architecture.md#dra-api-limits lists so a slice that would be rejected fails
 * here first. What the API server answers is read loosely (received.ts).
 */
import { z } from 'zod';
import { isDnsLabel, isDnsSubdomain } from '../k8s/index.js';
import { LIMITS, RESOURCE_API_VERSION } from './constants.js';

/** An attribute or capacity name in the driver's domain: a C identifier ≤ 32 characters. */
const C_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The longest string or version value of an attribute (API validation). */
export const ATTRIBUTE_VALUE_MAX = 64;

const QualifiedNameSchema = z.string().refine((name) => {
  const slash = name.indexOf('/');
  const id = slash === -1 ? name : name.slice(slash + 1);
  const domain = slash === -1 ? undefined : name.slice(0, slash);
  return id.length <= LIMITS.nameMax && C_IDENTIFIER.test(id) && (domain === undefined || isDnsSubdomain(domain));
}, 'a C identifier ≤ 32 characters, optionally prefixed by a domain');

const DnsLabelSchema = z.string().refine(isDnsLabel, 'a DNS label');
const QuantitySchema = z.string().min(1);

export const DeviceAttributeSchema = z.union([
  z.strictObject({ int: z.number().int() }),
  z.strictObject({ bool: z.boolean() }),
  z.strictObject({ string: z.string().max(ATTRIBUTE_VALUE_MAX) }),
  z.strictObject({ version: z.string().max(ATTRIBUTE_VALUE_MAX) }),
]);
export type DeviceAttribute = z.infer<typeof DeviceAttributeSchema>;

export const DeviceCapacitySchema = z.strictObject({
  value: QuantitySchema,
  requestPolicy: z
    .strictObject({
      default: QuantitySchema,
      validRange: z.strictObject({ min: QuantitySchema }),
    })
    .optional(),
});
export type DeviceCapacity = z.infer<typeof DeviceCapacitySchema>;

const CountersSchema = z.record(DnsLabelSchema, z.strictObject({ value: QuantitySchema }));

/** resource.k8s.io/v1 DeviceTaint as we send it: the API server adds `timeAdded`. */
export const SliceDeviceTaintSchema = z.strictObject({
  key: z.string().min(1),
  value: z.string().max(63),
  effect: z.literal('NoSchedule'),
});

export const SliceDeviceSchema = z
  .strictObject({
    name: DnsLabelSchema,
    attributes: z.record(QualifiedNameSchema, DeviceAttributeSchema),
    capacity: z.record(QualifiedNameSchema, DeviceCapacitySchema),
    allowMultipleAllocations: z.literal(true).optional(),
    consumesCounters: z
      .array(z.strictObject({ counterSet: DnsLabelSchema, counters: CountersSchema }))
      .max(LIMITS.consumesCountersPerDevice),
    taints: z.array(SliceDeviceTaintSchema).min(1).max(4).optional(),
  })
  .refine(
    (d) => Object.keys(d.attributes).length + Object.keys(d.capacity).length <= LIMITS.attributesAndCapacitiesPerDevice,
    `at most ${LIMITS.attributesAndCapacitiesPerDevice} attributes and capacities per device`,
  )
  .refine(
    (d) => d.allowMultipleAllocations === true || Object.values(d.capacity).every((c) => c.requestPolicy === undefined),
    'a request policy needs allowMultipleAllocations',
  );
export type SliceDevice = z.infer<typeof SliceDeviceSchema>;

export const CounterSetSchema = z.strictObject({ name: DnsLabelSchema, counters: CountersSchema });
export type CounterSet = z.infer<typeof CounterSetSchema>;

export const ResourceSliceSchema = z
  .strictObject({
    apiVersion: z.literal(RESOURCE_API_VERSION),
    kind: z.literal('ResourceSlice'),
    metadata: z.strictObject({
      name: z.string().refine(isDnsSubdomain, 'a DNS subdomain ≤ 253 characters'),
      ownerReferences: z
        .array(
          z.strictObject({
            apiVersion: z.literal('v1'),
            kind: z.literal('Node'),
            name: z.string(),
            uid: z.string().min(1),
            controller: z.literal(true),
          }),
        )
        .length(1)
        .optional(),
    }),
    spec: z.strictObject({
      driver: z.string().refine(isDnsSubdomain, 'a DNS subdomain'),
      nodeName: z.string().refine(isDnsSubdomain, 'a node name'),
      pool: z.strictObject({
        name: z.string().min(1),
        generation: z.number().int().min(0),
        resourceSliceCount: z.number().int().min(1),
      }),
      sharedCounters: z.array(CounterSetSchema).min(1).max(LIMITS.counterSetsPerSlice).optional(),
      devices: z.array(SliceDeviceSchema).min(1).optional(),
    }),
  })
  .refine((s) => (s.spec.sharedCounters === undefined) !== (s.spec.devices === undefined), {
    message: 'a slice carries either sharedCounters or devices',
  })
  .refine(
    (s) =>
      (s.spec.devices?.length ?? 0) <=
      (s.spec.devices?.some((d) => d.consumesCounters.length > 0)
        ? LIMITS.devicesPerSliceWithCounters
        : LIMITS.devicesPerSlice),
    'too many devices in one slice',
  );
export type ResourceSlice = z.infer<typeof ResourceSliceSchema>;
