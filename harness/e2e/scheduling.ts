// What scenarios with the real kube-scheduler share: Nodes a scheduler accepts without a kubelet,
// Pods waited on until bound or unschedulable, and the scheduler's own words (the PodScheduled
// condition and the Pod's events) in every failure message.
import { waitFor, type KubeClient, type KubeObject } from './apply.js';
import { createNode } from './chain.js';

export const RESOURCE_API = 'resource.k8s.io/v1';
/** How long a bind may take: the scheduler retries an unschedulable Pod with backoff up to 10 s. */
export const BIND_MS = 60_000;

export type Condition = { type: string; status: string; reason?: string; message?: string };
export type Pod = KubeObject & {
  spec: { nodeName?: string; resourceClaims?: { name: string; resourceClaimTemplateName?: string }[] };
  status?: {
    phase?: string;
    conditions?: Condition[];
    resourceClaimStatuses?: { name: string; resourceClaimName?: string }[];
    extendedResourceClaimStatus?: { resourceClaimName: string };
  };
};
export type AllocatedDevice = {
  request: string;
  driver: string;
  pool: string;
  device: string;
  consumedCapacity?: Record<string, string>;
  shareID?: string;
};
export type ResourceClaim = KubeObject & {
  status?: {
    allocation?: { devices?: { results?: AllocatedDevice[] } };
    reservedFor?: { resource: string; name: string; uid: string }[];
  };
};

export interface NodeSpec {
  name: string;
  labels?: Record<string, string>;
  /** Default cpu 64, memory 512Gi, pods 110. */
  capacity?: Record<string, string>;
}

/**
 * Creates a Node as a kubelet would register it, then marks it Ready (`markNodeReady`).
 */
export async function createReadyNode(client: KubeClient, spec: NodeSpec): Promise<void> {
  const { name } = spec;
  const capacity = spec.capacity ?? { cpu: '64', memory: '512Gi', pods: '110' };
  await createNode(client, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        ...spec.labels,
      },
    },
    status: { capacity },
  });
  await markNodeReady(client, name);
}

/**
 * Stands in for the kubelet and the node lifecycle controller (neither runs here): Ready=True,
 * and the `node.kubernetes.io/not-ready` taint the API server's TaintNodesByCondition admission
 * puts on every new Node removed, or the scheduler would never bind to it (and the checker counts
 * no cards on it).
 */
export async function markNodeReady(client: KubeClient, name: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await client.mergePatch(
    'v1',
    'Node',
    name,
    {
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'e2e stand-in for the kubelet',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
    undefined,
    'status',
  );
  const node = await client.get<KubeObject & { spec?: { taints?: { key: string }[] } }>('v1', 'Node', name);
  const taints = node?.spec?.taints ?? [];
  if (taints.some((t) => t.key === 'node.kubernetes.io/not-ready'))
    await client.mergePatch('v1', 'Node', name, {
      spec: { taints: taints.filter((t) => t.key !== 'node.kubernetes.io/not-ready') },
    });
}

/** A pause Pod (never runs: no kubelet) with the given requests and claims. */
export function pod(
  name: string,
  namespace: string,
  options: {
    requests?: Record<string, string>;
    claims?: { name: string; template: string }[];
    nodeSelector?: Record<string, string>;
  } = {},
): KubeObject {
  const claims = options.claims ?? [];
  const requests = options.requests ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'e2e-dra' } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 0,
      ...(options.nodeSelector ? { nodeSelector: options.nodeSelector } : {}),
      ...(claims.length > 0
        ? { resourceClaims: claims.map((c) => ({ name: c.name, resourceClaimTemplateName: c.template })) }
        : {}),
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          resources: {
            ...(Object.keys(requests).length > 0 ? { requests, limits: requests } : {}),
            ...(claims.length > 0 ? { claims: claims.map((c) => ({ name: c.name })) } : {}),
          },
        },
      ],
    },
  };
}

/** The events of one object, oldest first, as `reason: message` lines. */
export async function eventsOf(client: KubeClient, namespace: string, name: string): Promise<string[]> {
  const events = await client.list<KubeObject & { reason?: string; message?: string; count?: number }>('v1', 'Event', {
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return events.map((e) => `${e.reason ?? '?'}: ${e.message ?? ''}${(e.count ?? 1) > 1 ? ` (×${e.count})` : ''}`);
}

/** What the scheduler says about a Pod: node, PodScheduled condition, events. For failure messages. */
export async function describePod(client: KubeClient, namespace: string, name: string): Promise<string> {
  const current = await client.get<Pod>('v1', 'Pod', name, namespace);
  if (!current) return `Pod ${namespace}/${name} does not exist`;
  const scheduled = current.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const events = await eventsOf(client, namespace, name);
  return [
    `Pod ${namespace}/${name}: nodeName=${current.spec.nodeName ?? '(none)'}`,
    `PodScheduled=${scheduled ? `${scheduled.status} ${scheduled.reason ?? ''} "${scheduled.message ?? ''}"` : '(none)'}`,
    `claims=${JSON.stringify(current.status?.resourceClaimStatuses ?? [])}`,
    `events:\n    ${events.join('\n    ') || '(none)'}`,
  ].join('; ');
}

/** Waits until the scheduler has bound the Pod; returns it. Fails with what the scheduler said. */
export async function waitBound(
  client: KubeClient,
  namespace: string,
  name: string,
  timeoutMs = BIND_MS,
): Promise<Pod> {
  try {
    return await waitFor(
      async () => {
        const current = await client.get<Pod>('v1', 'Pod', name, namespace);
        const scheduled = current?.status?.conditions?.find((c) => c.type === 'PodScheduled');
        return current?.spec.nodeName && scheduled?.status === 'True' ? current : undefined;
      },
      timeoutMs,
      `Pod ${namespace}/${name} bound by kube-scheduler`,
      500,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await describePod(client, namespace, name)}`, { cause: error });
  }
}

/**
 * Waits until the scheduler has marked the Pod unschedulable (PodScheduled=False, reason
 * Unschedulable), then checks it stays unbound for `holdMs`; returns the condition's message.
 */
export async function waitUnschedulable(
  client: KubeClient,
  namespace: string,
  name: string,
  holdMs = 3000,
  timeoutMs = BIND_MS,
): Promise<string> {
  let message: string;
  try {
    message = await waitFor(
      async () => {
        const current = await client.get<Pod>('v1', 'Pod', name, namespace);
        if (current?.spec.nodeName) throw new Error(`bound to ${current.spec.nodeName}`);
        const scheduled = current?.status?.conditions?.find((c) => c.type === 'PodScheduled');
        return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable'
          ? (scheduled.message ?? '')
          : undefined;
      },
      timeoutMs,
      `Pod ${namespace}/${name} marked Unschedulable by kube-scheduler`,
      500,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${await describePod(client, namespace, name)}`, { cause: error });
  }
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  const after = await client.get<Pod>('v1', 'Pod', name, namespace);
  if (after?.spec.nodeName)
    throw new Error(`Pod ${namespace}/${name} was bound after all: ${await describePod(client, namespace, name)}`);
  return message;
}

/** The ResourceClaims of a bound or pending Pod (from templates and the extended-resource path). */
export async function claimsOf(client: KubeClient, current: Pod): Promise<ResourceClaim[]> {
  const namespace = current.metadata.namespace as string;
  const names = [
    ...(current.status?.resourceClaimStatuses ?? []).flatMap((s) => (s.resourceClaimName ? [s.resourceClaimName] : [])),
    ...(current.status?.extendedResourceClaimStatus
      ? [current.status.extendedResourceClaimStatus.resourceClaimName]
      : []),
  ];
  const claims: ResourceClaim[] = [];
  for (const name of names) {
    const claim = await client.get<ResourceClaim>(RESOURCE_API, 'ResourceClaim', name, namespace);
    if (claim) claims.push(claim);
  }
  return claims;
}

/** The devices allocated to a claim. */
export function allocated(claim: ResourceClaim): AllocatedDevice[] {
  return claim.status?.allocation?.devices?.results ?? [];
}

/** Deletes a Pod at once (no kubelet acknowledges a graceful delete) and waits until it is gone. */
export async function deletePodNow(client: KubeClient, namespace: string, name: string): Promise<void> {
  await client.delete('v1', 'Pod', name, namespace, { gracePeriodSeconds: 0 });
  await waitFor(
    async () => (await client.get('v1', 'Pod', name, namespace)) === undefined,
    30_000,
    `Pod ${namespace}/${name} deleted`,
  );
}

export interface ClaimTemplateOptions {
  /** Default `default`. */
  namespace?: string;
  /** Devices of the one request (ExactCount); default 1. */
  count?: number;
  /** CEL selector expressions on the device. */
  cel?: readonly string[];
  /** Capacity requests of a shared device, e.g. `{ memory: '10Gi' }`. */
  capacity?: Readonly<Record<string, string>>;
}

/** A ResourceClaimTemplate with one request, `cards`, of `count` devices of `deviceClassName`. */
export function claimTemplate(name: string, deviceClassName: string, options: ClaimTemplateOptions = {}): KubeObject {
  return {
    apiVersion: RESOURCE_API,
    kind: 'ResourceClaimTemplate',
    metadata: { name, namespace: options.namespace ?? 'default' },
    spec: {
      spec: {
        devices: {
          requests: [
            {
              name: 'cards',
              exactly: {
                deviceClassName,
                allocationMode: 'ExactCount',
                count: options.count ?? 1,
                ...(options.cel ? { selectors: options.cel.map((expression) => ({ cel: { expression } })) } : {}),
                ...(options.capacity ? { capacity: { requests: options.capacity } } : {}),
              },
            },
          ],
        },
      },
    },
  };
}

/**
 * A suspended Job through the LocalQueue `queue` whose one Pod uses a claim from `template` and
 * requests nothing else (a device ClusterQueue covers only its cards: cpu would be unavailable).
 */
export function claimJob(name: string, queue: string, template: string, namespace = 'default'): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace, labels: { 'kueue.x-k8s.io/queue-name': queue } },
    spec: {
      suspend: true,
      parallelism: 1,
      completions: 1,
      template: {
        spec: {
          restartPolicy: 'Never',
          resourceClaims: [{ name: 'cards', resourceClaimTemplateName: template }],
          containers: [
            { name: 'main', image: 'registry.k8s.io/pause:3.10', resources: { claims: [{ name: 'cards' }] } },
          ],
        },
      },
    },
  };
}
