/**
 * @module Every sync output in tests passes the strict response schema (hook v2 decodes responses
 * strictly) and each child its strict kind schema, and carries no `null`/`undefined` where
 * production would have to drop it.
 */
import { expect } from 'vitest';
import type { z } from 'zod';
import {
  AdmissionCheckSchema,
  ChainSettingsOutputSchema,
  ClusterQueueSchema,
  CompositeSyncResponseSchema,
  DecoratorSyncResponseSchema,
  InstanceTypeOutputSchema,
  InstanceTypeStatusSchema,
  LocalQueueSchema,
  NodeProfileOutputSchema,
  NodeShardOutputSchema,
  NodeShardStatusSchema,
  ResourceFlavorSchema,
  TopologySchema,
  SchedulingChainStatusSchema,
  canonicalize,
  isDnsLabel,
  isDnsSubdomain,
  isLabelKey,
  isLabelValue,
  type AdmissionCheck,
  type ClusterQueue,
  type CompositeSyncResponse,
  type DecoratorSyncResponse,
  type InstanceTypeOutput,
  type InstanceTypeStatus,
  type LocalQueue,
  type ResourceFlavor,
  type SchedulingChainStatus,
  type SyncOutcome,
  type SyncRefusal,
} from '../../src/k8s/index.js';
import { DeviceClassSchema } from '../../src/dra/index.js';

const CHILD_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  AdmissionCheck: AdmissionCheckSchema,
  ChainSettings: ChainSettingsOutputSchema,
  ClusterQueue: ClusterQueueSchema,
  DeviceClass: DeviceClassSchema,
  InstanceType: InstanceTypeOutputSchema,
  LocalQueue: LocalQueueSchema,
  // render returns each NodeShard with the status its controller writes; the chain never sends one.
  NodeShard: NodeShardOutputSchema.extend({ status: NodeShardStatusSchema.optional() }),
  NodeProfile: NodeProfileOutputSchema,
  ResourceFlavor: ResourceFlavorSchema,
  Topology: TopologySchema,
};

/** Parses one desired child with the strict schema of its kind; an unknown kind fails the test. */
export function parseChild(child: { readonly kind: string }): unknown {
  const schema = CHILD_SCHEMAS[child.kind];
  if (schema === undefined) throw new Error(`no strict schema for child kind ${JSON.stringify(child.kind)}`);
  return schema.parse(child);
}

/** Every label we write must be accepted by the API server: key syntax, value syntax and length. */
function expectValidLabels(labels: Readonly<Record<string, string | null>> | undefined, where: string): void {
  for (const [key, value] of Object.entries(labels ?? {})) {
    expect(isLabelKey(key), `${where}: label key ${JSON.stringify(key)}`).toBe(true);
    expect(key, `${where}: label key built from a missing value`).not.toMatch(/undefined|null|NaN/);
    if (value !== null) expect(isLabelValue(value), `${where}: value of ${key}: ${JSON.stringify(value)}`).toBe(true);
  }
}

/** A composite (CompositeController) response: strict schema, strict children, valid names and labels, nothing to sanitise. */
export function parseCompositeResponse(response: unknown): CompositeSyncResponse {
  const parsed = CompositeSyncResponseSchema.parse(response);
  for (const child of parsed.children) {
    parseChild(child);
    const where = `${child.kind}/${child.metadata.name}`;
    expect(isDnsSubdomain(child.metadata.name), `${where}: name`).toBe(true);
    if (child.metadata.namespace !== undefined)
      expect(isDnsLabel(child.metadata.namespace), `${where}: namespace`).toBe(true);
    expectValidLabels(child.metadata['labels'] as Record<string, string> | undefined, where);
    const spec = child['spec'] as { nodeLabels?: Record<string, string> } | undefined;
    expectValidLabels(spec?.nodeLabels, `${where} spec.nodeLabels`);
  }
  expect(response, 'no null/undefined members').toStrictEqual(canonicalize(response));
  return parsed;
}

/** A decorator response: strict schema; `null` is allowed only as a label/annotation value. */
export function parseDecoratorResponse(response: unknown): DecoratorSyncResponse {
  const parsed = DecoratorSyncResponseSchema.parse(response);
  expectValidLabels(parsed.labels, 'labels');
  for (const attachment of parsed.attachments ?? []) parseChild(attachment);
  expect(response, 'no undefined members, null only for deletions').toStrictEqual(
    canonicalize(response, { keepNull: true }),
  );
  return parsed;
}

/** The response of an outcome that must have succeeded. */
export function expectOk<R>(outcome: SyncOutcome<R>): R {
  if (!outcome.ok) throw new Error(`expected ok, got refusal ${outcome.error.code}: ${outcome.error.message}`);
  return outcome.response;
}

/** The refusal of an outcome that must have been refused (429 + Retry-After at the server). */
export function expectRefusal<R>(outcome: SyncOutcome<R>): SyncRefusal {
  if (outcome.ok) throw new Error('expected a refusal, got ok');
  return outcome.error;
}

function ofKind<T>(response: CompositeSyncResponse, kind: string, schema: z.ZodType<T>): T[] {
  return response.children.filter((c) => c.kind === kind).map((c) => schema.parse(c));
}

/** The desired children of one kind, typed by their strict schema, in response order. */
export const flavorsOf = (r: CompositeSyncResponse): ResourceFlavor[] =>
  ofKind(r, 'ResourceFlavor', ResourceFlavorSchema);
export const instanceTypesOf = (r: CompositeSyncResponse): InstanceTypeOutput[] =>
  ofKind(r, 'InstanceType', InstanceTypeOutputSchema);
export const admissionChecksOf = (r: CompositeSyncResponse): AdmissionCheck[] =>
  ofKind(r, 'AdmissionCheck', AdmissionCheckSchema);
export const clusterQueuesOf = (r: CompositeSyncResponse): ClusterQueue[] =>
  ofKind(r, 'ClusterQueue', ClusterQueueSchema);
export const localQueuesOf = (r: CompositeSyncResponse): LocalQueue[] => ofKind(r, 'LocalQueue', LocalQueueSchema);

/** Names of the children of one kind, in response order. */
export function namesOfKind(response: CompositeSyncResponse, kind: string): string[] {
  return response.children.filter((c) => c.kind === kind).map((c) => c.metadata.name);
}

/** The SchedulingChain status of a response, parsed strictly. */
export function chainStatusOf(response: CompositeSyncResponse): SchedulingChainStatus {
  return SchedulingChainStatusSchema.parse(response.status);
}

/** The InstanceType status of a response, parsed strictly. */
export function instanceTypeStatusOf(response: CompositeSyncResponse): InstanceTypeStatus {
  return InstanceTypeStatusSchema.parse(response.status);
}

/** One condition of a status by type; fails the test when absent. */
export function conditionOf<C extends { readonly type: string }>(
  status: { readonly conditions: readonly C[] },
  type: string,
): C {
  const found = status.conditions.find((c) => c.type === type);
  if (found === undefined) throw new Error(`no ${type} condition in ${JSON.stringify(status.conditions)}`);
  return found;
}
