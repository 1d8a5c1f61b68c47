// Kueue Workloads as the DRA scenarios read them: the Workload of a Job, what Kueue and the
// admission check said about it, and waiting for admission with that in the failure message.
import { waitFor, type KubeClient, type KubeObject } from './apply.js';
import { KUEUE_API } from './kueue.js';

export type WorkloadCondition = { type: string; status: string; reason?: string; message?: string };
export type CheckState = { name: string; state: string; message?: string };
export type Workload = KubeObject & {
  spec: { queueName?: string; podSets: { name: string; count: number }[] };
  status?: {
    conditions?: WorkloadCondition[];
    admission?: {
      clusterQueue: string;
      podSetAssignments: { name: string; flavors?: Record<string, string>; resourceUsage?: Record<string, string> }[];
    };
    admissionChecks?: CheckState[];
  };
};
export type SuspendedJob = KubeObject & { spec: { suspend?: boolean } };

export function conditionOf(workload: Workload | undefined, type: string): WorkloadCondition | undefined {
  return workload?.status?.conditions?.find((c) => c.type === type);
}

export async function workloadOfJob(client: KubeClient, namespace: string, job: string): Promise<Workload | undefined> {
  const owner = await client.get('batch/v1', 'Job', job, namespace);
  if (!owner) return undefined;
  return (await client.list<Workload>(KUEUE_API, 'Workload', { namespace })).find((w) =>
    w.metadata.ownerReferences?.some((o) => o['uid'] === owner.metadata.uid),
  );
}

/** Kueue's conditions and every admission check's state and message, on one line. */
export function describeWorkload(workload: Workload | undefined): string {
  if (!workload) return 'no Workload yet';
  const conditions = (workload.status?.conditions ?? [])
    .map((c) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}${c.message ? ` "${c.message}"` : ''}`)
    .join(' ');
  const checks = (workload.status?.admissionChecks ?? [])
    .map((c) => `${c.name}:${c.state} "${c.message ?? ''}"`)
    .join(' ');
  const usage = JSON.stringify(workload.status?.admission?.podSetAssignments.map((a) => a.resourceUsage) ?? null);
  return `Workload ${workload.metadata.name}: ${conditions || 'no conditions'}; usage ${usage}${checks ? `; checks ${checks}` : ''}`;
}

/**
 * Waits until `ok` holds for the Job's Workload and the Job (e.g. admitted and unsuspended);
 * fails with what Kueue and the checks said last.
 */
export async function waitWorkload(
  client: KubeClient,
  namespace: string,
  job: string,
  ok: (workload: Workload, live: SuspendedJob) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<Workload> {
  let last: Workload | undefined;
  let lastJob: SuspendedJob | undefined;
  try {
    return await waitFor(
      async () => {
        last = await workloadOfJob(client, namespace, job);
        lastJob = await client.get<SuspendedJob>('batch/v1', 'Job', job, namespace);
        return last && lastJob && ok(last, lastJob) ? last : undefined;
      },
      timeoutMs,
      `Job ${namespace}/${job}: ${what}`,
      500,
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}\n${describeWorkload(last)}; job suspend=${String(lastJob?.spec.suspend)}`,
      { cause: error },
    );
  }
}
